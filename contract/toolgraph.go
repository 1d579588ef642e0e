package contract

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/internal/idtable"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// toolGraph is the call/result structure of a history, computed once and
// shared by BuildToolAtomicGroups and ValidateHistorySnapshot. Tool call ids
// are interned to small integers so that every later step works on arrays
// instead of string-keyed maps.
type toolGraph struct {
	messages []Message

	idOf        *idtable.Table // tool call id → index into ids
	ids         []string
	callCount   []int32 // per id: number of toolCall blocks
	resultCount []int32 // per id: number of toolResult blocks
	firstCall   []int32 // per id: message index of its first call, -1 when none
	callOrder   []int32 // ids with a call, in order of first call
	resultOrder []int32 // ids with a result, in order of first result
	refs        []toolRef
	toolMsgs    []int32  // indices of messages holding a call or result
	toolIDs     []string // their message ids, read while scanning

	comps     []component // connected components in order of their first message
	members   []int32     // message indices, grouped by component, history order within
	memberIDs []string    // the members' message ids, aligned with members
	compIDs   []int32     // id indices, grouped by component, sorted in UTF-16 order, unique
	order     []int32     // component indices in group order (first message id, bytewise)
}

type toolRef struct{ id, msg int32 }

type component struct {
	memStart, memEnd int32
	idStart, idEnd   int32
	complete         bool
}

func (g *toolGraph) idString(x int32) string { return g.ids[x] }

// lookup returns the index of a tool call id, or -1.
func (g *toolGraph) lookup(id string) int32 { return g.idOf.Find(id, g.idString) }

func (g *toolGraph) intern(id string) int32 {
	x, found := g.idOf.Insert(id, int32(len(g.ids)), g.idString)
	if found {
		return x
	}
	g.ids = append(g.ids, id)
	g.callCount = append(g.callCount, 0)
	g.resultCount = append(g.resultCount, 0)
	g.firstCall = append(g.firstCall, -1)
	return x
}

func newToolGraph(messages []Message) *toolGraph {
	hint := len(messages)/2 + 1
	g := &toolGraph{
		messages:    messages,
		idOf:        idtable.New(hint / 2),
		ids:         make([]string, 0, hint/2),
		callCount:   make([]int32, 0, hint/2),
		resultCount: make([]int32, 0, hint/2),
		firstCall:   make([]int32, 0, hint/2),
		refs:        make([]toolRef, 0, hint),
		toolMsgs:    make([]int32, 0, hint),
		toolIDs:     make([]string, 0, hint),
	}
	for i := range messages {
		isTool := false
		for _, b := range messages[i].Blocks {
			switch b := b.(type) {
			case *ToolCallBlock:
				isTool = true
				x := g.intern(b.ID)
				if g.callCount[x] == 0 {
					g.callOrder = append(g.callOrder, x)
					g.firstCall[x] = int32(i)
				}
				g.callCount[x]++
				g.refs = append(g.refs, toolRef{x, int32(i)})
			case *ToolResultBlock:
				isTool = true
				x := g.intern(b.ToolCallID)
				if g.resultCount[x] == 0 {
					g.resultOrder = append(g.resultOrder, x)
				}
				g.resultCount[x]++
				g.refs = append(g.refs, toolRef{x, int32(i)})
			}
		}
		if isTool {
			g.toolMsgs = append(g.toolMsgs, int32(i))
			g.toolIDs = append(g.toolIDs, messages[i].ID)
		}
	}
	if len(g.toolMsgs) > 0 {
		g.connect()
	}
	return g
}

// connect joins, for every id with a call, all messages holding its calls
// and results (union-find with path halving), then lays out the components.
func (g *toolGraph) connect() {
	n := len(g.messages)
	parent := make([]int32, n)
	for _, m := range g.toolMsgs {
		parent[m] = m
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, r := range g.refs {
		if fc := g.firstCall[r.id]; fc >= 0 {
			a, b := find(fc), find(r.msg)
			if a != b {
				// Keep the earlier message as root: roots are then first members.
				if a < b {
					parent[b] = a
				} else {
					parent[a] = b
				}
			}
		}
	}
	// Component of each tool message; components numbered by first member.
	compOf := make([]int32, n) // comp+1, 0 for non-tool messages
	for _, m := range g.toolMsgs {
		root := find(m)
		if compOf[root] == 0 {
			g.comps = append(g.comps, component{})
			compOf[root] = int32(len(g.comps))
		}
		compOf[m] = compOf[root]
	}
	// Members, grouped by component with a counting sort (stable: history order).
	counts := make([]int32, len(g.comps)+1)
	for _, m := range g.toolMsgs {
		counts[compOf[m]]++
	}
	g.members = make([]int32, len(g.toolMsgs))
	g.memberIDs = make([]string, len(g.toolMsgs))
	pos := int32(0)
	for c := range g.comps {
		g.comps[c].memStart = pos
		pos += counts[c+1]
		g.comps[c].memEnd = g.comps[c].memStart
	}
	for t, m := range g.toolMsgs {
		c := &g.comps[compOf[m]-1]
		g.members[c.memEnd] = m
		g.memberIDs[c.memEnd] = g.toolIDs[t]
		c.memEnd++
	}
	// Ids, grouped the same way, then sorted and made unique per component.
	clear(counts)
	for _, r := range g.refs {
		counts[compOf[r.msg]]++
	}
	g.compIDs = make([]int32, len(g.refs))
	pos = 0
	for c := range g.comps {
		g.comps[c].idStart = pos
		pos += counts[c+1]
		g.comps[c].idEnd = g.comps[c].idStart
	}
	for _, r := range g.refs {
		c := &g.comps[compOf[r.msg]-1]
		g.compIDs[c.idEnd] = r.id
		c.idEnd++
	}
	for ci := range g.comps {
		c := &g.comps[ci]
		ids := g.compIDs[c.idStart:c.idEnd]
		if len(ids) > 1 {
			slices.SortFunc(ids, func(a, b int32) int { return jsstring.Compare(g.ids[a], g.ids[b]) })
			ids = slices.Compact(ids)
			c.idEnd = c.idStart + int32(len(ids))
		}
		// Every result of an id with a call is joined to that call, so the
		// "all inside the component" rule reduces to the counts.
		c.complete = true
		for _, x := range ids {
			if g.callCount[x] != 1 || g.resultCount[x] == 0 {
				c.complete = false
				break
			}
		}
	}
	g.order = groupOrder(g)
}

// groupOrder sorts the components by their first message id, bytewise, ties
// in history order. Ids usually share a long prefix ("session:entry-…"), so
// each component is keyed by the eight bytes after the prefix common to all
// first ids, read as a big-endian integer: a stable radix sort on that key
// orders almost everything, and only runs of equal keys are compared as
// whole strings.
func groupOrder(g *toolGraph) []int32 {
	n := len(g.comps)
	firsts := make([]string, n) // read each first id once: they are scattered in memory
	for c := range firsts {
		firsts[c] = g.memberIDs[g.comps[c].memStart]
	}
	firstID := func(c int32) string { return firsts[c] }
	lcp := 0
	if n > 0 {
		lcp = len(firstID(0))
	}
	for c := 1; c < n && lcp > 0; c++ {
		id, ref := firstID(int32(c)), firstID(0)
		k, m := 0, min(lcp, len(id))
		for k < m && id[k] == ref[k] {
			k++
		}
		lcp = k
	}
	type key struct {
		next uint64
		comp int32
	}
	a, b := make([]key, n), make([]key, n)
	var counts [8][256]int
	for c := range a {
		var buf [8]byte
		if id := firstID(int32(c)); lcp < len(id) {
			copy(buf[:], id[lcp:])
		}
		a[c] = key{binary.BigEndian.Uint64(buf[:]), int32(c)}
		for d := range counts {
			counts[d][byte(a[c].next>>(8*d))]++
		}
	}
	// Least significant digit first; a digit all keys share is skipped.
	for d := range counts {
		cnt := &counts[d]
		if n == 0 || cnt[byte(a[0].next>>(8*d))] == n {
			continue
		}
		sum := 0
		for v := range cnt {
			cnt[v], sum = sum, sum+cnt[v]
		}
		for _, k := range a {
			v := byte(k.next >> (8 * d))
			b[cnt[v]] = k
			cnt[v]++
		}
		a, b = b, a
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && a[j].next == a[i].next {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(a[i:j], func(x, y key) int {
				if c := strings.Compare(firstID(x.comp), firstID(y.comp)); c != 0 {
					return c
				}
				return int(x.comp - y.comp)
			})
		}
		i = j
	}
	order := make([]int32, n)
	for i, k := range a {
		order[i] = k.comp
	}
	return order
}

// parallelMin is the input size from which the kit splits work across two
// goroutines: below it, starting a goroutine costs more than it saves.
const parallelMin = 8192

// inParallel starts f on its own goroutine when n is at least parallelMin
// and returns a function that waits for it; for smaller n it runs f at once.
func inParallel(n int, f func()) (wait func()) {
	if n < parallelMin {
		f()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return func() { <-done }
}

// groups materialises the components as ToolAtomicGroups in group order.
func (g *toolGraph) groups() []ToolAtomicGroup {
	out := make([]ToolAtomicGroup, len(g.order))
	if len(out) == 0 {
		return out
	}
	callIDs := make([]string, len(g.compIDs))
	// Offsets of each group's call ids in callIDs, in group order.
	callStart := make([]int32, len(g.order)+1)
	for gi, ci := range g.order {
		c := &g.comps[ci]
		callStart[gi+1] = callStart[gi] + c.idEnd - c.idStart
	}
	// Every group id is written into one buffer that becomes one string:
	// one allocation for all ids instead of one each.
	const idLen = len(ToolGroupIDPrefix) + 16
	idBuf := make([]byte, len(out)*idLen)
	fill := func(lo, hi int) {
		var buf []byte
		for gi := lo; gi < hi; gi++ {
			c := &g.comps[g.order[gi]]
			buf = buf[:0]
			for k, id := range g.memberIDs[c.memStart:c.memEnd] {
				if k > 0 {
					buf = append(buf, 0)
				}
				buf = append(buf, id...)
			}
			sum := sha256.Sum256(buf)
			id := idBuf[gi*idLen : (gi+1)*idLen]
			copy(id, ToolGroupIDPrefix)
			hex.Encode(id[len(ToolGroupIDPrefix):], sum[:8])
			calls := callIDs[callStart[gi]:callStart[gi+1]:callStart[gi+1]]
			for k, x := range g.compIDs[c.idStart:c.idEnd] {
				calls[k] = g.ids[x]
			}
			out[gi] = ToolAtomicGroup{
				MessageIDs:  g.memberIDs[c.memStart:c.memEnd:c.memEnd],
				ToolCallIDs: calls,
				Complete:    c.complete,
			}
		}
	}
	half := len(out) / 2
	wait := inParallel(len(g.members), func() { fill(0, half) })
	fill(half, len(out))
	wait()
	ids := string(idBuf)
	for gi := range out {
		out[gi].ID = ids[gi*idLen : (gi+1)*idLen]
	}
	return out
}

// matches reports whether the snapshot's groups list exactly the graph's
// groups in group order: the same members and calls in the same order and
// the same completeness (group ids are not compared).
func (g *toolGraph) matches(s *HistorySnapshot) bool {
	if len(s.ToolAtomicGroups) != len(g.order) {
		return false
	}
	for gi, ci := range g.order {
		sg, c := &s.ToolAtomicGroups[gi], &g.comps[ci]
		members, calls := g.memberIDs[c.memStart:c.memEnd], g.compIDs[c.idStart:c.idEnd]
		if sg.Complete != c.complete || len(sg.MessageIDs) != len(members) || len(sg.ToolCallIDs) != len(calls) {
			return false
		}
		for k, id := range members {
			if sg.MessageIDs[k] != id {
				return false
			}
		}
		for k, x := range calls {
			if sg.ToolCallIDs[k] != g.ids[x] {
				return false
			}
		}
	}
	return true
}
