package spec

import (
	"encoding/json"
	"strconv"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
)

// historyGenerator draws valid canonical histories for runtimeID and
// sessionID: exchanges of a user prompt, assistant tool calls (sometimes a
// parallel batch, sometimes split across messages), their results in any
// order, and an answer; the last exchange may leave calls without results
// (an incomplete live call).
func historyGenerator(runtimeID, sessionID string) *rapid.Generator[[]contract.Message] {
	return rapid.Custom(func(t *rapid.T) []contract.Message {
		var out []contract.Message
		add := func(role contract.Role, blocks ...contract.Block) {
			entry := "e" + strconv.Itoa(len(out)+1)
			m := contract.Message{
				ID: sessionID + ":" + entry, SourceEntryID: entry, Role: role, Blocks: blocks,
				Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: sessionID, EntryID: entry, RuntimeID: new(runtimeID)},
			}
			if role == contract.RoleTool || (role == contract.RoleAssistant && blocks[0].Type() == contract.BlockToolCall) {
				m.Flags.Atomic = new(true)
			}
			out = append(out, m)
		}
		exchanges := rapid.IntRange(0, 6).Draw(t, "exchanges")
		call := 0
		for x := range exchanges {
			add(contract.RoleUser, &contract.TextBlock{Text: "request " + strconv.Itoa(x)})
			if rapid.Bool().Draw(t, "thinking") {
				add(contract.RoleAssistant, &contract.ThinkingBlock{Thinking: "plan " + strconv.Itoa(x)})
			}
			n := rapid.IntRange(0, 3).Draw(t, "calls")
			var ids []string
			var blocks []contract.Block
			together := rapid.Bool().Draw(t, "parallel")
			for range n {
				call++
				id := "call-" + strconv.Itoa(call)
				ids = append(ids, id)
				b := &contract.ToolCallBlock{ID: id, Name: "read", Arguments: json.RawMessage(`{"path":"f` + strconv.Itoa(call) + `.go"}`)}
				if together {
					blocks = append(blocks, b)
				} else {
					add(contract.RoleAssistant, b)
				}
			}
			if len(blocks) > 0 {
				add(contract.RoleAssistant, blocks...)
			}
			order := rapid.Permutation(ids).Draw(t, "result order")
			if x == exchanges-1 && len(order) > 0 {
				order = order[:rapid.IntRange(0, len(order)).Draw(t, "answered")]
			}
			for _, id := range order {
				add(contract.RoleTool, &contract.ToolResultBlock{ToolCallID: id, ToolName: "read", Content: "content of " + id, IsError: rapid.Bool().Draw(t, "is error")})
			}
			if x < exchanges-1 || rapid.Bool().Draw(t, "answer") {
				add(contract.RoleAssistant, &contract.TextBlock{Text: "answer " + strconv.Itoa(x)})
			}
		}
		return out
	})
}
