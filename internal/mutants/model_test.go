package mutants_test

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// TestModelPassesTheReferenceAdapter runs the model check on the adapter
// every mutant wraps, with the mutant runs' call bound. By default it
// samples 300 steps: the operations crossing every bound, with which each
// run opens, and a few sequences after them (contract/conformance's own
// tests run the model on the reference adapter with other seeds);
// everyFaceEnv=1 runs 3,000.
func TestModelPassesTheReferenceAdapter(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	steps := 300
	if everyFace() {
		steps = 3000
	}
	r := c.Run(context.Background(), base(), conformance.WithModelSteps(steps), conformance.WithSeed(7), conformance.WithCallTimeout(generousCall))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	t.Log(r.Note, r.Duration)
}
