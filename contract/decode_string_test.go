package contract_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// DecodeMessageString decodes every message exactly as DecodeMessage does.
func TestPropertyDecodeMessageStringIsDecodeMessage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := gen.Message("rt", "s").Draw(t, "message")
		data, err := contract.AppendMessageJSON(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := contract.DecodeMessage(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := contract.DecodeMessageString(string(data))
		if err != nil {
			t.Fatalf("decode %s: %v", data, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("DecodeMessageString differs (-DecodeMessage +DecodeMessageString):\n%s", diff)
		}
	})
}

// within reports whether s is a part of the memory of doc.
func within(s, doc string) bool {
	if s == "" {
		return false
	}
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(doc)))
	return p >= start && p+uintptr(len(s)) <= start+uintptr(len(doc))
}

// A string without escapes is a part of the document; one with escapes is
// a copy, unescaped; raw values are copies.
func TestDecodeMessageStringSharesPlainStrings(t *testing.T) {
	doc := `{"id":"s:e1","sourceEntryId":"e1","role":"user","blocks":[{"type":"text","text":"a\nb"},` +
		`{"type":"toolCall","id":"call-1","name":"read","arguments":{"p":1}}],` +
		`"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e1","runtimeId":"rt"},"flags":{}}`
	m, err := contract.DecodeMessageString(doc)
	if err != nil {
		t.Fatal(err)
	}
	call := m.Blocks[1].(*contract.ToolCallBlock)
	for _, s := range []string{m.ID, m.SourceEntryID, m.Provenance.SessionID, *m.Provenance.RuntimeID, call.ID, call.Name} {
		if !within(s, doc) {
			t.Errorf("%q is a copy, want a part of the document", s)
		}
	}
	if text := m.Blocks[0].(*contract.TextBlock).Text; text != "a\nb" || within(text, doc) {
		t.Errorf("escaped text %q: want an unescaped copy", text)
	}
	if args := string(call.Arguments); args != `{"p":1}` || within(unsafe.String(unsafe.SliceData(call.Arguments), len(call.Arguments)), doc) {
		t.Errorf("arguments %s: want a copy", args)
	}
	// DecodeMessage shares nothing with its input.
	data := []byte(doc)
	owned, err := contract.DecodeMessage(data)
	if err != nil {
		t.Fatal(err)
	}
	copy(data, strings.Repeat("x", len(data)))
	if owned.ID != "s:e1" || owned.Blocks[1].(*contract.ToolCallBlock).Name != "read" {
		t.Fatal("DecodeMessage's strings changed with its input")
	}
}
