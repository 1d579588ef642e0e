package conformance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
)

// maxShapeMessages bounds how many messages a shape lists one by one.
const maxShapeMessages = 16

// historyShape describes a history without its text: each message's role
// and block kinds, e.g. "user[text] assistant[toolCall×2] tool[toolResult]", and
// the number of tool calls and results.
func historyShape(ms []contract.Message) string {
	if len(ms) == 0 {
		return "(empty)"
	}
	parts := make([]string, len(ms))
	calls, results := 0, 0
	for i := range ms {
		var kinds []string
		count := map[contract.BlockType]int{}
		for _, b := range ms[i].Blocks {
			t := b.Type()
			if count[t] == 0 {
				kinds = append(kinds, string(t))
			}
			count[t]++
			switch t {
			case contract.BlockToolCall:
				calls++
			case contract.BlockToolResult:
				results++
			}
		}
		for j, k := range kinds {
			if n := count[contract.BlockType(k)]; n > 1 {
				kinds[j] = k + "×" + strconv.Itoa(n)
			}
		}
		parts[i] = string(ms[i].Role) + "[" + strings.Join(kinds, ",") + "]"
	}
	if len(parts) > maxShapeMessages {
		parts = append(parts[:maxShapeMessages:maxShapeMessages], fmt.Sprintf("… (%d more)", len(ms)-maxShapeMessages))
	}
	return fmt.Sprintf("%d messages, %d calls, %d results: %s", len(ms), calls, results, strings.Join(parts, " "))
}
