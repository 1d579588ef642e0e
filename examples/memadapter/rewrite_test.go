package memadapter

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

func TestSourceRewritesInPlace(t *testing.T) {
	ctx := context.Background()
	fx := conformance.NewFixture()
	inst, err := ConformanceFactory().Create(ctx, conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	before, err := inst.Adapter.SnapshotHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := contract.CloneMessage(&fx.Messages[3])
	m.Blocks = []contract.Block{&contract.TextBlock{Text: "changed in place"}}
	if err := inst.Source.(conformance.SourceRewriter).Rewrite(ctx, m); err != nil {
		t.Fatal(err)
	}
	after, err := inst.Adapter.SnapshotHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Messages) != 4 || after.Messages[3].Blocks[0].(*contract.TextBlock).Text != "changed in place" || after.Revision == before.Revision {
		t.Fatalf("after a rewrite: %d messages, revision changed %t", len(after.Messages), after.Revision != before.Revision)
	}
	m.ID = "no such id"
	if inst.Source.(conformance.SourceRewriter).Rewrite(ctx, m) == nil {
		t.Fatal("a rewrite of an unknown id succeeded")
	}
}

// A model descriptor returned by CurrentModel is a copy, down to its input
// list: editing it changes nothing the adapter returns later.
func TestCurrentModelIsACopy(t *testing.T) {
	ctx := context.Background()
	fx := conformance.NewFixture()
	inst, err := ConformanceFactory().Create(ctx, conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	m, err := inst.Adapter.CurrentModel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Input[0] = "edited"
	*m.MaxTokens = -1
	again, err := inst.Adapter.CurrentModel(ctx)
	if err != nil || again.Input[0] != fx.Model.Input[0] || *again.MaxTokens != *fx.Model.MaxTokens {
		t.Fatalf("after editing a returned model: %+v, %v", again, err)
	}
}
