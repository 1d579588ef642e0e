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
//     characters, model descriptors with every optional member and ids at
//     the 256-unit bound of local KV identifiers. Size draws sizes across
//     orders of magnitude.
//
// # Adversarial strings
//
// SPEC writes the contract in JavaScript's string rules: blank means empty
// after String.prototype.trim, provider names and payload member names are
// compared lower-cased by toLowerCase, lengths are UTF-16 code units. The
// generators mix strings on which those rules and Go's standard library
// disagree into every string an adapter may trim, fold, count or
// normalise, one class at a time, so that an adapter written Go's way
// slips on them:
//
//   - whitespace only JavaScript's trim removes (U+FEFF), only Go's
//     strings.TrimSpace removes (U+0085), neither removes (U+180E, U+200B,
//     U+2060) or both remove beyond ASCII (NBSP, U+2028, U+3000, …);
//   - CRLF and a lone CR;
//   - case traps: the Kelvin sign, long s, capital I with dot, dotless i,
//     sharp s and capital sharp s, capital sigma (final when it ends a
//     word), which toLowerCase, strings.ToLower, strings.ToUpper,
//     strings.EqualFold, full case folding and an ASCII lower-casing take
//     to different places;
//   - combining marks and characters Unicode normalisation rewrites;
//   - noncharacters (U+FDD0, U+FFFE, U+FFFF, U+10FFFF);
//   - characters outside the Basic Multilingual Plane, one rune and two
//     UTF-16 code units, at the 240-unit cut of a declared reason and the
//     256-unit bound of a local KV identifier among others.
//
// They appear in texts, entry and tool call ids (some of which end in
// whitespace, and some of which are whitespace that only
// strings.TrimSpace makes blank: valid ids), session and runtime ids,
// providers, models, tool names, mime types, payload strings and member
// names, and the capability tables (UnknownCapabilityIDs, ValidVersions,
// InvalidVersions, Reasons). Drawn values stay valid: a history still
// validates, an id is never blank to JavaScript's trim, and a provider's
// destination is the one JavaScript's rules give it. Lone surrogates are
// never drawn: a Go string holding one is not valid UTF-8, and
// encoding/json writes it as U+FFFD, so no adapter could be handed one.
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
