package gen

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
)

// SyntheticHistory describes a deterministic, realistic canonical history for
// benchmarks and long fixtures: a repeating conversation of user prompts,
// tool exchanges and answers in which about 40% of messages are tool
// messages and every tenth exchange is a parallel batch of three calls.
type SyntheticHistory struct {
	RuntimeID string
	SessionID string
	// TextBytes pads every text and tool result to about this many bytes
	// (0 keeps them short).
	TextBytes int
}

// Messages returns the first n messages of the history. The same
// description and n always give the same messages. The history may end in
// the middle of an exchange, leaving an incomplete live call.
func (h SyntheticHistory) Messages(n int) []contract.Message {
	out := make([]contract.Message, 0, n)
	pad := ""
	if h.TextBytes > 0 {
		pad = " " + strings.Repeat("lorem ipsum ", h.TextBytes/12)
	}
	add := func(role contract.Role, blocks ...contract.Block) {
		if len(out) == n {
			return
		}
		m := contract.NewRuntimeMessage(h.RuntimeID, h.SessionID, "e"+strconv.Itoa(len(out)+1), role, blocks...)
		out = append(out, m)
	}
	for x := 0; len(out) < n; x++ {
		calls := 1
		if x%10 == 9 {
			calls = 3
		}
		add(contract.RoleUser, &contract.TextBlock{Text: "Request " + strconv.Itoa(x) + pad})
		var blocks []contract.Block
		ids := make([]string, calls)
		for c := range ids {
			ids[c] = "call-" + strconv.Itoa(x) + "-" + strconv.Itoa(c)
			args, _ := json.Marshal(map[string]string{"path": "src/file" + strconv.Itoa(x) + ".go"})
			blocks = append(blocks, &contract.ToolCallBlock{ID: ids[c], Name: "read", Arguments: args})
		}
		add(contract.RoleAssistant, blocks...)
		for _, id := range ids {
			add(contract.RoleTool, &contract.ToolResultBlock{ToolCallID: id, ToolName: "read", Content: "package main" + pad})
		}
		add(contract.RoleAssistant, &contract.TextBlock{Text: "Answer " + strconv.Itoa(x) + pad})
		add(contract.RoleUser, &contract.TextBlock{Text: "Thanks" + pad})
	}
	return out
}
