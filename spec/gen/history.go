package gen

import (
	"strconv"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// HistoryOptions bounds the histories HistoryOf generates.
type HistoryOptions struct {
	// RuntimeID and SessionID are the identity the messages' provenance
	// refers to.
	RuntimeID string
	SessionID string
	// MinMessages and MaxMessages bound the number of messages (a
	// MaxMessages of 0 means 24).
	MinMessages int
	MaxMessages int
}

// History returns a generator of valid canonical histories of up to 24
// messages for the given runtime and session: ValidateHistorySnapshot
// reports nothing for a snapshot holding one with the groups
// BuildToolAtomicGroups derives. See HistoryOf.
func History(runtimeID, sessionID string) *rapid.Generator[[]contract.Message] {
	return HistoryOf(HistoryOptions{RuntimeID: runtimeID, SessionID: sessionID})
}

// HistoryOf returns a generator of valid canonical histories within the
// options' bounds. A history interleaves non-tool messages of all five roles
// and of every content block type with tool exchanges: single calls,
// parallel batches of up to three calls in one assistant message, results
// in any order and interleaved with other exchanges, tool messages holding
// the results of two calls, repeated results for an answered call, and
// calls left without a result (incomplete live calls) at the end or in the
// middle. Message ids are "<session>:e<n><tag>" and tool call ids
// "call-<n><tag>", where the digit-free tag draws from characters whose
// byte and UTF-16 orders differ, so every id is unique.
//
// A history is built from a list of independent steps, each of which
// yields one message; shrinking removes steps and simplifies them, and the
// history stays valid throughout, so a failing property reports a short
// history.
func HistoryOf(opts HistoryOptions) *rapid.Generator[[]contract.Message] {
	lo, hi := opts.MinMessages, opts.MaxMessages
	if hi <= 0 {
		hi = 24
	}
	if lo < 0 {
		lo = 0
	}
	if lo > hi {
		hi = lo
	}
	return rapid.Custom(func(t *rapid.T) []contract.Message {
		steps := rapid.SliceOfN(step(), lo, hi).Draw(t, "steps")
		return render(opts.RuntimeID, opts.SessionID, steps)
	})
}

type stepKind int

const (
	say    stepKind = iota // a message without tool blocks
	call                   // an assistant message with new tool calls
	answer                 // a tool message answering pending calls
)

// historyStep is one message of a history plan. Everything random about
// the message is drawn with the step, so removing a step while shrinking
// leaves the other steps exactly as they were. Ids and the pairing of
// results with calls are decided when the plan is rendered, so any subset
// of steps renders to a valid history.
type historyStep struct {
	kind     stepKind
	role     contract.Role
	entryTag string
	content  []contract.Block             // non-tool blocks
	calls    []*contract.ToolCallBlock    // call templates, ID holds the id tag (call)
	results  [2]*contract.ToolResultBlock // result templates (answer)
	pick     int                          // which pending call to answer (answer)
	share    int                          // >0: also answer another pending call (answer)
	again    bool                         // answer an already answered call (answer)
	atomic   bool                         // set flags.atomic on a tool message
	decorate func(m *contract.Message, runtimeID string)
}

func step() *rapid.Generator[historyStep] {
	return rapid.Custom(func(t *rapid.T) historyStep {
		var s historyStep
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			s.kind = say
			s.role = rapid.SampledFrom(roles).Draw(t, "role")
			s.content = rapid.SliceOfN(ContentBlock(), 0, 3).Draw(t, "content")
		case 1:
			s.kind = call
			s.role = contract.RoleAssistant
			s.calls = rapid.SliceOfN(callTemplate(), 1, 3).Draw(t, "calls")
			s.content = rapid.SliceOfN(rapid.OneOf(textBlock(), thinkingBlock()), 0, 1).Draw(t, "content")
			s.atomic = rapid.Bool().Draw(t, "atomicFlag")
		default:
			s.kind = answer
			s.role = contract.RoleTool
			s.pick = rapid.IntRange(0, 3).Draw(t, "pick")
			s.share = rapid.IntRange(0, 3).Draw(t, "share")
			s.again = rapid.IntRange(0, 5).Draw(t, "again") == 0
			s.results[0] = newResult(t, "", "")
			if s.share > 0 {
				s.results[1] = newResult(t, "", "")
			}
			s.content = rapid.SliceOfN(textBlock(), 0, 1).Draw(t, "content")
			s.atomic = rapid.Bool().Draw(t, "atomicFlag")
		}
		s.entryTag = tag().Draw(t, "entryTag")
		s.decorate = drawDecoration(t)
		return s
	})
}

func callTemplate() *rapid.Generator[*contract.ToolCallBlock] {
	return rapid.Custom(func(t *rapid.T) *contract.ToolCallBlock {
		return newCall(t, tag().Draw(t, "callTag"))
	})
}

func textBlock() *rapid.Generator[contract.Block] {
	return rapid.Custom(func(t *rapid.T) contract.Block {
		return &contract.TextBlock{Text: text().Draw(t, "text")}
	})
}

func thinkingBlock() *rapid.Generator[contract.Block] {
	return rapid.Custom(func(t *rapid.T) contract.Block {
		return &contract.ThinkingBlock{Thinking: text().Draw(t, "thinking")}
	})
}

type pendingCall struct{ id, name string }

// render turns a plan into messages without drawing anything.
func render(runtimeID, sessionID string, steps []historyStep) []contract.Message {
	out := make([]contract.Message, 0, len(steps))
	var pending, answered []pendingCall
	calls := 0
	for i, s := range steps {
		var blocks []contract.Block
		switch s.kind {
		case say:
			blocks = append(blocks, s.content...)
		case call:
			blocks = append(blocks, s.content...)
			for _, tmpl := range s.calls {
				calls++
				c := *tmpl
				c.ID = "call-" + strconv.Itoa(calls) + tmpl.ID
				blocks = append(blocks, &c)
				pending = append(pending, pendingCall{c.ID, c.Name})
			}
		case answer:
			var targets []pendingCall
			switch {
			case s.again && len(answered) > 0:
				targets = append(targets, answered[s.pick%len(answered)])
			case len(pending) > 0:
				var c pendingCall
				c, pending = take(pending, s.pick)
				targets = append(targets, c)
				if s.share > 0 && len(pending) > 0 {
					c, pending = take(pending, s.share)
					targets = append(targets, c)
				}
				answered = append(answered, targets...)
			}
			for k, c := range targets {
				r := *s.results[k]
				r.ToolCallID, r.ToolName = c.id, c.name
				blocks = append(blocks, &r)
			}
			blocks = append(blocks, s.content...)
		}
		m := baseMessage(runtimeID, sessionID, "e"+strconv.Itoa(i+1)+s.entryTag, s.role, blocks)
		s.decorate(&m, runtimeID)
		if s.atomic && isToolMessage(&m) {
			m.Flags.Atomic = new(true)
		}
		out = append(out, m)
	}
	return out
}

// take removes and returns the element at i modulo the slice's length.
func take(s []pendingCall, i int) (pendingCall, []pendingCall) {
	i %= len(s)
	c := s[i]
	return c, append(s[:i:i], s[i+1:]...)
}
