package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

const fullMessage = `{"id":"s:e1","sourceEntryId":"e1","role":"assistant","blocks":[` +
	`{"type":"text","text":"a <b> & ` + "\u2028" + `"},` +
	`{"type":"thinking","thinking":"t"},` +
	`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"x","n":1.5}},` +
	`{"type":"toolCall","id":"c2","name":"noargs"},` +
	`{"type":"toolResult","toolCallId":"c1","toolName":"read","content":"ok","isError":false},` +
	`{"type":"image","mimeType":"image/png","data":"AA=="},` +
	`{"type":"image"},` +
	`{"type":"fileReference","path":"a.go"},` +
	`{"type":"artifactReference","artifactId":"art"},` +
	`{"type":"summaryReference","summaryId":"sum"},` +
	`{"type":"opaqueProvider","originalType":"x","value":null},` +
	`{"type":"opaqueProvider","value":[1,{"k":"v"}],"vendor":"kept"}],` +
	`"createdAt":1767225600000,"provider":"p","model":"m",` +
	`"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e1","originalRole":"ai","runtimeId":"rt","extra":{"x":1}},` +
	`"tokenEstimate":12,"flags":{"pinned":true,"atomic":false,"localOnly":true,"synthetic":false,"future":"yes"},"unknownTop":[1,2]}`

func TestMessageRoundTripIsByteExact(t *testing.T) {
	m, err := contract.DecodeMessage([]byte(fullMessage))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Blocks) != 12 {
		t.Fatalf("decoded %d blocks, want 12", len(m.Blocks))
	}
	if call := m.Blocks[3].(*contract.ToolCallBlock); call.Arguments != nil {
		t.Errorf("absent arguments decoded as %s, want nil", call.Arguments)
	}
	if img := m.Blocks[6].(*contract.ImageBlock); img.MimeType != nil || img.Data != nil {
		t.Errorf("absent image fields decoded as present")
	}
	out, err := contract.AppendMessageJSON(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != fullMessage {
		t.Errorf("round trip changed the bytes\n got %s\nwant %s", out, fullMessage)
	}
}

func TestEncodingWritesIsErrorAndOmitsAbsentFields(t *testing.T) {
	m := contract.Message{
		ID: "s:e", SourceEntryID: "e", Role: contract.RoleTool,
		Blocks:     []contract.Block{&contract.ToolResultBlock{ToolCallID: "c", ToolName: "t", Content: ""}},
		Provenance: contract.Provenance{Source: contract.SourcePiSession, SessionID: "s", EntryID: "e"},
	}
	out, err := contract.AppendMessageJSON(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"s:e","sourceEntryId":"e","role":"tool","blocks":[{"type":"toolResult","toolCallId":"c","toolName":"t","content":"","isError":false}],"provenance":{"source":"pi-session","sessionId":"s","entryId":"e"},"flags":{}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestDecodeErrorsNameTheProblem(t *testing.T) {
	valid := func(edit func(string) string) string { return edit(fullMessage) }
	cases := []struct {
		name, doc, wantPath string
		wantErr             error
	}{
		{"unknown block type", valid(func(s string) string { return strings.Replace(s, `"type":"thinking"`, `"type":"poem"`, 1) }), "message.blocks[1].type", contract.ErrUnknownBlockType},
		{"missing type", valid(func(s string) string { return strings.Replace(s, `{"type":"thinking",`, `{`, 1) }), "message.blocks[1].type", contract.ErrMissingField},
		{"missing provenance", `{"id":"a","sourceEntryId":"e","role":"user","blocks":[],"flags":{}}`, "message.provenance", contract.ErrMissingField},
		{"missing flags", `{"id":"a","sourceEntryId":"e","role":"user","blocks":[],"provenance":{"source":"pi-session","sessionId":"s","entryId":"e"}}`, "message.flags", contract.ErrMissingField},
		{"bad role", valid(func(s string) string { return strings.Replace(s, `"role":"assistant"`, `"role":"robot"`, 1) }), "message.role", contract.ErrInvalidEnum},
		{"bad source", valid(func(s string) string { return strings.Replace(s, `"source":"runtime-session"`, `"source":"disk"`, 1) }), "message.provenance.source", contract.ErrInvalidEnum},
		{"missing isError", valid(func(s string) string { return strings.Replace(s, `,"isError":false`, ``, 1) }), "message.blocks[4].isError", contract.ErrMissingField},
		{"missing opaque value", valid(func(s string) string { return strings.Replace(s, `,"value":null`, ``, 1) }), "message.blocks[10].value", contract.ErrMissingField},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := contract.DecodeMessage([]byte(c.doc))
			var de *contract.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *DecodeError", err)
			}
			if de.Path != c.wantPath || !errors.Is(err, c.wantErr) {
				t.Errorf("err = %v (path %q), want path %q wrapping %v", err, de.Path, c.wantPath, c.wantErr)
			}
		})
	}
}

func TestDecodeRejectsWrongJSONTypes(t *testing.T) {
	for _, edit := range []struct{ from, to, path string }{
		{`"id":"s:e1"`, `"id":7`, "message.id"},
		{`"createdAt":1767225600000`, `"createdAt":"now"`, "message.createdAt"},
		{`"runtimeId":"rt"`, `"runtimeId":null`, "message.provenance.runtimeId"},
		{`"mimeType":"image/png"`, `"mimeType":null`, "message.blocks[5].mimeType"},
		{`"pinned":true`, `"pinned":"yes"`, "message.flags.pinned"},
		{`"isError":false`, `"isError":0`, "message.blocks[4].isError"},
		{`"blocks":[`, `"blocks":{"x":[`, "message.blocks"},
	} {
		doc := strings.Replace(fullMessage, edit.from, edit.to, 1)
		_, err := contract.DecodeMessage([]byte(doc))
		var de *contract.DecodeError
		if !errors.As(err, &de) || de.Path != edit.path {
			t.Errorf("%s → %s: err = %v, want a decode error at %s", edit.from, edit.to, err, edit.path)
		}
	}
}

func TestDecodeIsCaseSensitive(t *testing.T) {
	doc := strings.Replace(fullMessage, `"id":"s:e1"`, `"ID":"s:e1"`, 1)
	if _, err := contract.DecodeMessage([]byte(doc)); !errors.Is(err, contract.ErrMissingField) {
		t.Fatalf(`"ID" must not satisfy "id": err = %v`, err)
	}
}

func TestSnapshotJSONRoundTrip(t *testing.T) {
	m, err := contract.DecodeMessage([]byte(fullMessage))
	if err != nil {
		t.Fatal(err)
	}
	s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "s",
		Revision: "r", ProjectRoot: "/p", Messages: []contract.Message{m}}
	s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	b1, err := contract.AppendSnapshotJSON(nil, &s)
	if err != nil {
		t.Fatal(err)
	}
	var back contract.HistorySnapshot
	if err := json.Unmarshal(b1, &back); err != nil {
		t.Fatal(err)
	}
	b2, err := contract.AppendSnapshotJSON(nil, &back)
	if err != nil {
		t.Fatal(err)
	}
	if string(b1) != string(b2) {
		t.Errorf("snapshot round trip differs\n%s\n%s", b1, b2)
	}
}

func TestEncodeRefusesExtraFieldsShadowingContractFields(t *testing.T) {
	m := contract.Message{ID: "a", Blocks: []contract.Block{}, Extra: []contract.Field{{Name: "id", Value: json.RawMessage(`"b"`)}}}
	if _, err := contract.AppendMessageJSON(nil, &m); err == nil {
		t.Fatal("an Extra field named like a contract field must be refused")
	}
}

func TestCompletionResultWire(t *testing.T) {
	fb, _ := json.Marshal(contract.Fallback(contract.FallbackTransportFailed, "completion transport failed", true))
	if string(fb) != `{"status":"fallback","code":"transport-failed","reason":"completion transport failed","retryable":true}` {
		t.Errorf("fallback wire = %s", fb)
	}
	ok, _ := json.Marshal(contract.Completed(json.RawMessage(`{"a":1}`), contract.PrivacySummary{Provider: "p", Destination: contract.DestinationRemote}, nil))
	if string(ok) != `{"status":"completed","output":{"a":1},"privacy":{"provider":"p","destination":"remote","changed":false,"blockedBlocks":0,"secretRedactions":0}}` {
		t.Errorf("completed wire = %s", ok)
	}
	var back contract.CompletionResult
	if err := json.Unmarshal(fb, &back); err != nil || back.Code != contract.FallbackTransportFailed || !back.Retryable {
		t.Errorf("fallback decode = %+v, %v", back, err)
	}
}

func TestIsBlankMatchesJavaScript(t *testing.T) {
	if !contract.IsBlank("\u2029\u205f") || contract.IsBlank("\u200b") {
		t.Error("IsBlank disagrees with JavaScript's trim")
	}
}

func TestNormalizeReason(t *testing.T) {
	long := strings.Repeat("😀", 130) // 260 UTF-16 code units
	if got := contract.NormalizeReason(long); contract.UTF16Len(got) != 240 {
		t.Errorf("reason cut to %d code units, want 240", contract.UTF16Len(got))
	}
	if got := contract.NormalizeReason(" a \n\t b "); got != "a b" {
		t.Errorf("NormalizeReason = %q", got)
	}
}
