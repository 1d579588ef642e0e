package contract_test

import (
	"reflect"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/spec/gen"
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
		if n > 0 && len(got) != 1 {
			t.Errorf("n=%d: want exactly one provenance issue, got %v", n, got)
		}
	}
}
