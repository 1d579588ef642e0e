package contract_test

import (
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

func TestNewRuntimeMessage(t *testing.T) {
	m := contract.NewRuntimeMessage("rt", "s", "e1", contract.RoleTool,
		&contract.ToolResultBlock{ToolCallID: "c", ToolName: "t"})
	got, err := contract.AppendMessageJSON(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"s:e1","sourceEntryId":"e1","role":"tool","blocks":[{"type":"toolResult","toolCallId":"c","toolName":"t","content":"","isError":false}],` +
		`"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e1","runtimeId":"rt"},"flags":{"atomic":true}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	plain := contract.NewRuntimeMessage("rt", "s", "e2", contract.RoleUser, &contract.TextBlock{Text: "hi"})
	if plain.Flags.Atomic != nil {
		t.Error("a message without tool blocks must not be flagged atomic")
	}
	s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "s", Revision: "r",
		ProjectRoot: "/p", Messages: []contract.Message{plain}}
	if issues := contract.BuildAndValidateSnapshot(&s); len(issues) != 0 {
		t.Errorf("a built message must validate in its session: %v", issues)
	}
}
