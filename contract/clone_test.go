package contract_test

import (
	"reflect"
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
		for i := range c.Messages {
			m := &c.Messages[i]
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
