package memadapter_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
)

// modelStepsEnv, set to a number of operations, runs the model check that
// long on the example adapter, with its embedding port; TestConformance's
// run takes the default steps.
const modelStepsEnv = "ADAPTERKIT_MODEL_STEPS"

// The example adapter answers long random sequences of operations as the
// model of the contract says (CONTRIBUTING.md gives the proof's size).
func TestLongModelRuns(t *testing.T) {
	v := os.Getenv(modelStepsEnv)
	if v == "" {
		t.Skip(modelStepsEnv + " is not set: TestConformance's run takes the default steps")
	}
	steps, err := strconv.Atoi(v)
	if err != nil || steps <= 0 {
		t.Fatalf("%s=%q: want a positive number of operations", modelStepsEnv, v)
	}
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(context.Background(), memadapter.ConformanceFactory(memadapter.WithEmbeddings()), conformance.WithModelSteps(steps))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v (%s)", r.Status, r.Failure, r.Note)
	}
	t.Logf("%s in %s", r.Note, r.Duration)
}
