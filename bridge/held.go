package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// heldBudget bounds the bytes of the messages held at once — by one
// connection, or by every connection of one factory: a response from the
// line that carried it until its call has decoded it, a request from the
// line that carried it until it is answered. The line bound caps one
// message; this caps them all together, whatever the other side sends at
// once.
type heldBudget struct {
	max int64

	mu   sync.Mutex
	held int64
}

// newHeldBudget returns a budget of max bytes.
func newHeldBudget(max int) *heldBudget { return &heldBudget{max: int64(max)} }

// take reserves n bytes, or reports false, with the bytes held, when they
// would pass the bound.
func (b *heldBudget) take(n int) (held int64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+int64(n) > b.max {
		return b.held, false
	}
	b.held += int64(n)
	return b.held, true
}

// tooMuch is the error of a message of n bytes, what (an answer, a
// request), that does not fit beside the bytes held: it names the bound.
func (b *heldBudget) tooMuch(what string, n int, held int64) error {
	return fmt.Errorf("%w: %s of %d bytes beside the %d bytes held would pass the bound of %d bytes (MaxHeldBytes)",
		ErrHeldTooLarge, what, n, held, b.max)
}

// release gives back n bytes taken.
func (b *heldBudget) release(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= int64(n)
	b.mu.Unlock()
}

// maxNesting is how deep a protocol message may nest JSON: the depth
// encoding/json decodes.
const maxNesting = 10000

// parseError says why line, which err says does not decode as a protocol
// message, broke the connection: nesting beyond maxNesting, with the depth
// the line reaches, or not being a protocol message.
func parseError(line []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset >= 0 && nesting(line[:min(int(se.Offset)+1, len(line))]) > maxNesting {
		return fmt.Errorf("%w: a line nests JSON %d levels deep, beyond the %d levels a protocol message may nest", ErrProtocol, nesting(line), maxNesting)
	}
	return fmt.Errorf("%w: a line is not a JSON protocol message", ErrProtocol)
}

// nesting returns how deep the arrays and objects of b nest (strings
// skipped), whether or not b is valid JSON.
func nesting(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
