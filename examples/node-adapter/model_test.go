package nodeadapter_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// modelStepsEnv, set to a number of operations, runs the model check that
// long on the Node.js adapter, every instance in one process; the suite's
// own run (TestNodeAdapterPassesTheSuite) takes the default steps.
const modelStepsEnv = "ADAPTERKIT_MODEL_STEPS"

// The Node.js adapter answers long random sequences of operations as the
// model of the contract says (CONTRIBUTING.md gives the proof's size).
func TestNodeAdapterPassesLongModelRuns(t *testing.T) {
	v := os.Getenv(modelStepsEnv)
	if v == "" {
		t.Skip(modelStepsEnv + " is not set: the suite's run takes the default steps")
	}
	steps, err := strconv.Atoi(v)
	if err != nil || steps <= 0 {
		t.Fatalf("%s=%q: want a positive number of operations", modelStepsEnv, v)
	}
	opts := []conformance.Option{conformance.WithModelSteps(steps)}
	if s := os.Getenv("ADAPTERKIT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("ADAPTERKIT_SEED=%q: %v", s, err)
		}
		opts = append(opts, conformance.WithSeed(seed))
	}
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(context.Background(), sharedNode(t, "--embeddings"), opts...)
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v (%s)", r.Status, r.Failure, r.Note)
	}
	t.Logf("%s in %s", r.Note, r.Duration)
}
