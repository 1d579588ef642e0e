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

// Any input runs a sequence to its end, the empty one and one of zeros
// among them (a source of zeros once made rand's sampling loop for ever).
func TestCheckModelInputEndsForAnyInput(t *testing.T) {
	for _, in := range [][]byte{nil, make([]byte, 64), []byte("model"), make([]byte, 4096)} {
		if err := conformance.CheckModelInput(ctx, correct(), in); err != nil {
			t.Fatalf("input of %d bytes: %v", len(in), err)
		}
	}
}
