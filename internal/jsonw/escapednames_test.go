package jsonw

import (
	"strings"
	"testing"
)

// TestParseKeepsEscapedMemberNames checks that a member name written with
// escapes survives the parse of its value, when an earlier escaped string
// has left the scanner's scratch buffer large enough to be reused.
func TestParseKeepsEscapedMemberNames(t *testing.T) {
	raw := `{"a":"\u00e9 012345678901234567890123456789","pr\u006fmpt":"password: hunter22 \u00e9","l":[{"n\u0061me":{"x":"\u00e9\u00e9\u00e9\u00e9\u00e9"}}]}`
	v, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Members[1].Name; got != "prompt" {
		t.Errorf("second member name %q, want \"prompt\"", got)
	}
	if got := v.Members[2].Value.Items[0].Members[0].Name; got != "name" {
		t.Errorf("nested member name %q, want \"name\"", got)
	}
}

// Release drops the document and a large unescape buffer, and keeps a small
// one and the names table for the next document.
func TestReleaseBoundsWhatAScannerKeeps(t *testing.T) {
	for _, n := range []int{16, maxKeptScratch + 1} {
		doc := []byte(`{"a\u0062":"` + strings.Repeat(`\n`, n) + `"}`)
		s := NewScanner(doc)
		if err := s.Object(func(string) error { _, err := s.String(); return err }); err != nil {
			t.Fatal(err)
		}
		s.Release()
		if s.data != nil || s.pos != 0 {
			t.Fatal("the document is still held")
		}
		if kept := s.scratch != nil; kept != (n <= maxKeptScratch) {
			t.Fatalf("%d escapes: scratch kept %v", n, kept)
		}
		if _, ok := s.names["ab"]; !ok {
			t.Fatal("the names table was dropped")
		}
	}
}
