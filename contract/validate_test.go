package contract_test

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// BuildAndValidateSnapshot must be exactly BuildToolAtomicGroups followed by
// ValidateHistorySnapshot, on valid and invalid snapshots and on both sides
// of the size from which work is split across goroutines.
func TestBuildAndValidateSnapshotEqualsItsParts(t *testing.T) {
	for _, n := range []int{0, 7, 500, 9000} {
		h := gen.SyntheticHistory{RuntimeID: "rt", SessionID: "s"}
		msgs := h.Messages(n)
		if n > 0 {
			msgs[n/2].Provenance.SessionID = "other" // one invalid message
		}
		dupTool := n >= 500
		if dupTool {
			msgs[2].ID = msgs[1].ID // a tool call and its result share an id
		}
		s1 := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "s",
			Revision: "r", ProjectRoot: "/p", Messages: msgs}
		s2 := s1
		s1.ToolAtomicGroups = contract.BuildToolAtomicGroups(s1.Messages)
		want := contract.ValidateHistorySnapshot(&s1)
		got := contract.BuildAndValidateSnapshot(&s2)
		if !reflect.DeepEqual(s1.ToolAtomicGroups, s2.ToolAtomicGroups) {
			t.Errorf("n=%d: groups differ", n)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("n=%d: issues differ\n got %v\nwant %v", n, got, want)
		}
		if n > 0 && !dupTool && len(got) != 1 {
			t.Errorf("n=%d: want exactly one provenance issue, got %v", n, got)
		}
		if dupTool && len(got) < 3 {
			t.Errorf("n=%d: want duplicate, overlap and provenance issues, got %v", n, got)
		}
	}
}

// On any history — including duplicate and blank ids, reused and orphaned
// tool call ids — the combined function agrees with its two parts.
func TestPropertyBuildAndValidateSnapshotEqualsItsParts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := gen.MutatedSnapshot().Draw(t, "mutated")
		s1 := contract.CloneSnapshot(&m.Snapshot)
		s2 := contract.CloneSnapshot(&m.Snapshot)
		s1.ToolAtomicGroups = contract.BuildToolAtomicGroups(s1.Messages)
		want := contract.ValidateHistorySnapshot(&s1)
		got := contract.BuildAndValidateSnapshot(&s2)
		if !reflect.DeepEqual(s1.ToolAtomicGroups, s2.ToolAtomicGroups) {
			t.Fatalf("groups differ")
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("issues differ after %s\n got %v\nwant %v", m.Mutation, got, want)
		}
	})
}
