package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// finalReader is an adapter whose snapshot is final: what a mixed burst
// reads once it is over.
type finalReader struct {
	contract.Adapter
	final contract.HistorySnapshot
}

func (f finalReader) SnapshotHistory(context.Context) (contract.HistorySnapshot, error) {
	return contract.CloneSnapshot(&f.final), nil
}

// snapshotOf is a valid snapshot of msgs under fx with revision rev.
func snapshotOf(fx Fixture, root, rev string, msgs []contract.Message) contract.HistorySnapshot {
	return contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: fx.RuntimeID, SessionID: fx.SessionID,
		Revision: rev, ProjectRoot: root, Messages: contract.CloneMessages(msgs), ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs)}
}

// The linearizability check of a mixed burst accepts reads that saw the
// history at one moment consistent with when each call began and
// returned, and names each way a read cannot have.
func TestMixedBurstReadsAreLinearized(t *testing.T) {
	fx := NewFixture()
	const root = "/root"
	base := fx.Messages
	a1, a2 := damageMessage(fx, 1), damageMessage(fx, 2)
	a1.Blocks = []contract.Block{&contract.TextBlock{Text: "one"}}
	a2.Blocks = []contract.Block{&contract.TextBlock{Text: "two"}}
	all := append(append(contract.CloneMessages(base), a1), a2)
	read := func(start, end int64, rev string, n int) mixedItem {
		return mixedItem{kind: opSnapshot, start: start, end: end, snap: snapshotOf(fx, root, rev, all[:len(base)+n])}
	}
	appends := []mixedItem{{kind: opAppend, msg: a1, start: 1, end: 2}, {kind: opAppend, msg: a2, start: 3, end: 6}}
	for _, tc := range []struct {
		name  string
		reads []mixedItem
		fails string
	}{
		{"a read between the appends", []mixedItem{read(4, 5, "r1", 1)}, ""},
		{"reads of every prefix they may see", []mixedItem{read(0, 1, "r0", 0), read(0, 7, "r2", 2), read(2, 7, "r1", 1)}, ""},
		{"an append that finished before the read began is missing", []mixedItem{read(4, 5, "r0", 0)}, "finished before it began"},
		{"an append that began after the read returned is there", []mixedItem{read(1, 2, "r2", 2)}, "began after it returned"},
		{"one revision for two contents", []mixedItem{read(4, 5, "r", 1), read(7, 8, "r", 2)}, "one revision never names two different contents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &model{fixture: fx, root: root, msgs: contract.CloneMessages(base), revisions: map[string]string{}}
			in := &modelInst{s: &Session{}, m: m, a: &boundedAdapter{inner: finalReader{final: snapshotOf(fx, root, "final", all)}}}
			r := &modelRun{ctx: context.Background()}
			err := r.linearize(in, append(slices.Clone(appends), tc.reads...))
			switch {
			case tc.fails == "" && err != nil:
				t.Fatalf("%v", err)
			case tc.fails != "" && (err == nil || !strings.Contains(err.(*brokenRule).actual+err.(*brokenRule).rule, tc.fails)):
				t.Fatalf("%v, want a failure saying %q", err, tc.fails)
			case tc.fails == "" && len(m.msgs) != len(all):
				t.Fatalf("the model holds %d messages after the burst, want %d", len(m.msgs), len(all))
			}
		})
	}
}
