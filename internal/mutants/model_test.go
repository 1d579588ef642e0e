package mutants_test

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

func TestModelPassesTheReferenceAdapter(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(context.Background(), base(), conformance.WithModelSteps(3000), conformance.WithSeed(7))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	t.Log(r.Note, r.Duration)
}
