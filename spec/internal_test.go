package spec

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/contract/gen"
)

func TestSetChecksRespectsTheUser(t *testing.T) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		t.Fatal("rapid registers -rapid.checks")
	}
	before := f.Value.String()
	restore := setChecks(7)
	if userChecks() {
		if f.Value.String() != before {
			t.Fatal("an explicit -rapid.checks was overridden")
		}
	} else if f.Value.String() != "7" {
		t.Fatalf("checks = %s, want 7", f.Value.String())
	}
	restore()
	if f.Value.String() != before {
		t.Fatalf("checks not restored: %s, want %s", f.Value.String(), before)
	}
}

// The options reach the checks they configure.
func TestOptionsReachTheChecks(t *testing.T) {
	ctx := context.Background()
	drawn := false
	cfg := newConfig(memadapter.ConformanceFactory(false), []Option{
		WithName("named"),
		WithPropertyChecks(7),
		WithHistories(func(runtimeID, sessionID string) *rapid.Generator[[]contract.Message] {
			drawn = true
			return gen.History(runtimeID, sessionID)
		}),
		WithDiagnosticsLimit(1),
		WithRequiredCapabilities(contract.CapabilityEmbeddings),
		WithCallTimeout(time.Minute),
	})
	if cfg.name != "named" || cfg.propertyChecks != 7 {
		t.Fatalf("name %q, property checks %d", cfg.name, cfg.propertyChecks)
	}
	if cfg.histories(conformance.FixtureRuntimeID, conformance.FixtureSessionID); !drawn {
		t.Fatal("WithHistories did not replace the generator")
	}
	for id, want := range map[string]string{
		conformance.CheckBoundedDiagnostics: "at most 1 diagnostics",
		conformance.CheckEmbeddingPort:      "required",
	} {
		c, _ := conformance.CheckByID(id)
		r := c.Run(ctx, cfg.factory, cfg.checkOpts...)
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Expected, want) {
			t.Errorf("%s: %s %+v, want a failure expecting %q", id, r.Status, r.Failure, want)
		}
	}
	c, _ := conformance.CheckByID(conformance.CaseLifecycle)
	if r := c.Run(ctx, cfg.factory, cfg.checkOpts...); r.Status != conformance.StatusPass {
		t.Errorf("lifecycle under WithCallTimeout(time.Minute): %s %v", r.Status, r.Failure)
	}
	narrow := newConfig(cfg.factory, []Option{WithoutFamilies(gen.FamilyMultiResult, gen.FamilyImage)})
	for seed := range 300 {
		fams := gen.FamiliesOf(narrow.histories(conformance.FixtureRuntimeID, conformance.FixtureSessionID).Example(seed))
		if slices.Contains(fams, gen.FamilyMultiResult) || slices.Contains(fams, gen.FamilyImage) {
			t.Fatalf("WithoutFamilies drew a left-out family: %q", fams)
		}
	}
	if newConfig(cfg.factory, []Option{WithPropertyChecks(0)}).propertyChecks != 1 {
		t.Error("WithPropertyChecks(0) does not draw at least one history")
	}
}
