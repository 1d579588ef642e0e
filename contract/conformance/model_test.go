package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
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

// The reference adapter supports local KV: the model's run on it takes
// every local KV path SPEC §11 names, and passes.
func TestModelTakesEveryLocalKVPath(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, reference.NewConformanceFactory(), conformance.WithModelSteps(3000), conformance.WithSeed(3))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	for _, path := range []string{" hits", " full replays", " failed replays", " ineligible"} {
		if !strings.Contains(r.Note, path) {
			t.Errorf("no local KV completion of the kind %q in %q", path, r.Note)
		}
	}
}

// kvSavedOffByOne reports one saved prefill token too many on every local
// KV hit.
type kvSavedOffByOne struct{ contract.Adapter }

func (a kvSavedOffByOne) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := a.Adapter.Complete(ctx, req)
	if r.LocalKV != nil && r.LocalKV.Mode == contract.LocalKVHit {
		m := *r.LocalKV
		m.SavedPrefillTokens++
		r.LocalKV = &m
	}
	return r
}

func TestModelChecksLocalKVMetadata(t *testing.T) {
	f := conformance.NewFactory("saved-off-by-one", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := reference.NewConformanceFactory().Create(ctx, setup)
		if err == nil {
			inst.Adapter = kvSavedOffByOne{inst.Adapter}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, f, conformance.WithModelSteps(3000), conformance.WithSeed(3))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "metadata") || !strings.Contains(r.Failure.Actual, "kv hit") {
		t.Fatalf("%s: %+v", r.Status, r.Failure)
	}
}
