package conformance_test

import (
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

func TestModelPassesMemadapter(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, correct(), conformance.WithModelSteps(3000))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	t.Log(r.Note, r.Duration)
}
