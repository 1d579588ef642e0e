package reference

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

func TestConformanceSourceRewritesInPlace(t *testing.T) {
	ctx := context.Background()
	fx := conformance.NewFixture()
	inst, err := NewConformanceFactory().Create(ctx, conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	defer inst.Adapter.Shutdown(ctx)
	before, err := inst.Adapter.SnapshotHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rw := inst.Source.(conformance.SourceRewriter)
	m := contract.CloneMessage(&fx.Messages[0])
	m.Blocks = []contract.Block{&contract.TextBlock{Text: "Inspect the other project."}}
	if err := rw.Rewrite(ctx, m); err != nil {
		t.Fatal(err)
	}
	after, err := inst.Adapter.SnapshotHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Messages) != 4 || after.Messages[0].Blocks[0].(*contract.TextBlock).Text != "Inspect the other project." || after.Revision == before.Revision {
		t.Fatalf("after a rewrite: %d messages, revision changed %t", len(after.Messages), after.Revision != before.Revision)
	}
	// Rewriting it back gives the original bytes, so the first revision.
	if err := rw.Rewrite(ctx, fx.Messages[0]); err != nil {
		t.Fatal(err)
	}
	if again, err := inst.Adapter.SnapshotHistory(ctx); err != nil || again.Revision != before.Revision {
		t.Fatalf("rewritten back: err %v, revision equal %t", err, err == nil && again.Revision == before.Revision)
	}
	m.ID = "no such id"
	if rw.Rewrite(ctx, m) == nil {
		t.Fatal("a rewrite of an unknown id succeeded")
	}
	bad := contract.CloneMessage(&fx.Messages[1])
	bad.Provenance.SessionID = "another session"
	if rw.Rewrite(ctx, bad) == nil {
		t.Fatal("a rewrite that makes the history invalid succeeded")
	}
}
