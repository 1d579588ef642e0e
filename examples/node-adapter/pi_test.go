package nodeadapter_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// piLimits is the verdict's list of limits for a runtime holding histories
// as DS4's Pi runtime does: the families it refuses, then every holding
// difference.
var piLimits = "multi-result, result-with-text, opaque-provider, created-at-out-of-range, unknown-members-dropped, reference-as-opaque, " +
	"tool-text-as-custom, provenance-source, runtime-id-dropped, original-role-rewritten, token-estimate-derived, atomic-derived, " +
	"created-at-assigned, created-at-whole-ms, assistant-model-filled, non-assistant-model-dropped"

// piHistories is how many generated histories the Pi profile's tests
// draw by default, and piStressHistories how many under
// ADAPTERKIT_STRESS=1, the Pi profile's proof in .ci/run. The default run
// shows every limit but piLateLimits and fails every slip but
// piLateSlips: those first show in a history after the 20th drawn from
// seed 7 (created-at-whole-ms after the 50th, flags.synthetic after the
// 40th: the generator draws larger histories later in a run), and drawing
// 60 would double the tests' CPU.
const (
	piHistories       = 20
	piStressHistories = 200
)

// piLateLimits and piLateSlips are the limits and slips the Pi tests'
// default run does not reach (see piHistories).
var (
	piLateLimits = []string{"opaque-provider", "created-at-whole-ms"}
	piLateSlips  = []string{"held flags.synthetic in "}
)

// piHistoryCount is how many histories the Pi tests draw in this run.
func piHistoryCount() int {
	if stress() {
		return piStressHistories
	}
	return piHistories
}

// wantPiLimits is the verdict's list of limits the Pi profile must show
// in this run: piLimits, without piLateLimits by default.
func wantPiLimits() string {
	if stress() {
		return piLimits
	}
	names := strings.Split(piLimits, ", ")
	names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(piLateLimits, n) })
	return strings.Join(names, ", ")
}

// The Pi profile holds every history as Pi does and refuses what Pi
// cannot hold: over piHistories generated histories every check passes,
// and the verdict lists every refused family and every holding difference
// they reach, each counted (under ADAPTERKIT_STRESS=1, over 200, all of
// piLimits). The model check, which shows no limit the others do not,
// runs on it only under ADAPTERKIT_STRESS=1: over the bridge it costs as
// much as the rest.
func TestNodePiProfilePassesWithItsLimits(t *testing.T) {
	t.Parallel()
	opts := []conformance.Option{conformance.WithSeed(7), conformance.WithHistories(piHistoryCount()), conformance.WithCallTimeout(time.Minute)}
	if !stress() {
		var ids []string
		for _, c := range conformance.Checks() {
			if c.ID != conformance.CheckModel {
				ids = append(ids, c.ID)
			}
		}
		opts = append(opts, conformance.WithChecks(ids...))
	}
	rep := conformance.RunChecks(context.Background(), sharedNode(t, "--profile", "pi"), opts...)
	for _, r := range rep.Checks {
		if !r.Passed() {
			t.Errorf("%s: %s %+v", r.ID, r.Status, r.Failure)
		}
	}
	if got, want := conformance.LimitNames(rep.Limits), wantPiLimits(); got != want {
		t.Errorf("limits %q\nwant   %q", got, want)
	}
	for _, l := range rep.Limits {
		if l.Count == 0 {
			t.Errorf("limit %s counted no history", l.Name())
		}
	}
}

// The Pi converter's slips fail, each named: empty strings dropped and the
// flags pinned, localOnly and synthetic lost. By default over piHistories
// generated histories, which fail every slip but piLateSlips; under
// ADAPTERKIT_STRESS=1 over 200, which fail every one.
func TestNodePiSlipsFailNamingEachSlip(t *testing.T) {
	t.Parallel()
	n := piHistoryCount()
	rep := conformance.RunChecks(context.Background(), sharedNode(t, "--profile", "pi-slips"), conformance.WithSeed(7),
		conformance.WithHistories(n), conformance.WithChecks(conformance.CheckProjection), conformance.WithCallTimeout(time.Minute))
	r := rep.Checks[0]
	if r.Status != conformance.StatusFail {
		t.Fatalf("projection %s: the slips pass", r.Status)
	}
	for _, want := range []string{fmt.Sprintf("of %d histories (%d generated, 1 long) failed: ", n+1, n), "held flags.localOnly in ", "held flags.pinned in ",
		"held flags.synthetic in ", "held blocks[].data in ", "held provider in "} {
		if !stress() && slices.Contains(piLateSlips, want) {
			continue
		}
		if !strings.Contains(r.Failure.Actual, want) {
			t.Errorf("the failure does not say %q:\n%s", want, r.Failure.Actual)
		}
	}
	if !slices.ContainsFunc(rep.Limits, func(l conformance.Limit) bool { return l.Family == gen.FamilyMultiResult && l.Count > 0 }) {
		t.Errorf("the failing run does not show the refused families: %+v", rep.Limits)
	}
}

// A runtime implementing only the history methods, as the Pi adapter does,
// passes no check: every check it cannot serve fails or errors naming the
// missing method (or the embedding port it declares but does not expose),
// and the checks it could serve say they passed before the instance could
// not be shut down.
func TestNodeHistoryOnlyAdapterPassesNothing(t *testing.T) {
	t.Parallel()
	rep := conformance.RunChecks(context.Background(), sharedNode(t, "--profile", "pi-surface"), conformance.WithSeed(7),
		conformance.WithCallTimeout(time.Minute))
	missing := regexp.MustCompile(`(Shutdown|Complete|EnforcePrivacy|Diagnostics) is not implemented: bridge: (shutdown|complete|enforcePrivacy|diagnostics): unknown-method`)
	named := map[string]bool{}
	for _, r := range rep.Checks {
		switch {
		case r.Status == conformance.StatusPass:
			t.Errorf("%s passed", r.ID)
		case r.Status == conformance.StatusSkip:
			if r.Capability == "" {
				t.Errorf("%s skipped: %s", r.ID, r.SkipReason)
			}
		case r.ID == conformance.CheckEmbeddingPort:
			if !strings.Contains(r.Failure.Rule, "exposes its port") {
				t.Errorf("%s: %+v, want the missing embedding port", r.ID, r.Failure)
			}
		default:
			m := missing.FindStringSubmatch(r.Failure.Actual)
			if m == nil {
				t.Errorf("%s: %+v names no missing method", r.ID, r.Failure)
				continue
			}
			named[m[1]] = true
			if strings.Contains(r.Failure.Actual, "adapter-closed") {
				t.Errorf("%s reads as adapter-closed: %s", r.ID, r.Failure.Actual)
			}
		}
	}
	for _, m := range []string{"Shutdown", "Complete", "EnforcePrivacy", "Diagnostics"} {
		if !named[m] {
			t.Errorf("no check names the missing %s", m)
		}
	}
	if rep.Passed {
		t.Error("the run passed")
	}
}
