package reference

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// TestPropertyAppendAgreesWithFullValidation appends valid and invalid
// messages to generated histories through a History and checks every
// verdict against ValidateHistorySnapshot on the whole history plus the
// message: an append succeeds exactly when the full validator finds
// nothing, and a refusal's text is the full validator's.
func TestPropertyAppendAgreesWithFullValidation(t *testing.T) {
	const rid, sid = "prop-runtime", "prop-session"
	base := t.TempDir()
	root := filepath.Join(base, "project")
	mustNil(t, os.Mkdir(root, 0o700))
	root, err := resolveRoot(root)
	mustNil(t, err)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		path := filepath.Join(base, strconv.Itoa(n), "history.jsonl")
		msgs := gen.History(rid, sid).Draw(rt, "history")
		k := rapid.IntRange(0, len(msgs)).Draw(rt, "prefix")
		hd := Header{RuntimeID: rid, SessionID: sid, ProjectRoot: root}
		h, err := CreateAndOpenHistory(context.Background(), path, hd, msgs[:k])
		if err != nil {
			rt.Fatalf("create: %v", err)
		}
		defer h.Close()
		have := slices.Clone(msgs[:k])
		rest := msgs[k:]
		for step := range rapid.IntRange(1, 8).Draw(rt, "appends") {
			m := candidate(rt, rid, sid, step, have, rest)
			before, err := os.ReadFile(path)
			if err != nil {
				rt.Fatal(err)
			}
			line, err := appendRecord(nil, &m)
			if err != nil {
				rt.Fatalf("generated message is not structurally valid: %v", err)
			}
			got := h.Append(context.Background(), m)
			p := &m.Provenance
			if p.SessionID != sid || p.RuntimeID == nil || *p.RuntimeID != rid {
				if !errors.Is(got, ErrIdentityMismatch) {
					rt.Fatalf("message of another runtime: %v, want ErrIdentityMismatch", got)
				}
				continue
			}
			next := append(slices.Clone(before), line...)
			snap := snapshotOf(&hd, root, revisionOf(next), append(slices.Clone(have), m), nil)
			issues := contract.ValidateHistorySnapshot(&snap)
			after, err := os.ReadFile(path)
			if err != nil {
				rt.Fatal(err)
			}
			if len(issues) == 0 {
				if got != nil {
					rt.Fatalf("append refused (%v), the full validator finds nothing", got)
				}
				if string(after) != string(next) || h.Revision() != revisionOf(next) || h.Len() != len(have)+1 {
					rt.Fatal("the file or the handle does not hold the append")
				}
				have = append(have, m)
				if len(rest) > 0 && m.ID == rest[0].ID {
					rest = rest[1:]
				}
				continue
			}
			want := (&ValidationError{Issues: issues}).Error()
			if got == nil || got.Error() != want {
				rt.Fatalf("append: %v, the full validator: %s", got, want)
			}
			if string(after) != string(before) {
				rt.Fatal("a refused append changed the file")
			}
		}
	})
}

// candidate draws a message to append to have: the history's next
// message, a later one (its results may then be orphaned), an arbitrary
// generated one, a repeat of an earlier one, or one reusing or blanking
// ids.
func candidate(rt *rapid.T, rid, sid string, step int, have, rest []contract.Message) contract.Message {
	entry := "p" + strconv.Itoa(step)
	fresh := func(role contract.Role, blocks ...contract.Block) contract.Message {
		return contract.NewRuntimeMessage(rid, sid, entry, role, blocks...)
	}
	var calls []string
	for i := range have {
		for _, b := range have[i].Blocks {
			if c, ok := b.(*contract.ToolCallBlock); ok {
				calls = append(calls, c.ID)
			}
		}
	}
	switch rapid.IntRange(0, 7).Draw(rt, "kind") {
	case 0:
		if len(rest) > 0 {
			return rest[0]
		}
	case 1:
		if len(rest) > 1 {
			return rest[rapid.IntRange(1, len(rest)-1).Draw(rt, "later")]
		}
	case 2:
		return gen.Message(rid, sid).Draw(rt, "arbitrary")
	case 3:
		if len(have) > 0 {
			return have[rapid.IntRange(0, len(have)-1).Draw(rt, "earlier")]
		}
	case 4:
		if len(calls) > 0 {
			id := calls[rapid.IntRange(0, len(calls)-1).Draw(rt, "call")]
			return fresh(contract.RoleAssistant, &contract.ToolCallBlock{ID: id, Name: "read"})
		}
	case 5:
		return fresh(contract.RoleTool, &contract.ToolResultBlock{ToolCallID: rapid.SampledFrom([]string{"", " ", "no-such-call"}).Draw(rt, "resultID"), ToolName: "read"})
	case 6:
		m := fresh(contract.RoleAssistant, &contract.ToolCallBlock{ID: "c-" + entry, Name: "read"}, &contract.ToolCallBlock{ID: "c-" + entry, Name: "read"})
		return m
	case 7:
		m := fresh(contract.RoleUser, &contract.TextBlock{Text: "hi"})
		switch rapid.IntRange(0, 2).Draw(rt, "break") {
		case 0:
			m.ID = " "
		case 1:
			m.SourceEntryID = "other"
		case 2:
			m.Provenance.EntryID = ""
		}
		return m
	}
	return fresh(contract.RoleUser, &contract.TextBlock{Text: "hello"})
}
