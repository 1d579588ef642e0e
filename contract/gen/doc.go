// Package gen provides generators of canonical histories, history snapshots,
// broken snapshots and capability declarations for property-based tests
// with pgregory.net/rapid, and deterministic synthetic histories for
// benchmarks and long fixtures. Adapter repositories use it to test their
// own adapters against histories no one wrote by hand.
//
// # Generators
//
//   - Block, ContentBlock and RawJSON draw content blocks of all nine types
//     and raw JSON values in the form the contract's encoder writes.
//   - Message draws one message with provenance consistent with a runtime
//     and session.
//   - History and HistoryOf draw valid histories with every shape of tool
//     exchange: parallel batches, out-of-order and shared results, repeated
//     results and incomplete live calls; some hold thousands of messages,
//     ids whose byte and UTF-16 orders disagree, and timestamps out of
//     order.
//   - HistoryWithout draws the same histories without some Families: named
//     shapes a runtime may be unable to represent (a tool message with two
//     results, a parallel batch, a thinking block, ...). FamiliesOf says
//     which families a history holds.
//   - Snapshot and SnapshotOf draw valid snapshots; MutatedSnapshot draws a
//     snapshot broken by one entry of the Mutations catalogue, with the
//     validation codes it must produce.
//   - Declaration(s) and Request(s) draw capability declarations and requests,
//     malformed ones, duplicates and unknown ids included.
//   - AppendedMessages and RewrittenMessage draw what a runtime writes to a
//     history over time: messages of every block type, tool exchanges, dated
//     out of order, large; one message changed in place. The history stays
//     valid.
//   - Payload, EmbeddingTexts, Provider, Identifier and ModelDescriptor draw
//     the inputs of an adapter's other methods: payloads up to a mebibyte and
//     values that are not objects, batches of hundreds of texts, provider
//     names and look-alikes, ids with combining marks and compatibility
//     characters, model descriptors with every optional member. Size draws
//     sizes across orders of magnitude.
//
// Generators are built from small independent steps, so rapid shrinks a
// failing case to a short history that still shows the failure, and every
// draw is accepted (nothing is filtered away).
//
// # Use in an adapter repository
//
// A property that an adapter keeps any canonical history intact, written in
// the adapter's own tests (myadapter.Append and myadapter.Open stand for the
// adapter's API):
//
//	func TestAdapterKeepsHistories(t *testing.T) {
//		rapid.Check(t, func(rt *rapid.T) {
//			history := gen.History("my-runtime", "session-1").Draw(rt, "history")
//			dir := t.TempDir()
//			for _, m := range history {
//				if err := myadapter.Append(dir, m); err != nil {
//					rt.Fatal(err)
//				}
//			}
//			snap, err := myadapter.Open(dir).SnapshotHistory(context.Background())
//			if err != nil {
//				rt.Fatal(err)
//			}
//			if issues := contract.ValidateHistorySnapshot(&snap); len(issues) != 0 {
//				rt.Fatalf("snapshot is invalid: %v", issues)
//			}
//			if !reflect.DeepEqual(snap.Messages, history) {
//				rt.Fatal("the snapshot does not hold the history that was written")
//			}
//		})
//	}
//
// Run it with more cases with go test -rapid.checks=10000; a failure prints
// the -rapid.seed that reproduces it.
//
// The mutation catalogue also works without rapid, for building fixtures:
//
//	for _, m := range gen.Mutations {
//		s := contract.CloneSnapshot(&valid)
//		if m.Apply(&s) {
//			// s is invalid; ValidateHistorySnapshot reports exactly m.Codes.
//		}
//	}
package gen
