package contract_test

import (
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// The properties in the *_property_test.go files run 100 cases each by
// default. Run many more with
//
//	go test ./contract -run Property -rapid.checks=10000
//
// and reproduce a failure with the -rapid.seed or -rapid.failfile that the
// failure report prints.

// toolIDs returns the call ids and result ids of a message's tool blocks.
func toolIDs(m *contract.Message) (calls, results []string) {
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *contract.ToolCallBlock:
			calls = append(calls, b.ID)
		case *contract.ToolResultBlock:
			results = append(results, b.ToolCallID)
		}
	}
	return calls, results
}

func isToolMessage(m *contract.Message) bool {
	c, r := toolIDs(m)
	return len(c)+len(r) > 0
}

func TestPropertyGroupsPartitionToolMessages(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := gen.History("rt", "s").Draw(t, "history")
		groups := contract.BuildToolAtomicGroups(h)
		groupOfMessage := map[string]int{}
		groupOfCall := map[string]int{}
		for gi, g := range groups {
			for _, id := range g.MessageIDs {
				if prev, dup := groupOfMessage[id]; dup {
					t.Fatalf("message %q in groups %d and %d", id, prev, gi)
				}
				groupOfMessage[id] = gi
			}
			for _, id := range g.ToolCallIDs {
				if prev, dup := groupOfCall[id]; dup {
					t.Fatalf("tool call %q in groups %d and %d", id, prev, gi)
				}
				groupOfCall[id] = gi
			}
		}
		for i := range h {
			m := &h[i]
			gi, listed := groupOfMessage[m.ID]
			if listed != isToolMessage(m) {
				t.Fatalf("message %q: tool message %v, listed in a group %v", m.ID, isToolMessage(m), listed)
			}
			calls, results := toolIDs(m)
			for _, id := range append(calls, results...) {
				if g, ok := groupOfCall[id]; !ok || g != gi {
					t.Fatalf("tool call %q of message %q is not in the message's group", id, m.ID)
				}
			}
		}
	})
}

func TestPropertyGroupCompleteness(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := gen.History("rt", "s").Draw(t, "history")
		msgOfID := map[string]*contract.Message{}
		for i := range h {
			msgOfID[h[i].ID] = &h[i]
		}
		for _, g := range contract.BuildToolAtomicGroups(h) {
			callCount := map[string]int{}
			resultCount := map[string]int{}
			for _, mid := range g.MessageIDs {
				calls, results := toolIDs(msgOfID[mid])
				for _, c := range calls {
					callCount[c]++
				}
				for _, r := range results {
					resultCount[r]++
				}
			}
			// All calls and results of the group's ids are inside it
			// (the partition property), so counting inside is enough.
			want := true
			for _, id := range g.ToolCallIDs {
				if callCount[id] != 1 || resultCount[id] < 1 {
					want = false
				}
			}
			if g.Complete != want {
				t.Fatalf("group %v: complete %v, want %v", g.ToolCallIDs, g.Complete, want)
			}
		}
	})
}

func TestPropertyDroppingAResultMakesItsGroupIncomplete(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := gen.HistoryOf(gen.HistoryOptions{RuntimeID: "rt", SessionID: "s", MinMessages: 2}).Draw(t, "history")
		type site struct{ msg, block int }
		var sites []site
		resultCount := map[string]int{}
		for i := range h {
			for j, b := range h[i].Blocks {
				if r, ok := b.(*contract.ToolResultBlock); ok {
					sites = append(sites, site{i, j})
					resultCount[r.ToolCallID]++
				}
			}
		}
		if len(sites) == 0 {
			return // nothing to drop
		}
		p := sites[rapid.IntRange(0, len(sites)-1).Draw(t, "result")]
		id := h[p.msg].Blocks[p.block].(*contract.ToolResultBlock).ToolCallID
		mutated := slices.Clone(h)
		mutated[p.msg].Blocks = slices.Delete(slices.Clone(h[p.msg].Blocks), p.block, p.block+1)
		for _, g := range contract.BuildToolAtomicGroups(mutated) {
			if !slices.Contains(g.ToolCallIDs, id) {
				continue
			}
			if resultCount[id] == 1 && g.Complete {
				t.Fatalf("group of %q is complete after its only result was dropped", id)
			}
			return
		}
		t.Fatalf("tool call %q has no group after dropping a result", id)
	})
}

func TestPropertyNonToolMessagesNeverChangeGroups(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := gen.History("rt", "s").Draw(t, "history")
		want := contract.BuildToolAtomicGroups(h)

		// Remove a random subset of the non-tool messages.
		var kept []contract.Message
		for i := range h {
			if isToolMessage(&h[i]) || rapid.Bool().Draw(t, "keep") {
				kept = append(kept, h[i])
			}
		}
		if got := contract.BuildToolAtomicGroups(kept); !reflect.DeepEqual(got, want) {
			t.Fatalf("removing non-tool messages changed the groups:\n got %+v\nwant %+v", got, want)
		}

		// Insert non-tool messages with fresh ids anywhere.
		inserts := rapid.SliceOfN(rapid.IntRange(0, len(h)), 0, 5).Draw(t, "insertAt")
		grown := slices.Clone(h)
		for k, at := range inserts {
			m := gen.Message("rt", "s").Draw(t, "inserted")
			m.ID = "inserted-" + strconv.Itoa(k)
			m.Blocks = rapid.SliceOfN(gen.ContentBlock(), 0, 2).Draw(t, "blocks")
			if m.Blocks == nil {
				m.Blocks = []contract.Block{}
			}
			grown = slices.Insert(grown, min(at, len(grown)), m)
		}
		if got := contract.BuildToolAtomicGroups(grown); !reflect.DeepEqual(got, want) {
			t.Fatalf("inserting non-tool messages changed the groups:\n got %+v\nwant %+v", got, want)
		}
	})
}

func TestPropertyGroupsAreDeterministicAndValidate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot().Draw(t, "snapshot")
		again := contract.BuildToolAtomicGroups(contract.CloneSnapshot(&s).Messages)
		if !reflect.DeepEqual(again, s.ToolAtomicGroups) {
			t.Fatalf("building twice gave different groups:\n%+v\n%+v", again, s.ToolAtomicGroups)
		}
		if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
			t.Fatalf("built groups do not validate: %+v", issues)
		}
		for i := 1; i < len(again); i++ {
			if again[i-1].MessageIDs[0] > again[i].MessageIDs[0] {
				t.Fatalf("groups are not ordered by first message id")
			}
		}
	})
}
