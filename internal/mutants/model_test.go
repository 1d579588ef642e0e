package mutants_test

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// TestModelPassesTheReferenceAdapter runs the model check on the adapter
// every mutant wraps, with the mutant runs' bounds: the default number of
// steps (3,000 under everyFaceEnv=1; contract/conformance runs 3,000 on it
// with another seed by default).
func TestModelPassesTheReferenceAdapter(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	steps := conformance.DefaultModelSteps
	if everyFace() {
		steps = 3000
	}
	r := c.Run(context.Background(), base(), conformance.WithModelSteps(steps), conformance.WithSeed(7), conformance.WithCallTimeout(generousCall))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	t.Log(r.Note, r.Duration)
}
