package conformance

import (
	"encoding/json"

	"github.com/ds4context/adapterkit/contract"
)

// FixtureVersion versions the conformance fixture.
const FixtureVersion = "runtime-adapter-conformance-fixture-v1"

// Fixture is the versioned input every conformance run starts from: a
// runtime identity, a selected model and a four-message canonical history
// with one complete tool exchange.
type Fixture struct {
	RuntimeID string                   `json:"runtimeId"`
	SessionID string                   `json:"sessionId"`
	Model     contract.ModelDescriptor `json:"model"`
	Messages  []contract.Message       `json:"messages"`
}

// The fixture's fixed values.
const (
	FixtureRuntimeID     = "conformance-runtime"
	FixtureSessionID     = "runtime-adapter-conformance-session"
	FixtureProvider      = "conformance-remote"
	FixtureModelID       = "conformance-model"
	FixtureToolCallID    = "tool-call-1"
	fixtureContextWindow = 32768
	fixtureMaxTokens     = 4096
)

// NewFixture returns a fresh copy of the conformance fixture; callers may
// modify it freely.
func NewFixture() Fixture {
	// Messages holding the tool call and its result are flagged atomic.
	msg := func(entry string, role contract.Role, tokens float64, blocks ...contract.Block) contract.Message {
		m := contract.NewRuntimeMessage(FixtureRuntimeID, FixtureSessionID, entry, role, blocks...)
		m.TokenEstimate = new(tokens)
		return m
	}
	return Fixture{
		RuntimeID: FixtureRuntimeID,
		SessionID: FixtureSessionID,
		Model: contract.ModelDescriptor{
			Provider:      FixtureProvider,
			ID:            FixtureModelID,
			ContextWindow: fixtureContextWindow,
			MaxTokens:     new(int64(fixtureMaxTokens)),
			Reasoning:     new(false),
			Input:         []string{"text"},
		},
		Messages: []contract.Message{
			msg("entry-user", contract.RoleUser, 8,
				&contract.TextBlock{Text: "Inspect the reference project."}),
			msg("entry-call", contract.RoleAssistant, 12,
				&contract.ToolCallBlock{ID: FixtureToolCallID, Name: "read", Arguments: json.RawMessage(`{"path":"src/index.ts"}`)}),
			msg("entry-result", contract.RoleTool, 10,
				&contract.ToolResultBlock{ToolCallID: FixtureToolCallID, ToolName: "read", Content: "export const ready = true;"}),
			msg("entry-assistant", contract.RoleAssistant, 7,
				&contract.TextBlock{Text: "The project is ready."}),
		},
	}
}

// MessageIDs returns the ids of the fixture's messages in order.
func (f Fixture) MessageIDs() []string {
	ids := make([]string, len(f.Messages))
	for i := range f.Messages {
		ids[i] = f.Messages[i].ID
	}
	return ids
}

// clone returns a deep copy of f.
func (f Fixture) clone() Fixture {
	f.Messages = contract.CloneMessages(f.Messages)
	if m := contract.CloneModel(&f.Model); m != nil {
		f.Model = *m
	}
	return f
}
