package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
)

// escapedPayloads are payloads whose member names hold JSON escapes next
// to values that hold escapes too, with what a remote provider must receive.
var escapedPayloads = []struct {
	name, in, want string
}{
	{"marker pair in a name",
		`{"note\n[ds4:local-only]P[/ds4:local-only]":{"v":"abcdefghijklmnopqr\n"}}`,
		`{"note\n[DS4 local-only content excluded by privacy policy]":{"v":"abcdefghijklmnopqr\n"}}`},
	{"credential below an escaped name",
		`{"k\n234567890123456789012345678901234567890":{"content":"sk-ant-REDTEAMCRED0123456789\n"}}`,
		`{"k\n234567890123456789012345678901234567890":{"content":"[DS4 REDACTED CREDENTIAL]\n"}}`},
	{"nothing to sanitise",
		`{"a\"bcdefgh":["x\ny"],"na\u00efve":{"k":"tab\there"},"back\\slash":{"line\nbreak":"quote\"d"}}`,
		`{"a\"bcdefgh":["x\ny"],"naïve":{"k":"tab\there"},"back\\slash":{"line\nbreak":"quote\"d"}}`},
}

func TestCompleteKeepsEscapedNames(t *testing.T) {
	for _, c := range escapedPayloads {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			tr := &recorder{}
			a := newAdapter(t, e.options(tr))
			r := a.Complete(context.Background(), contract.CompletionRequest{Provider: "openai", Model: "m", Payload: json.RawMessage(c.in)})
			if r.Status != contract.StatusCompleted {
				t.Fatalf("result %+v", r)
			}
			if len(tr.reqs) != 1 || string(tr.reqs[0].Payload) != c.want {
				t.Fatalf("transport saw %s\nwant %s", tr.reqs[0].Payload, c.want)
			}
			if bytes.Contains(tr.reqs[0].Payload, []byte("[ds4:local-only]P")) || bytes.Contains(tr.reqs[0].Payload, []byte("REDTEAMCRED")) {
				t.Fatalf("a withheld value reached the transport: %s", tr.reqs[0].Payload)
			}
		})
	}
}

// escapedMessage is a fixture message carrying unknown members whose names
// hold escapes, at every level that keeps unknown members, each followed by
// a value holding escapes.
func escapedMessage(t *testing.T) contract.Message {
	t.Helper()
	m := contract.CloneMessage(&fixture().Messages[0])
	val := json.RawMessage(`{"a\nb":"c\"d\ne","f":["g\th"]}`)
	m.Extra = []contract.Field{{Name: "x\"y\nz", Value: val}, {Name: "naïve\\", Value: json.RawMessage(`"\u0001\n"`)}}
	m.Provenance.Extra = []contract.Field{{Name: "p\tq", Value: val}}
	m.Flags.Extra = []contract.Field{{Name: "f\rg", Value: val}}
	tb, ok := m.Blocks[0].(*contract.TextBlock)
	if !ok {
		t.Fatalf("fixture message 0 starts with a %T", m.Blocks[0])
	}
	tb.Extra = []contract.Field{{Name: "b\nc", Value: val}, {Name: "b\nd", Value: json.RawMessage(`"\n"`)}}
	return m
}

func TestHistoryKeepsEscapedUnknownMemberNames(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	msgs := append([]contract.Message{escapedMessage(t)}, fx.Messages[1:]...)
	e.write(t, e.fixtureText(t, msgs))
	s, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := escapedMessage(t)
	got := s.Messages[0]
	if !reflect.DeepEqual(got.Extra, want.Extra) || !reflect.DeepEqual(got.Provenance.Extra, want.Provenance.Extra) ||
		!reflect.DeepEqual(got.Flags.Extra, want.Flags.Extra) || !reflect.DeepEqual(got.Blocks[0], want.Blocks[0]) {
		t.Fatalf("unknown members read back as\n%+v\n%+v\n%+v\n%+v", got.Extra, got.Provenance.Extra, got.Flags.Extra, got.Blocks[0])
	}
	// Writing the snapshot's messages gives the same file again.
	copyPath := filepath.Join(e.dir, "copy.jsonl")
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	if err := CreateHistory(context.Background(), copyPath, h, s.Messages); err != nil {
		t.Fatal(err)
	}
	if copied := readFile(t, copyPath); !bytes.Equal(copied, e.read(t)) {
		t.Fatalf("history written back differs:\n%s\n%s", copied, e.read(t))
	}
}

// TestHistoryKeepsLoneSurrogates reads a record holding lone surrogate
// escapes, as JavaScript may write them, and writes it back unchanged: the
// file stays valid UTF-8, its revision is the hash of its bytes, and the
// snapshot validates.
func TestHistoryKeepsLoneSurrogates(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	msgs := contract.CloneMessages(fx.Messages)
	msgs[0].Blocks[0].(*contract.TextBlock).Text = "LONE-SURROGATES"
	text := e.fixtureText(t, msgs)
	marked := strings.Replace(text, `"LONE-SURROGATES"`, `"do\ud800ne \udc00"`, 1)
	if marked == text {
		t.Fatal("the marked text was not found in the file")
	}
	e.write(t, marked)
	if !utf8.Valid(e.read(t)) {
		t.Fatal("the history file is not valid UTF-8")
	}
	a := newAdapter(t, e.options(nil))
	s, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Revision != revisionOf(e.read(t)) {
		t.Fatal("revision is not the SHA-256 of the file")
	}
	if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
		t.Fatalf("issues %+v", issues)
	}
	if got := s.Messages[0].Blocks[0].(*contract.TextBlock).Text; got != "do\xed\xa0\x80ne \xed\xb0\x80" {
		t.Fatalf("text read as %q", got)
	}
	copyPath := filepath.Join(e.dir, "copy.jsonl")
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	if err := CreateHistory(context.Background(), copyPath, h, s.Messages); err != nil {
		t.Fatal(err)
	}
	if copied := readFile(t, copyPath); !bytes.Equal(copied, e.read(t)) {
		t.Fatalf("history written back differs:\n%s\n%s", copied, e.read(t))
	}
	// The snapshot JSON keeps the escapes too.
	b, err := contract.AppendSnapshotJSON(nil, &s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"do\ud800ne \udc00"`)) || !utf8.Valid(b) {
		t.Fatalf("snapshot JSON lost the lone surrogates: %.300s", b)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
