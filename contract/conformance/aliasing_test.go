package conformance

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// everyMemberSnapshot is a valid snapshot holding all nine block types and
// every optional member, unknown members included.
func everyMemberSnapshot() contract.HistorySnapshot {
	extra := func() []contract.Field {
		return []contract.Field{{Name: "x-kept", Value: json.RawMessage(`{"a":[1,2]}`)}}
	}
	str := func(s string) *string { return &s }
	m := contract.NewRuntimeMessage(FixtureRuntimeID, FixtureSessionID, "entry-all", contract.RoleAssistant,
		&contract.TextBlock{Text: "t", Extra: extra()},
		&contract.ThinkingBlock{Thinking: "th", Extra: extra()},
		&contract.ToolCallBlock{ID: "call-1", Name: "read", Arguments: json.RawMessage(`{"p":"x"}`), Extra: extra()},
		&contract.ImageBlock{MimeType: str("image/png"), Data: str("AAAA"), Extra: extra()},
		&contract.FileReferenceBlock{Path: "a.go", Extra: extra()},
		&contract.ArtifactReferenceBlock{ArtifactID: "art", Extra: extra()},
		&contract.SummaryReferenceBlock{SummaryID: "sum", Extra: extra()},
		&contract.OpaqueProviderBlock{OriginalType: str("native"), Value: json.RawMessage(`[true]`), Extra: extra()})
	m.CreatedAt, m.TokenEstimate = new(float64(1700000000000)), new(float64(12))
	m.Provider, m.Model = str("p"), str("m")
	m.Provenance.OriginalRole = str("bot")
	m.Provenance.Extra, m.Flags.Extra, m.Extra = extra(), extra(), extra()
	m.Flags.Pinned, m.Flags.LocalOnly, m.Flags.Synthetic = new(true), new(false), new(false)
	r := contract.NewRuntimeMessage(FixtureRuntimeID, FixtureSessionID, "entry-result", contract.RoleTool,
		&contract.ToolResultBlock{ToolCallID: "call-1", ToolName: "read", Content: "ok", Extra: extra()})
	msgs := []contract.Message{m, r}
	return contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: FixtureRuntimeID, SessionID: FixtureSessionID,
		Revision: "r", ProjectRoot: "/root", Messages: msgs, ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs)}
}

// An adapter that shares any part of its state with a snapshot it returns
// is caught: editSnapshot changes every block through its pointer, every
// optional member, every raw value and unknown member, the slices
// themselves and every group slice.
func TestEditSnapshotReachesEveryMember(t *testing.T) {
	s := everyMemberSnapshot()
	if is := contract.ValidateHistorySnapshot(&s); len(is) > 0 {
		t.Fatalf("the test snapshot is invalid: %v", issueCodes(is))
	}
	want := contract.CloneSnapshot(&s)
	// What a shallow copy would share with the adapter.
	blocks := [][]contract.Block{}
	for _, m := range s.Messages {
		blocks = append(blocks, append([]contract.Block(nil), m.Blocks...))
	}
	msgs := s.Messages[:len(s.Messages):len(s.Messages)]
	blockSlice := s.Messages[0].Blocks
	m0 := s.Messages[0]
	groupIDs, groupCalls := s.ToolAtomicGroups[0].MessageIDs, s.ToolAtomicGroups[0].ToolCallIDs
	groups := s.ToolAtomicGroups

	editSnapshot(&s)

	for i, bs := range blocks {
		for j, b := range bs {
			got, _ := json.Marshal(b)
			orig, _ := json.Marshal(want.Messages[i].Blocks[j])
			if string(got) == string(orig) {
				t.Errorf("message %d block %d (%s): the block behind the pointer is unchanged", i, j, b.Type())
			}
		}
	}
	for i := range msgs {
		if d := messagesDiff(want.Messages[i:i+1], msgs[i:i+1]); d == "" {
			t.Errorf("message %d in the shared messages array is unchanged", i)
		}
	}
	if _, ok := blockSlice[0].(*contract.TextBlock); !ok || blockSlice[0] == blocks[0][0] {
		t.Error("the shared block slice still holds the original first block")
	}
	for name, changed := range map[string]bool{
		"createdAt":     *m0.CreatedAt != *want.Messages[0].CreatedAt,
		"tokenEstimate": *m0.TokenEstimate != *want.Messages[0].TokenEstimate,
		"provider":      *m0.Provider != *want.Messages[0].Provider,
		"model":         *m0.Model != *want.Messages[0].Model,
		"runtimeId":     *m0.Provenance.RuntimeID != *want.Messages[0].Provenance.RuntimeID,
		"originalRole":  *m0.Provenance.OriginalRole != *want.Messages[0].Provenance.OriginalRole,
		"flags":         *m0.Flags.Pinned != *want.Messages[0].Flags.Pinned && *m0.Flags.Atomic != *want.Messages[0].Flags.Atomic,
		"extra":         string(m0.Extra[0].Value) != string(want.Messages[0].Extra[0].Value),
		"group ids":     groupIDs[0] != want.ToolAtomicGroups[0].MessageIDs[0],
		"group calls":   groupCalls[0] != want.ToolAtomicGroups[0].ToolCallIDs[0],
		"groups":        (diffGroups(groups, want.ToolAtomicGroups) == "") == false,
	} {
		if !changed {
			t.Errorf("%s: a shared value is unchanged", name)
		}
	}
}

// Each payload form is inspectable, holds the probes and is rebuilt equal.
func TestPayloadFormsAreFreshAndHoldProbes(t *testing.T) {
	for _, f := range payloadForms() {
		a, b := f.make(), f.make()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two builds differ", f.name)
		}
		ja, err := json.Marshal(a)
		if raw, ok := a.([]byte); ok {
			ja = raw // a JSON document in a byte buffer, as the privacy engine reads it
		}
		if err != nil || !ContainsProbe(ja) {
			t.Errorf("%s: marshal %v, probe %t", f.name, err, ContainsProbe(ja))
		}
	}
}
