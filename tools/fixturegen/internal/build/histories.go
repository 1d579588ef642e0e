package build

import (
	"encoding/json"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/fixtures"
)

// history is the definition of one valid fixture history.
type history struct {
	name        string
	description string
	messages    func() []contract.Message
}

// histories defines the valid history corpus, in corpus order.
func histories() []history {
	return []history{
		{fixtures.HistoryEmpty, "A history with no messages: no groups, no issues.", func() []contract.Message { return nil }},
		{fixtures.HistoryNoTools, "A conversation without tool calls: system, user, assistant with thinking; no groups.", noTools},
		{fixtures.HistorySingleExchange, "One complete tool exchange between a user prompt and an answer.", singleExchange},
		{fixtures.HistoryParallelBatch, "One assistant message calling three tools; results arrive out of order; one complete group.", parallelBatch},
		{fixtures.HistoryIncompleteLiveCall, "A complete exchange followed by a live call still waiting for its result: an incomplete group.", incompleteLiveCall},
		{fixtures.HistoryInterleaved, "Two exchanges whose calls and results interleave: two complete groups.", interleaved},
		{fixtures.HistorySharedResultMessage, "Two calls in separate messages answered by one tool message: one group of three messages.", sharedResult},
		{fixtures.HistoryAllBlockTypes, "Every block type and optional field, a pi-session message, and unknown members that must survive a round trip.", allBlockTypes},
		{fixtures.HistoryLong10000, "10,000 messages of contract/gen's synthetic history: about 40% tool messages and a parallel batch every tenth exchange.", long10000},
	}
}

// snapshotOf builds the fixture snapshot of messages: the fixture identity
// and the derived groups.
func snapshotOf(messages []contract.Message) contract.HistorySnapshot {
	if messages == nil {
		messages = []contract.Message{}
	}
	return contract.HistorySnapshot{
		SchemaVersion:    contract.HistorySchemaVersion,
		RuntimeID:        fixtures.HistoryRuntimeID,
		SessionID:        fixtures.HistorySessionID,
		Revision:         fixtures.HistoryRevision,
		ProjectRoot:      fixtures.ProjectRoot,
		Messages:         messages,
		ToolAtomicGroups: contract.BuildToolAtomicGroups(messages),
	}
}

// msg builds a runtime-session message of the fixture session; tool
// messages are flagged atomic.
func msg(entry string, role contract.Role, blocks ...contract.Block) contract.Message {
	return contract.NewRuntimeMessage(fixtures.HistoryRuntimeID, fixtures.HistorySessionID, entry, role, blocks...)
}

func text(s string) contract.Block { return &contract.TextBlock{Text: s} }

func call(id, name, args string) contract.Block {
	return &contract.ToolCallBlock{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func result(id, name, content string) contract.Block {
	return &contract.ToolResultBlock{ToolCallID: id, ToolName: name, Content: content}
}

func noTools() []contract.Message {
	return []contract.Message{
		msg("e1", contract.RoleSystem, text("You are a careful assistant.")),
		msg("e2", contract.RoleUser, text("What does the project do?")),
		msg("e3", contract.RoleAssistant, &contract.ThinkingBlock{Thinking: "Summarise the README."}, text("It converts histories.")),
		msg("e4", contract.RoleUser, text("Thanks.")),
	}
}

func singleExchange() []contract.Message {
	return []contract.Message{
		msg("e1", contract.RoleUser, text("Read the entry point.")),
		msg("e2", contract.RoleAssistant, call("call-1", "read", `{"path":"main.go"}`)),
		msg("e3", contract.RoleTool, result("call-1", "read", "package main")),
		msg("e4", contract.RoleAssistant, text("It is a Go program.")),
	}
}

func parallelBatch() []contract.Message {
	return []contract.Message{
		msg("e1", contract.RoleUser, text("Read three files.")),
		msg("e2", contract.RoleAssistant,
			call("batch-1", "read", `{"path":"a.go"}`),
			call("batch-2", "read", `{"path":"b.go"}`),
			call("batch-3", "read", `{"path":"c.go"}`)),
		msg("e3", contract.RoleTool, result("batch-2", "read", "package b")),
		msg("e4", contract.RoleTool, result("batch-1", "read", "package a")),
		msg("e5", contract.RoleTool, result("batch-3", "read", "package c")),
		msg("e6", contract.RoleAssistant, text("Three packages.")),
	}
}

func incompleteLiveCall() []contract.Message {
	return []contract.Message{
		msg("e1", contract.RoleUser, text("List the files, then run the tests.")),
		msg("e2", contract.RoleAssistant, call("call-ls", "bash", `{"cmd":"ls"}`)),
		msg("e3", contract.RoleTool, result("call-ls", "bash", "go.mod\nmain.go")),
		msg("e4", contract.RoleAssistant, text("Running the tests now."), call("call-test", "bash", `{"cmd":"go test ./..."}`)),
	}
}

func interleaved() []contract.Message {
	return []contract.Message{
		msg("e1", contract.RoleUser, text("Check both modules.")),
		msg("e2", contract.RoleAssistant, call("first", "read", `{"path":"a/go.mod"}`)),
		msg("e3", contract.RoleAssistant, call("second", "read", `{"path":"b/go.mod"}`)),
		msg("e4", contract.RoleTool, result("second", "read", "module b")),
		msg("e5", contract.RoleTool, result("first", "read", "module a")),
		msg("e6", contract.RoleAssistant, text("Both are modules.")),
	}
}

func sharedResult() []contract.Message {
	return []contract.Message{
		msg("e1", contract.RoleUser, text("Compare the two files.")),
		msg("e2", contract.RoleAssistant, call("left", "read", `{"path":"left.txt"}`)),
		msg("e3", contract.RoleAssistant, call("right", "read", `{"path":"right.txt"}`)),
		msg("e4", contract.RoleTool, result("left", "read", "l"), result("right", "read", "r")),
		msg("e5", contract.RoleAssistant, text("They differ.")),
	}
}

func allBlockTypes() []contract.Message {
	extra := func(name, value string) []contract.Field {
		return []contract.Field{{Name: name, Value: json.RawMessage(value)}}
	}
	system := msg("e1", contract.RoleSystem, text("System prompt."))
	system.Flags.Pinned = new(true)
	system.Flags.Synthetic = new(false)

	pi := contract.Message{
		ID:            fixtures.HistorySessionID + ":pi-1",
		SourceEntryID: "pi-1",
		Role:          contract.RoleUser,
		Blocks: []contract.Block{
			&contract.TextBlock{Text: "Read <main.go> & report \u2028 done", Extra: extra("cacheControl", `{"type":"ephemeral"}`)},
			&contract.ImageBlock{MimeType: new("image/png"), Data: new("iVBORw0KGgo=")},
			&contract.ImageBlock{},
			&contract.FileReferenceBlock{Path: "docs/README.md"},
		},
		CreatedAt: new(float64(1767225600000)),
		Provenance: contract.Provenance{
			Source:       contract.SourcePiSession,
			SessionID:    fixtures.HistorySessionID,
			EntryID:      "pi-1",
			OriginalRole: new("human"),
			Extra:        extra("branch", `"main"`),
		},
		Flags: contract.Flags{LocalOnly: new(true), Extra: extra("origin", `"import"`)},
		Extra: extra("custom", `{"nested":[1,2.5,null,true]}`),
	}

	assistant := msg("e3", contract.RoleAssistant,
		&contract.ThinkingBlock{Thinking: "Plan: read, then summarise.", Extra: extra("signature", `"sig-1"`)},
		call("call-all", "read", `{"path":"main.go","limit":40}`),
		&contract.ToolCallBlock{ID: "call-noargs", Name: "status"},
	)
	assistant.Provider = new("ollama")
	assistant.Model = new("codestral")
	assistant.TokenEstimate = new(float64(31))

	tool := msg("e4", contract.RoleTool,
		result("call-all", "read", "package main\n\nfunc main() {}\n"),
		&contract.ToolResultBlock{ToolCallID: "call-noargs", ToolName: "status", Content: "unavailable", IsError: true},
	)

	refs := msg("e5", contract.RoleCustom,
		&contract.ArtifactReferenceBlock{ArtifactID: "artifact-1"},
		&contract.SummaryReferenceBlock{SummaryID: "summary-1"},
		&contract.OpaqueProviderBlock{OriginalType: new("redacted_thinking"), Value: json.RawMessage(`{"data":"opaque"}`)},
		&contract.OpaqueProviderBlock{Value: json.RawMessage(`null`)},
	)
	refs.Flags.Atomic = new(false)

	return []contract.Message{system, pi, assistant, tool, refs, msg("e6", contract.RoleAssistant, text("Done: \u00e9\u4e16\U0001F600."))}
}

func long10000() []contract.Message {
	return gen.SyntheticHistory{RuntimeID: fixtures.HistoryRuntimeID, SessionID: fixtures.HistorySessionID}.Messages(10000)
}
