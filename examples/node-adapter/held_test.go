package nodeadapter_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// heldChecks are the checks that compare what an instance holds with what
// it was given, or with what it held before.
var heldChecks = []string{conformance.CaseCanonicalHistory, conformance.CaseRebuild, conformance.CheckInOrder,
	conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckSourceRevision}

// runHeld runs heldChecks against the Node.js adapter started with args,
// one process serving every instance: the projection check creates an
// instance per history, and a failing history's shrink one per try, which
// a process each would make the cost of the run.
func runHeld(t *testing.T, args ...string) conformance.RunReport {
	t.Helper()
	return conformance.RunChecks(context.Background(), sharedNode(t, args...), conformance.WithChecks(heldChecks...), conformance.WithSeed(7),
		conformance.WithCallTimeout(time.Minute))
}

// A runtime holding histories in its own form, as Pi does — every message
// under the pi-session provenance source, no unknown members — and
// declaring that it cannot hold images passes, with those limits shown.
func TestNodeAdapterHoldingItsOwnFormPassesWithLimits(t *testing.T) {
	rep := runHeld(t, "--provenance", "pi-session", "--drop-unknown", "--declare", "image")
	for _, r := range rep.Checks {
		if r.Status != conformance.StatusPass {
			t.Errorf("%s: %s %+v", r.ID, r.Status, r.Failure)
		}
	}
	if got := conformance.LimitNames(rep.Limits); got != "image, unknown-members-dropped, provenance-source" {
		t.Fatalf("limits %q (%+v)", got, rep.Limits)
	}
}

// A content defect reported as if it were a holding difference still
// fails: text held upper-cased is no unknown member dropped.
func TestNodeAdapterDefectBehindAHoldingDifferenceFails(t *testing.T) {
	rep := runHeld(t, "--drop-unknown", "--defect", "upper-text")
	var failed []string
	for _, r := range rep.Checks {
		if r.Status != conformance.StatusPass {
			failed = append(failed, r.ID)
			if !strings.Contains(r.Failure.Rule+r.Failure.Actual, "holding differences") && r.ID != conformance.CheckInOrder && r.ID != conformance.CheckSourceAppend {
				t.Errorf("%s: %+v, want the held history's rule", r.ID, r.Failure)
			}
		}
	}
	// source-append sees the appended message's text upper-cased too.
	want := []string{conformance.CaseCanonicalHistory, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend}
	if !slices.Equal(failed, want) {
		t.Fatalf("failed %q, want %q", failed, want)
	}
}
