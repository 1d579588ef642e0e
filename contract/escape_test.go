package contract_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// escapedMessageJSON carries unknown members whose names need escapes, at
// every level that keeps them, each followed by a value with escapes: a
// decoder that let the value overwrite the name would misname them.
const escapedMessageJSON = `{"id":"m1","sourceEntryId":"e1","role":"user",` +
	`"blocks":[{"type":"text","text":"hi","b\nc":{"x":"\"\n"},"b\nd":"\t"}],` +
	`"provenance":{"source":"pi-session","sessionId":"s","entryId":"e1","p\tq":["\n\n\n\n\n\n"]},` +
	`"flags":{"f\rg":{"h\"":"\\\\"}},` +
	`"x\"y\nz":{"a\nb":"c\"d\ne"},"na\u00efve\\":"\u0001\n","x\"y\nz2":"\r"}`

func escapedWant() [][]contract.Field {
	return [][]contract.Field{
		{{Name: "x\"y\nz", Value: json.RawMessage(`{"a\nb":"c\"d\ne"}`)}, {Name: "naïve\\", Value: json.RawMessage(`"\u0001\n"`)}, {Name: "x\"y\nz2", Value: json.RawMessage(`"\r"`)}},
		{{Name: "p\tq", Value: json.RawMessage(`["\n\n\n\n\n\n"]`)}},
		{{Name: "f\rg", Value: json.RawMessage(`{"h\"":"\\\\"}`)}},
		{{Name: "b\nc", Value: json.RawMessage(`{"x":"\"\n"}`)}, {Name: "b\nd", Value: json.RawMessage(`"\t"`)}},
	}
}

func escapedGot(m *contract.Message) [][]contract.Field {
	return [][]contract.Field{m.Extra, m.Provenance.Extra, m.Flags.Extra, m.Blocks[0].(*contract.TextBlock).Extra}
}

func TestDecodeKeepsEscapedUnknownMemberNames(t *testing.T) {
	m, err := contract.DecodeMessage([]byte(escapedMessageJSON))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := escapedGot(&m), escapedWant(); !reflect.DeepEqual(got, want) {
		t.Fatalf("unknown members decoded as\n%q\nwant\n%q", got, want)
	}
	// The same through a snapshot.
	s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "s",
		Revision: "r", ProjectRoot: "/p", Messages: []contract.Message{m}, ToolAtomicGroups: []contract.ToolAtomicGroup{}}
	b, err := contract.AppendSnapshotJSON(nil, &s)
	if err != nil {
		t.Fatal(err)
	}
	var back contract.HistorySnapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := escapedGot(&back.Messages[0]), escapedWant(); !reflect.DeepEqual(got, want) {
		t.Fatalf("unknown members read back from a snapshot as\n%q\nwant\n%q", got, want)
	}
}

// TestDecodeRepeatedEscapedName keeps the last value of a repeated unknown
// member whose name needs escapes, and keeps names that differ only after
// an escape apart.
func TestDecodeRepeatedEscapedName(t *testing.T) {
	m, err := contract.DecodeMessage([]byte(`{"id":"m1","sourceEntryId":"e1","role":"user","blocks":[],` +
		`"provenance":{"source":"pi-session","sessionId":"s","entryId":"e1"},"flags":{},` +
		`"a\nb":"\n1","a\nc":"\n2","a\nb":"\n3"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.Field{{Name: "a\nb", Value: json.RawMessage(`"\n3"`)}, {Name: "a\nc", Value: json.RawMessage(`"\n2"`)}}
	if !reflect.DeepEqual(m.Extra, want) {
		t.Fatalf("extra %q, want %q", m.Extra, want)
	}
}
