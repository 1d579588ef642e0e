package spec

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
	"pgregory.net/rapid"
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
	cfg := newConfig(memadapter.ConformanceFactory(), []conformance.Option{
		conformance.WithName("named"),
		conformance.WithHistories(7),
		conformance.WithDiagnosticsLimit(1),
		conformance.WithRequiredCapabilities(contract.CapabilityEmbeddings),
		conformance.WithCallTimeout(time.Minute),
	}, "")
	if cfg.name != "named" || cfg.settings.Histories != 7 {
		t.Fatalf("name %q, histories %d", cfg.name, cfg.settings.Histories)
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
	narrow := newConfig(cfg.factory, []conformance.Option{conformance.WithoutFamilies(gen.FamilyMultiResult, gen.FamilyImage)}, "")
	for seed := range 300 {
		fams := gen.FamiliesOf(narrow.histories(conformance.FixtureRuntimeID, conformance.FixtureSessionID).Example(seed))
		if slices.Contains(fams, gen.FamilyMultiResult) || slices.Contains(fams, gen.FamilyImage) {
			t.Fatalf("WithoutFamilies drew a left-out family: %q", fams)
		}
	}
}

// WithStrictPrivacy reaches the privacy checks through the suite's
// options: the adapter built on the TypeScript kit's engine passes
// privacy-engine with the limit member-name-floor, and fails it strict.
func TestStrictPrivacyReachesTheChecks(t *testing.T) {
	i := slices.IndexFunc(mutants.Catalogue(), func(m mutants.Mutant) bool { return m.Name == "upstream-privacy-engine" })
	f := mutants.Catalogue()[i].Factory(reference.NewConformanceFactory())
	c, _ := conformance.CheckByID(conformance.CheckPrivacyEngine)
	loose := newConfig(f, []conformance.Option{conformance.WithSeed(3)}, "")
	if r := c.Run(context.Background(), f, loose.checkOpts...); r.Status != conformance.StatusPass || len(r.Limits) != 1 || r.Limits[0].Name() != conformance.LimitMemberNameFloor {
		t.Errorf("privacy-engine: %s, limits %+v, %v", r.Status, r.Limits, r.Failure)
	}
	strict := newConfig(f, []conformance.Option{conformance.WithSeed(3), conformance.WithStrictPrivacy()}, "")
	if !strict.settings.StrictPrivacy || loose.settings.StrictPrivacy {
		t.Fatalf("StrictPrivacy %t with the option, %t without", strict.settings.StrictPrivacy, loose.settings.StrictPrivacy)
	}
	if r := c.Run(context.Background(), f, strict.checkOpts...); r.Status != conformance.StatusFail {
		t.Errorf("strict privacy-engine: %s", r.Status)
	}
}

// The environment variable sets the property spec's draws unless an
// option says otherwise.
func TestPropertyChecksEnv(t *testing.T) {
	t.Setenv(PropertyChecksEnv, "9")
	f := memadapter.ConformanceFactory()
	if n := newConfig(f, nil, "").settings.Histories; n != 9 {
		t.Errorf("histories under %s=9: %d", PropertyChecksEnv, n)
	}
	if n := newConfig(f, []conformance.Option{conformance.WithHistories(3)}, "").settings.Histories; n != 3 {
		t.Errorf("histories under %s=9 and WithHistories(3): %d", PropertyChecksEnv, n)
	}
}

// A rerun command names the seed exactly as the failure it replays does,
// also when the seed's first hex digit is 0 (a seed written "%#x" dropped
// it, and a pasted rerun's failure then named another-looking seed).
func TestSeedSettingNamesTheFailuresSeed(t *testing.T) {
	const seed = 0x2669ea700e4594c // 15 hex digits
	c, _ := conformance.CheckByID(conformance.CheckPrivacyProbes)
	r := c.Run(context.Background(), mutants.Catalogue()[slices.IndexFunc(mutants.Catalogue(), func(m mutants.Mutant) bool {
		return slices.Contains(m.Fails, conformance.CheckPrivacyProbes)
	})].Factory(reference.NewConformanceFactory()), conformance.WithSeed(seed))
	if r.Failure == nil {
		t.Fatal("the privacy mutant passed privacy-probes")
	}
	named := strings.TrimPrefix(seedSetting(r.Seed), SeedEnv+"=")
	if !strings.Contains(r.Failure.Actual, "seed "+named) {
		t.Fatalf("rerun setting %s; the failure says %q", seedSetting(r.Seed), r.Failure.Actual)
	}
}

// Fuzz draws no history of a family the instance declares it cannot hold,
// so a runtime honest about a limit passes: memadapter holding thinking
// blocks as text and declaring thinking.
func TestFuzzDrawsNoDeclaredFamily(t *testing.T) {
	base := memadapter.ConformanceFactory()
	thinkingAsText := conformance.NewFactory("thinking-as-text", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		for i := range setup.Fixture.Messages {
			for k, b := range setup.Fixture.Messages[i].Blocks {
				if th, ok := b.(*contract.ThinkingBlock); ok {
					setup.Fixture.Messages[i].Blocks[k] = &contract.TextBlock{Text: th.Thinking}
				}
			}
		}
		inst, err := base.Create(ctx, setup)
		inst.Limits = []gen.Family{gen.FamilyThinking}
		return inst, err
	})
	rapid.Check(t, projectionFuzzer(t, newConfig(thinkingAsText, nil, "")))
}

// ShardEnv makes the suite a shard of a campaign, unless an option says
// otherwise; a rerun command then sets it too, and a value naming no shard
// panics rather than running the whole campaign in every job.
func TestShardEnv(t *testing.T) {
	f := reference.NewConformanceFactory()
	t.Setenv(ShardEnv, "2/3")
	cfg := newConfig(f, nil, "")
	if s := cfg.settings; s.Shard != 2 || s.Shards != 3 || cfg.withShardEnv("ADAPTERKIT_SEED=0x1") != "ADAPTERKIT_SHARD=2/3 ADAPTERKIT_SEED=0x1" {
		t.Fatalf("shard %d/%d, rerun env %q", s.Shard, s.Shards, cfg.withShardEnv("ADAPTERKIT_SEED=0x1"))
	}
	cfg = newConfig(f, []conformance.Option{conformance.WithShard(1, 4)}, "")
	if s := cfg.settings; s.Shard != 1 || s.Shards != 4 || cfg.withShardEnv("") != "" {
		t.Fatalf("an option's shard: %d/%d, rerun env %q", s.Shard, s.Shards, cfg.withShardEnv(""))
	}
	for _, bad := range []string{"4/3", "0/3", "3", "a/b"} {
		t.Setenv(ShardEnv, bad)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s=%s did not panic", ShardEnv, bad)
				}
			}()
			newConfig(f, nil, "")
		}()
	}
}
