package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// ToolGroupIDPrefix starts every tool atomic group id.
const ToolGroupIDPrefix = "runtime-tool-group:"

// toolIndex records, for every tool call id, the message indices holding its
// call blocks and its result blocks (one entry per block), with the ids in
// order of first occurrence.
type toolIndex struct {
	calls, results         map[string][]int
	callOrder, resultOrder []string
	toolMessages           []int // indices of messages holding a call or a result
}

func indexTools(messages []Message) toolIndex {
	ix := toolIndex{calls: map[string][]int{}, results: map[string][]int{}}
	for i := range messages {
		isTool := false
		for _, b := range messages[i].Blocks {
			switch b := b.(type) {
			case *ToolCallBlock:
				isTool = true
				if _, ok := ix.calls[b.ID]; !ok {
					ix.callOrder = append(ix.callOrder, b.ID)
				}
				ix.calls[b.ID] = append(ix.calls[b.ID], i)
			case *ToolResultBlock:
				isTool = true
				if _, ok := ix.results[b.ToolCallID]; !ok {
					ix.resultOrder = append(ix.resultOrder, b.ToolCallID)
				}
				ix.results[b.ToolCallID] = append(ix.results[b.ToolCallID], i)
			}
		}
		if isTool {
			ix.toolMessages = append(ix.toolMessages, i)
		}
	}
	return ix
}

// unionFind is a disjoint-set forest over message indices, with path halving
// and union by size: near-constant time per operation.
type unionFind struct{ parent, size []int32 }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
		u.size[i] = 1
	}
	return u
}

func (u *unionFind) find(i int) int {
	p := u.parent
	x := int32(i)
	for p[x] != x {
		p[x] = p[p[x]]
		x = p[x]
	}
	return int(x)
}

func (u *unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if u.size[ra] < u.size[rb] {
		ra, rb = rb, ra
	}
	u.parent[rb] = int32(ra)
	u.size[ra] += u.size[rb]
}

// BuildToolAtomicGroups derives the tool atomic groups of a canonical history.
//
// Every message holding a toolCall or toolResult block belongs to exactly one
// group: the messages connected by a tool call id (its call and all its
// results) are joined, so the calls of one assistant message — a parallel
// batch — always share a group. A group lists its message ids in history
// order and its tool call ids (including ids of results without a call) in
// UTF-16 order; it is complete when each of its ids has exactly one call, at
// least one result, and all of them inside the group. Its id is
// "runtime-tool-group:" plus the first 16 hex digits of the SHA-256 of its
// message ids joined by U+0000.
//
// Groups are ordered by their first message id, compared bytewise (ties keep
// history order). The TypeScript kit compares with localeCompare, whose order
// depends on the host's locale; byte order is the same on every machine.
//
// It runs in O(n log n) time for n messages.
func BuildToolAtomicGroups(messages []Message) []ToolAtomicGroup {
	ix := indexTools(messages)
	return buildGroups(messages, &ix)
}

func buildGroups(messages []Message, ix *toolIndex) []ToolAtomicGroup {
	if len(ix.toolMessages) == 0 {
		return []ToolAtomicGroup{}
	}
	uf := newUnionFind(len(messages))
	for _, id := range ix.callOrder {
		calls := ix.calls[id]
		first := calls[0]
		for _, m := range calls[1:] {
			uf.union(first, m)
		}
		for _, m := range ix.results[id] {
			uf.union(first, m)
		}
	}
	// Components in order of their first message.
	compOf := make(map[int]int, len(ix.toolMessages))
	type component struct {
		members []int
		ids     []string
	}
	var comps []component
	for _, m := range ix.toolMessages {
		root := uf.find(m)
		c, ok := compOf[root]
		if !ok {
			c = len(comps)
			compOf[root] = c
			comps = append(comps, component{})
		}
		comps[c].members = append(comps[c].members, m)
		for _, b := range messages[m].Blocks {
			switch b := b.(type) {
			case *ToolCallBlock:
				comps[c].ids = append(comps[c].ids, b.ID)
			case *ToolResultBlock:
				comps[c].ids = append(comps[c].ids, b.ToolCallID)
			}
		}
	}
	groups := make([]ToolAtomicGroup, len(comps))
	h := sha256.New()
	var sum [sha256.Size]byte
	for ci, c := range comps {
		root := uf.find(c.members[0])
		ids := c.ids
		slices.SortFunc(ids, jsonw.CompareUTF16)
		ids = slices.Compact(ids)
		complete := true
		for _, id := range ids {
			calls, results := ix.calls[id], ix.results[id]
			if len(calls) != 1 || len(results) == 0 || uf.find(calls[0]) != root {
				complete = false
				break
			}
			for _, r := range results {
				if uf.find(r) != root {
					complete = false
					break
				}
			}
			if !complete {
				break
			}
		}
		msgIDs := make([]string, len(c.members))
		h.Reset()
		for i, m := range c.members {
			msgIDs[i] = messages[m].ID
			if i > 0 {
				h.Write([]byte{0})
			}
			h.Write([]byte(messages[m].ID))
		}
		h.Sum(sum[:0])
		groups[ci] = ToolAtomicGroup{
			ID:          ToolGroupIDPrefix + hex.EncodeToString(sum[:8]),
			MessageIDs:  msgIDs,
			ToolCallIDs: ids,
			Complete:    complete,
		}
	}
	slices.SortStableFunc(groups, func(a, b ToolAtomicGroup) int {
		return strings.Compare(a.MessageIDs[0], b.MessageIDs[0])
	})
	return groups
}
