package reference

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// Holding a message loses nothing: its expansion is the message, member
// for member, whether or not it shares the header's ids, and whatever
// role, source, flags and optional members it has; a deep copy of the
// expansion is the message too, and shares nothing with what is held.
func TestPropertyHeldMessageIsLossless(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rt := rapid.SampledFrom([]string{"rt", "other-rt"}).Draw(t, "message runtime")
		session := rapid.SampledFrom([]string{"s", "other-s"}).Draw(t, "message session")
		m := gen.Message(rt, session).Draw(t, "message")
		switch rapid.IntRange(0, 4).Draw(t, "change") {
		case 1:
			m.Role = contract.Role(rapid.SampledFrom([]string{"", "robot", "User"}).Draw(t, "role"))
		case 2:
			m.Provenance.Source = contract.Source(rapid.SampledFrom([]string{"", "elsewhere"}).Draw(t, "source"))
		case 3:
			m.Provenance.EntryID = rapid.SampledFrom([]string{"", "another-entry"}).Draw(t, "entry")
		case 4:
			m.Provenance.RuntimeID = nil
		}
		x := newHeldContext(&Header{RuntimeID: "rt", SessionID: "s"})
		h := x.hold(&m)
		if diff := cmp.Diff(m, x.message(&h)); diff != "" {
			t.Fatalf("the expansion differs (-message +expansion):\n%s", diff)
		}
		// Expanding over another message leaves nothing of it.
		over := gen.Message("other-rt", "other-s").Draw(t, "expanded over")
		x.expandInto(&over, &h)
		if diff := cmp.Diff(m, over); diff != "" {
			t.Fatalf("the expansion over another message differs (-message +expansion):\n%s", diff)
		}
		copies := x.appendCopies(nil, []heldMessage{h})
		if diff := cmp.Diff(m, copies[0]); diff != "" {
			t.Fatalf("the copy differs (-message +copy):\n%s", diff)
		}
		c := &copies[0]
		if c.Provenance.RuntimeID != nil {
			*c.Provenance.RuntimeID += "!"
		}
		if c.Flags.Atomic != nil {
			*c.Flags.Atomic = !*c.Flags.Atomic
		}
		if c.CreatedAt != nil {
			*c.CreatedAt++
		}
		for _, b := range c.Blocks {
			if tb, ok := b.(*contract.TextBlock); ok {
				tb.Text += "!"
			}
		}
		if diff := cmp.Diff(m, x.message(&h)); diff != "" {
			t.Fatalf("changing a copy changed what is held (-message +expansion):\n%s", diff)
		}
	})
}

// The cache's memory figures rest on a held message's size: 88 bytes on a
// 64-bit platform, against 272 for a contract.Message.
func TestHeldMessageSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are pinned for 64-bit platforms")
	}
	if n, m := unsafe.Sizeof(heldMessage{}), unsafe.Sizeof(contract.Message{}); n != 88 || m != 272 {
		t.Fatalf("heldMessage is %d bytes and contract.Message %d; the doc comments and docs/reference-history.md say 88 and 272", n, m)
	}
}

// A message of the history's own session and runtime holds nothing
// behind its pointer.
func TestHeldMessageOfTheHistoryIsCompact(t *testing.T) {
	x := newHeldContext(&Header{RuntimeID: "rt", SessionID: "s"})
	m := contract.NewRuntimeMessage("rt", "s", "e1", contract.RoleUser, &contract.TextBlock{Text: "hi"})
	m.Flags.Atomic, m.CreatedAt = new(true), new(1.5)
	if h := x.hold(&m); h.more != nil {
		t.Fatalf("held with more: %+v", *h.more)
	}
}
