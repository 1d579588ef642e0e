package nodeadapter_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// heldChecks are the checks that compare what an instance holds with what
// it was given, or with what it held before.
var heldChecks = []string{conformance.CaseCanonicalHistory, conformance.CaseRebuild, conformance.CheckInOrder,
	conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckSourceRevision}

// runHeld runs heldChecks against the Node.js adapter started with args.
func runHeld(t *testing.T, args ...string) conformance.RunReport {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	factory := bridge.NewFactory(bridge.ExecConfig{Path: node, Args: append([]string{"adapter.mjs"}, args...), Stderr: os.Stderr,
		Options: bridge.Options{CallTimeout: time.Minute}})
	return conformance.RunChecks(context.Background(), factory, conformance.WithChecks(heldChecks...), conformance.WithSeed(7),
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
