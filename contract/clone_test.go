package contract_test

import (
	"reflect"
	"runtime"
	"testing"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// A clone equals its original, and no change made through the clone —
// to a block, an optional field, a raw value, an unknown member or a group —
// reaches the original.
func TestPropertyCloneSnapshotIsDeepAndEqual(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot().Draw(t, "snapshot")
		before, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		c := contract.CloneSnapshot(&s)
		if !reflect.DeepEqual(c, s) {
			t.Fatal("clone differs from the original")
		}
		scribble(c.Messages)
		for i := range c.ToolAtomicGroups {
			g := &c.ToolAtomicGroups[i]
			for k := range g.MessageIDs {
				g.MessageIDs[k] += "x"
			}
		}
		after, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		if string(before) != string(after) {
			t.Fatal("changing the clone changed the original")
		}
	})
}

// scribble changes every message of msgs through its ids, pointers, raw
// values, unknown members and blocks.
func scribble(msgs []contract.Message) {
	for i := range msgs {
		m := &msgs[i]
		m.ID += "x"
		if m.Provenance.RuntimeID != nil {
			*m.Provenance.RuntimeID += "x"
		}
		if m.Flags.Atomic != nil {
			*m.Flags.Atomic = !*m.Flags.Atomic
		}
		for _, f := range m.Extra {
			clear(f.Value)
		}
		for _, b := range m.Blocks {
			switch b := b.(type) {
			case *contract.TextBlock:
				b.Text += "x"
			case *contract.ToolCallBlock:
				clear(b.Arguments)
			case *contract.OpaqueProviderBlock:
				clear(b.Value)
			case *contract.ImageBlock:
				if b.Data != nil {
					*b.Data += "x"
				}
			}
		}
	}
}

func TestCloneKeepsNil(t *testing.T) {
	if contract.CloneMessages(nil) != nil || contract.CloneGroups(nil) != nil || contract.CloneBlock(nil) != nil || contract.CloneModel(nil) != nil {
		t.Fatal("a nil input must clone to nil")
	}
	m := contract.Message{ID: "a"}
	if c := contract.CloneMessage(&m); c.Blocks != nil || c.Extra != nil {
		t.Fatal("nil slices must stay nil")
	}
}

// AppendClones appends deep copies in place when dst has room, grows dst
// as append does when it has not, and leaves what dst held untouched.
func TestPropertyAppendClones(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		head := gen.Snapshot().Draw(t, "head").Messages
		tail := gen.Snapshot().Draw(t, "tail").Messages
		room := rapid.IntRange(0, 4).Draw(t, "room")
		dst := contract.AppendClones(make([]contract.Message, 0, len(head)+room), head...)
		first := dst[:len(dst):len(dst)]
		out := contract.AppendClones(dst, tail...)
		if !reflect.DeepEqual(out, append(append([]contract.Message{}, head...), tail...)) {
			t.Fatal("appended clones differ from the originals")
		}
		if fits, moved := len(tail) <= room, len(head) > 0 && &out[0] != &dst[0]; len(head) > 0 && fits == moved {
			t.Fatalf("moved %v with room for %d and %d appended", moved, room, len(tail))
		}
		if !reflect.DeepEqual(first, head) {
			t.Fatal("appending changed the messages dst held")
		}
		for i := range out[len(head):] {
			out[len(head)+i].ID += "x"
			if !reflect.DeepEqual(out[len(head)+i].Blocks, tail[i].Blocks) {
				t.Fatal("blocks differ")
			}
			for _, b := range out[len(head)+i].Blocks {
				if tb, ok := b.(*contract.TextBlock); ok {
					tb.Text += "x"
				}
			}
		}
		for i, m := range tail {
			for k, b := range m.Blocks {
				if tb, ok := b.(*contract.TextBlock); ok && tb == out[len(head)+i].Blocks[k] {
					t.Fatal("a block is shared with the original")
				}
			}
		}
	})
	if contract.AppendClones(nil) != nil {
		t.Fatal("appending nothing to nil must stay nil")
	}
}

// AppendClones copies in place when msgs are the elements just past dst's
// end: each is replaced by its copy, equal to it and sharing nothing with
// it, and nothing moves.
func TestPropertyAppendClonesInPlace(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		head := gen.Snapshot().Draw(t, "head").Messages
		s := gen.Snapshot().Draw(t, "snapshot")
		before, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		at, n := len(head), len(s.Messages)
		buf := append(make([]contract.Message, 0, at+n), head...)
		buf = append(buf, s.Messages...) // shallow: they share everything with s
		out := contract.AppendClones(buf[:at], buf[at:]...)
		if len(out) != at+n || at+n > 0 && &out[0] != &buf[0] {
			t.Fatal("copying in place moved the messages")
		}
		if !reflect.DeepEqual(out[at:], s.Messages) || !reflect.DeepEqual(out[:at], head) {
			t.Fatal("copies made in place differ from their originals")
		}
		scribble(out[at:])
		after, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		if string(before) != string(after) {
			t.Fatal("changing a copy made in place changed its original")
		}
	})
}

// A copy allocates about what it holds: copying one short message, or one
// of its blocks, costs well under 8 kB, not the full slabs a long history
// is carved from (about 100 kB, zeroed, before they started small).
func TestSmallCopiesAllocateWhatTheyHold(t *testing.T) {
	m := gen.SyntheticHistory{RuntimeID: "rt", SessionID: "sess"}.Messages(1)[0]
	const n = 200
	perCopy := func(copyOnce func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			copyOnce()
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	if b := perCopy(func() { contract.CloneMessage(&m) }); b > 8<<10 {
		t.Errorf("CloneMessage of one message allocates %d bytes", b)
	}
	if b := perCopy(func() { contract.CloneMessages([]contract.Message{m}) }); b > 8<<10 {
		t.Errorf("CloneMessages of one message allocates %d bytes", b)
	}
	if b := perCopy(func() { contract.CloneBlock(m.Blocks[0]) }); b > 8<<10 {
		t.Errorf("CloneBlock allocates %d bytes", b)
	}
}
