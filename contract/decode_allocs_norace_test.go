//go:build !race

package contract_test

import (
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// stringValues counts the string values of a JSON document (member names
// not included).
func stringValues(t *testing.T, doc []byte) int {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var count func(v any) int
	count = func(v any) int {
		switch v := v.(type) {
		case string:
			return 1
		case []any:
			n := 0
			for _, x := range v {
				n += count(x)
			}
			return n
		case map[string]any:
			n := 0
			for _, x := range v {
				n += count(x)
			}
			return n
		}
		return 0
	}
	return count(v)
}

// walkAllocs is what the walk over a document may allocate besides what it
// returns.
const walkAllocs = 3

// objects counts what a decoded message holds beyond its own struct, as
// separate allocations at most: its block structs and their slice, each
// optional field set, each unknown member's value and slice, and each
// raw value.
func objects(m *contract.Message) int {
	n := 0
	set := func(present ...bool) {
		for _, p := range present {
			if p {
				n++
			}
		}
	}
	extra := func(fs []contract.Field) {
		if len(fs) > 0 {
			n += 1 + len(fs)
		}
	}
	set(len(m.Blocks) > 0, m.CreatedAt != nil, m.Provider != nil, m.Model != nil, m.TokenEstimate != nil,
		m.Provenance.OriginalRole != nil, m.Provenance.RuntimeID != nil,
		m.Flags.Pinned != nil, m.Flags.Atomic != nil, m.Flags.LocalOnly != nil, m.Flags.Synthetic != nil)
	extra(m.Extra)
	extra(m.Provenance.Extra)
	extra(m.Flags.Extra)
	for _, b := range m.Blocks {
		n++
		switch b := b.(type) {
		case *contract.TextBlock:
			extra(b.Extra)
		case *contract.ToolCallBlock:
			set(len(b.Arguments) > 0)
			extra(b.Extra)
		case *contract.ToolResultBlock:
			extra(b.Extra)
		default:
			n += 4 // the fixture holds none; a loose allowance
		}
	}
	return n
}

// Decoding a message allocates about what it returns and nothing that
// grows with the document's member names: at most one allocation per
// object it holds and per string value, and a few for the walk itself.
// Decoders are reused between documents, so member names, the scanner and
// the error path cost nothing once a first document has been decoded; a
// decoder made afresh for each document cost some twenty allocations more
// per message. (The race detector makes pools drop what they keep, hence
// the build tag.)
func TestDecodeMessageAllocatesOnlyWhatItReturns(t *testing.T) {
	for _, m := range conformance.NewFixture().Messages {
		doc, err := contract.AppendMessageJSON(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		decode := testing.AllocsPerRun(100, func() {
			if _, err := contract.DecodeMessage(doc); err != nil {
				t.Fatal(err)
			}
		})
		if limit := objects(&m) + stringValues(t, doc) + walkAllocs; decode > float64(limit) {
			t.Errorf("%s: decoding allocates %.0f times, more than the %d objects and string values it returns and %d for the walk", m.ID, decode, limit-walkAllocs, walkAllocs)
		}
	}
}
