package contract_test

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/spec/gen"
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
