package contract_test

import (
	"encoding/json"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
)

func ExampleNegotiateCapabilities() {
	declarations := []contract.CapabilityDeclaration{
		{ID: contract.CapabilityEmbeddings, Supported: true, Version: "embedding-port-v1"},
		{ID: contract.CapabilityCompaction, Supported: false, Reason: "no native compaction hook"},
	}
	requests := []contract.CapabilityRequest{
		{ID: contract.CapabilityEmbeddings},
		{ID: contract.CapabilityCompaction, Required: true},
	}
	n := contract.NegotiateCapabilities(declarations, requests)
	fmt.Println("enabled:", n.Enabled)
	fmt.Println("disabled:", n.Disabled)
	for _, d := range n.Diagnostics {
		fmt.Println(d.Severity, d.Code+":", d.Message)
	}
	// Output:
	// enabled: [embeddings]
	// disabled: [compaction]
	// warning capability-unsupported: Required runtime capability compaction is disabled: no native compaction hook
}

func ExampleBuildToolAtomicGroups() {
	msg := func(entry string, role contract.Role, blocks ...contract.Block) contract.Message {
		return contract.Message{
			ID: "s:" + entry, SourceEntryID: entry, Role: role, Blocks: blocks,
			Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: "s", EntryID: entry, RuntimeID: new("rt")},
		}
	}
	history := []contract.Message{
		msg("e1", contract.RoleUser, &contract.TextBlock{Text: "list and read"}),
		// A parallel batch: two calls in one assistant message.
		msg("e2", contract.RoleAssistant,
			&contract.ToolCallBlock{ID: "ls", Name: "ls", Arguments: json.RawMessage(`{}`)},
			&contract.ToolCallBlock{ID: "cat", Name: "cat", Arguments: json.RawMessage(`{"path":"a"}`)}),
		msg("e3", contract.RoleTool, &contract.ToolResultBlock{ToolCallID: "cat", ToolName: "cat", Content: "A"}),
		msg("e4", contract.RoleTool, &contract.ToolResultBlock{ToolCallID: "ls", ToolName: "ls", Content: "a"}),
		// A live call still waiting for its result.
		msg("e5", contract.RoleAssistant, &contract.ToolCallBlock{ID: "grep", Name: "grep"}),
	}
	for _, g := range contract.BuildToolAtomicGroups(history) {
		fmt.Println(g.MessageIDs, g.ToolCallIDs, "complete:", g.Complete)
	}
	// Output:
	// [s:e2 s:e3 s:e4] [cat ls] complete: true
	// [s:e5] [grep] complete: false
}

func ExampleValidateHistorySnapshot() {
	history := []contract.Message{{
		ID: "s:e1", SourceEntryID: "e1", Role: contract.RoleTool,
		Blocks:     []contract.Block{&contract.ToolResultBlock{ToolCallID: "missing", ToolName: "read", Content: "?"}},
		Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: "s", EntryID: "e1", RuntimeID: new("rt")},
	}}
	snapshot := contract.HistorySnapshot{
		SchemaVersion: contract.HistorySchemaVersion,
		RuntimeID:     "rt", SessionID: "s", Revision: "r1", ProjectRoot: "/work/project",
		Messages:         history,
		ToolAtomicGroups: contract.BuildToolAtomicGroups(history),
	}
	for _, issue := range contract.ValidateHistorySnapshot(&snapshot) {
		fmt.Println(issue.Code, *issue.ToolCallID)
	}
	// Output:
	// tool-result-orphaned missing
}
