package nodeadapter_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/spec"
)

// stressEnv, set to 1, runs the long forms of the package's tests (as
// .ci/run does).
const stressEnv = "ADAPTERKIT_STRESS"

// stress reports whether the long forms run.
func stress() bool { return os.Getenv(stressEnv) == "1" }

// sampleModelSteps is how many operations the suite's model spec runs in
// the default form of TestNodeAdapterPassesTheSuite: one short sequence of
// drawn operations, on a seed of its own each run. A run's first long
// sequence opens by crossing the bounds — a history past 10,000 messages,
// a diagnostics flood, a run of completions — which over the bridge costs
// the node process seconds of CPU; the long form and .ci/run's conform of
// the adapter take the default steps, the opening included.
const sampleModelSteps = 12

// The Node.js adapter passes the whole Ginkgo suite through the bridge:
// the seven cases, the extended checks — with its embedding port, so the
// embedding check runs, its texts split into batches of two — and the
// property check. One process serves every instance, which the protocol
// allows; the bridge package's TestNodeExampleAdapter, the CI script's
// conform --exec runs and, under ADAPTERKIT_STRESS=1,
// TestNodeAdapterRunsTheSourceAndPrivacyChecks start one process per
// instance, as adopters do. By default every spec
// runs, the model's on a sample of sampleModelSteps operations; under
// ADAPTERKIT_STRESS=1 the model takes its default steps.
func TestNodeAdapterPassesTheSuite(t *testing.T) {
	t.Parallel()
	var opts []conformance.Option
	if !stress() {
		opts = append(opts, conformance.WithModelSteps(sampleModelSteps))
	}
	spec.Run(t, sharedNode(t, "--embeddings"), opts...)
}

// sharedNode starts one Node.js adapter process with args for the test and
// returns a factory creating every instance in it.
func sharedNode(t *testing.T, args ...string) conformance.Factory {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	cmd := exec.CommandContext(ctx, node, append([]string{"adapter.mjs"}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	client := bridge.NewClient(stdout, stdin, bridge.Options{CallTimeout: time.Minute})
	t.Cleanup(func() {
		defer cancel()
		if err := client.Close(); err != nil {
			t.Errorf("closing the shared adapter process: %v", err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("the shared adapter process: %v", err)
		}
	})
	if _, err := client.Hello(ctx); err != nil {
		t.Fatal(err)
	}
	return conformance.NewFactory("node-example-adapter", client.Create)
}
