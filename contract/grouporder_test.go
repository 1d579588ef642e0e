package contract_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// Group order is the bytewise order of first message ids, ties in history
// order — including ids that agree on their first eight bytes after a common
// prefix, ids that are prefixes of others, and repeated ids.
func TestGroupOrderIsBytewiseWithHistoryTies(t *testing.T) {
	ids := []string{
		"p:aaaaaaaaX", "p:aaaaaaaaA", "p:aaaaaaaa", "p:", "p:b", "p:aaaaaaaaA",
		"p:aaaaaaa\xff", "p:\x00", "p:aaaaaaaaAb", "p:é", "p:Z",
	}
	var history []contract.Message
	for i, id := range ids {
		call := "c" + strings.Repeat("x", i)
		history = append(history, contract.Message{
			ID: id, Role: contract.RoleAssistant,
			Blocks: []contract.Block{&contract.ToolCallBlock{ID: call, Name: "t"}},
		})
	}
	groups := contract.BuildToolAtomicGroups(history)
	if len(groups) != len(ids) {
		t.Fatalf("%d groups, want %d", len(groups), len(ids))
	}
	type entry struct {
		id   string
		call string
	}
	want := make([]entry, len(ids))
	for i, id := range ids {
		want[i] = entry{id, "c" + strings.Repeat("x", i)}
	}
	slices.SortStableFunc(want, func(a, b entry) int { return strings.Compare(a.id, b.id) })
	for i, g := range groups {
		if g.MessageIDs[0] != want[i].id || g.ToolCallIDs[0] != want[i].call {
			t.Errorf("group %d = %q (%s), want %q (%s)", i, g.MessageIDs[0], g.ToolCallIDs[0], want[i].id, want[i].call)
		}
	}
}
