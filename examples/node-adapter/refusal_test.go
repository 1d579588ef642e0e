package nodeadapter_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

const refusalReason = "tool message with two results"

// refusalHistories is how many histories the refusal tests draw: by
// default the projection check's default, 20 (seven of which hold a tool
// message with two results); under ADAPTERKIT_STRESS=1 40, whose draws
// include longer histories that cost the node process seconds.
func refusalHistories() int {
	if stress() {
		return 40
	}
	return conformance.DefaultHistories
}

// runProjection runs the projection check against the Node.js adapter
// started with args, over n histories generated from a fixed seed. One
// process serves every instance (the protocol names the instance of each
// call), so the histories cost no process start each.
func runProjection(t *testing.T, n int, args ...string) conformance.Result {
	t.Helper()
	check, ok := conformance.CheckByID(conformance.CheckProjection)
	if !ok {
		t.Fatalf("no check %q", conformance.CheckProjection)
	}
	return check.Run(context.Background(), sharedNode(t, args...), conformance.WithSeed(7), conformance.WithHistories(n),
		conformance.WithCallTimeout(time.Minute))
}

// With --refuse multi-result the adapter refuses every generated history
// (refusalHistories of them) holding a tool message with two results, for
// that family; the projection
// check counts the refusals as a limit, checks the isolation histories of
// multi-result are refused too, and passes, since fewer than half of the
// histories were refused.
func TestNodeAdapterRefusalsAreCounted(t *testing.T) {
	t.Parallel()
	h := refusalHistories()
	r := runProjection(t, h, "--refuse", "multi-result")
	if r.Status != conformance.StatusPass {
		t.Fatalf("projection %s: %+v", r.Status, r.Failure)
	}
	if len(r.Limits) != 1 || r.Limits[0].Family != gen.FamilyMultiResult || r.Limits[0].Reason != "refused: "+refusalReason {
		t.Fatalf("limits %+v, want multi-result refused: %s", r.Limits, refusalReason)
	}
	n := r.Limits[0].Count
	if n == 0 || 2*n > h {
		t.Fatalf("%d of %d histories refused, want some, at most half", n, h)
	}
	// One long history holding every family the others held joins the
	// h drawn.
	want := fmt.Sprintf("%d histories (%d generated, 1 long): %d projected faithfully, %d refused: %d multi-result; 3 isolation histories refused", h+1, h, h+1-n, n, n)
	if r.Note != want {
		t.Fatalf("note %q, want %q", r.Note, want)
	}
}

// Without the flag the same histories are all projected.
func TestNodeAdapterRefusesNothingByDefault(t *testing.T) {
	t.Parallel()
	h := refusalHistories()
	r := runProjection(t, h)
	if r.Status != conformance.StatusPass {
		t.Fatalf("projection %s: %+v", r.Status, r.Failure)
	}
	if len(r.Limits) != 0 || strings.Contains(r.Note, "refused") {
		t.Fatalf("limits %v, note %q: want none", r.Limits, r.Note)
	}
	if r.Note != fmt.Sprintf("%d histories (%d generated, 1 long): %d projected faithfully", h+1, h, h+1) {
		t.Fatalf("note %q", r.Note)
	}
}

// The checks the adapter's create result opens — the source hook and the
// declared privacy configuration — run and pass rather than skip, and a
// live completion after cancelled ones reaches the transport once. The
// adapter's engine keeps the Go kit's member-name rule, so the privacy
// checks pass it under strict privacy, with no limit. By default one
// process serves every instance; under ADAPTERKIT_STRESS=1 each instance
// has a process of its own, as adopters run it (as does the bridge
// package's TestNodeExampleAdapter for the seven cases).
func TestNodeAdapterRunsTheSourceAndPrivacyChecks(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	ids := []string{conformance.CheckSourceAppend, conformance.CheckSourceRevision, conformance.CheckSourceCorrupt,
		conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckCancellation}
	var factory conformance.Factory
	if stress() {
		factory = bridge.NewFactory(bridge.ExecConfig{Path: node, Args: []string{"adapter.mjs"}, Stderr: os.Stderr,
			Options: bridge.Options{CallTimeout: time.Minute}})
	} else {
		factory = sharedNode(t)
	}
	report := conformance.RunChecks(context.Background(), factory, conformance.WithChecks(ids...), conformance.WithCallTimeout(time.Minute),
		conformance.WithStrictPrivacy())
	if len(report.Checks) != len(ids) || len(report.Problems) != 0 {
		t.Fatalf("%d checks ran, problems %v; want %d", len(report.Checks), report.Problems, len(ids))
	}
	for _, r := range report.Checks {
		if r.Status != conformance.StatusPass || len(r.Limits) != 0 {
			t.Errorf("%s: %s %s %+v, limits %+v", r.ID, r.Status, r.SkipReason, r.Failure, r.Limits)
		}
	}
}
