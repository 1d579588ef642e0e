package gen

import (
	"math"
	"slices"
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
	// MinMessages and MaxMessages bound the number of messages. A
	// MaxMessages of 0 means History's sizes: up to 24 messages (at least
	// MinMessages), except that about one history in sixteen is long,
	// between 100 and 3,000 messages.
	MinMessages int
	MaxMessages int
}

// The sizes of default-sized histories: most hold up to smallMax messages;
// one in longOdds holds longMin to longMax, spread roughly evenly on a log
// scale, and repeats a plan of up to longPlan steps.
const (
	smallMax = 24
	longOdds = 16
	longMin  = 100
	longMax  = 3000
	longPlan = 32
)

// History returns a generator of valid canonical histories for the given
// runtime and session: ValidateHistorySnapshot reports nothing for a
// snapshot holding one with the groups BuildToolAtomicGroups derives. Most
// hold up to 24 messages; about one in sixteen holds 100 to 3,000. See
// HistoryOf.
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
// middle. Unknown members appear in messages, provenance, flags and blocks.
//
// Message ids are "<session>:e<tag><n><end>" and tool call ids
// "call-<tag><n><end>", where n counts messages (calls), the digit-free tag
// starts with one of "a", "é", U+E000 (a private-use character) and U+1F600
// (outside the Basic Multilingual Plane) and holds case traps, a combining
// mark and a noncharacter now and then, and end is empty but for about
// one id in ten, which ends in whitespace (that JavaScript's trim, Go's
// strings.TrimSpace, both or neither remove, or a carriage return). About
// one entry id and one tool call id in 25 is whitespace alone: U+0085 and
// spaces, blank to strings.TrimSpace but not to JavaScript's trim, so the
// history stays valid. Two ids often first differ in the tag, and U+E000
// sorts before U+1F600 by bytes but after it in UTF-16 order, so byte order
// and UTF-16 order often disagree on the order of a history's groups and of
// the tool call ids inside a group. The counter keeps every id unique.
//
// In about one history in eight every message carries createdAt, ascending
// with history order; in about one in eight every message carries it in no
// particular order. Otherwise createdAt, like every optional member, is
// present on some messages only.
//
// A history is built from a plan, a list of independent steps, each of
// which yields one message; shrinking removes steps and simplifies them, and
// the history stays valid throughout, so a failing property reports a short
// history. A long history repeats a plan of up to 32 steps with fresh ids,
// answering pending calls in a different order on each repetition, so it
// costs little more to draw than a short one and shrinks quickly.
func HistoryOf(opts HistoryOptions) *rapid.Generator[[]contract.Message] {
	return historyOf(opts, 0)
}

// historyOf is HistoryOf drawing none of the families in leave.
func historyOf(opts HistoryOptions, leave familySet) *rapid.Generator[[]contract.Message] {
	lo, hi := max(opts.MinMessages, 0), opts.MaxMessages
	defaultSize := hi <= 0
	if defaultSize {
		hi = smallMax
	}
	hi = max(hi, lo)
	return rapid.Custom(func(t *rapid.T) []contract.Message {
		var plan []historyStep
		n := 0
		if defaultSize && !leave.has(FamilyLongHistory) && rapid.IntRange(0, longOdds-1).Draw(t, "long") == longOdds-1 {
			n = logSize(t, max(lo, longMin), max(lo, longMax))
			plan = rapid.SliceOfN(step(leave), 1, longPlan).Draw(t, "plan")
		} else {
			plan = rapid.SliceOfN(step(leave), lo, hi).Draw(t, "steps")
			n = len(plan)
		}
		clock := clockMode(rapid.IntRange(0, 7).Draw(t, "clock"))
		return render(opts.RuntimeID, opts.SessionID, plan, n, clock, leave)
	})
}

// logSize draws a size in [lo, hi], spread roughly evenly on a log scale
// (64 levels); smaller sizes are simpler for the shrinker.
func logSize(t *rapid.T, lo, hi int) int {
	level := 8*rapid.IntRange(0, 7).Draw(t, "sizeOctave") + rapid.IntRange(0, 7).Draw(t, "sizeStep")
	n := int(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), float64(level)/63)))
	return min(max(n, lo), hi)
}

// clockMode says how createdAt is set across a history: values below
// clockAscending leave it to each message's decoration.
type clockMode int

const (
	clockAscending clockMode = 6 // every message, ascending
	clockShuffled  clockMode = 7 // every message, in no particular order
)

// clockBase is the createdAt (ms since the Unix epoch) the clock starts at:
// 2026-01-01T00:00:00Z.
const clockBase = 1_767_225_600_000

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
	entry    idShape
	content  []contract.Block             // non-tool blocks
	calls    []*contract.ToolCallBlock    // call templates (call)
	callIDs  []idShape                    // the shapes of their ids (call)
	results  [2]*contract.ToolResultBlock // result templates (answer)
	pick     int                          // which pending call to answer (answer)
	share    int                          // >0: also answer another pending call (answer)
	again    bool                         // answer an already answered call (answer)
	atomic   bool                         // set flags.atomic on a tool message
	tick     int                          // ms to the next message, or the offset of a shuffled createdAt
	decorate func(m *contract.Message, runtimeID string)
}

// step draws one step of a plan, none of whose shapes is a family in leave.
func step(leave familySet) *rapid.Generator[historyStep] {
	maxCalls := 3
	if leave.has(FamilyParallelBatch) {
		maxCalls = 1
	}
	callContent := rapid.OneOf(textBlock(), thinkingBlock())
	if leave.has(FamilyThinking) {
		callContent = textBlock()
	}
	return rapid.Custom(func(t *rapid.T) historyStep {
		var s historyStep
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			s.kind = say
			s.role = rapid.SampledFrom(roles).Draw(t, "role")
			s.content = rapid.SliceOfN(contentBlock(leave), 0, 3).Draw(t, "content")
		case 1:
			s.kind = call
			s.role = contract.RoleAssistant
			s.calls = rapid.SliceOfN(callTemplate(leave), 1, maxCalls).Draw(t, "calls")
			for range s.calls {
				s.callIDs = append(s.callIDs, drawIDShape(t, "callId"))
			}
			s.content = rapid.SliceOfN(callContent, 0, 1).Draw(t, "content")
			s.atomic = rapid.Bool().Draw(t, "atomicFlag")
		default:
			s.kind = answer
			s.role = contract.RoleTool
			s.pick = rapid.IntRange(0, 3).Draw(t, "pick")
			if !leave.has(FamilyMultiResult) {
				s.share = rapid.IntRange(0, 3).Draw(t, "share")
			}
			s.again = !leave.has(FamilyRepeatedResult) && rapid.IntRange(0, 5).Draw(t, "again") == 0
			s.results[0] = newResult(t, "", "", leave)
			if s.share > 0 {
				s.results[1] = newResult(t, "", "", leave)
			}
			if !leave.has(FamilyResultWithText) {
				s.content = rapid.SliceOfN(textBlock(), 0, 1).Draw(t, "content")
			}
			s.atomic = rapid.Bool().Draw(t, "atomicFlag")
		}
		s.entry = drawIDShape(t, "entryId")
		s.tick = rapid.IntRange(0, 3_600_000).Draw(t, "tick")
		s.decorate = drawDecoration(t, leave)
		return s
	})
}

func callTemplate(leave familySet) *rapid.Generator[*contract.ToolCallBlock] {
	return rapid.Custom(func(t *rapid.T) *contract.ToolCallBlock {
		return newCall(t, "", leave)
	})
}

// idShape is the drawn part of a generated message entry id or tool call
// id: the tag before its counter and what follows the counter, or, for
// an id made of whitespace alone, nothing but the choice.
type idShape struct {
	tag, end string
	goBlank  bool
}

// drawIDShape draws the shape of an id: a tag from idTag, and, about one
// time in ten, whitespace of stringClasses after the counter, where
// trimming reaches it (edge); about one id in 25 is whitespace only, blank
// to Go's strings.TrimSpace and not to JavaScript's trim (goBlankID).
func drawIDShape(t *rapid.T, label string) idShape {
	if oneIn(t, label+"GoBlank", 32) {
		return idShape{goBlank: true}
	}
	return idShape{tag: idTag().Draw(t, label+"Tag"), end: edge(t, label+"End")}
}

// id returns the id of this shape with counter n: prefix, tag, n and end,
// or goBlankID(n). Tags and ends hold no digit, so distinct counters give
// distinct ids.
func (s idShape) id(prefix string, n int) string {
	if s.goBlank {
		return goBlankID(n)
	}
	return prefix + s.tag + strconv.Itoa(n) + s.end
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

// pendingCall is a call waiting for its result, in message msg.
type pendingCall struct {
	id, name string
	msg      int
}

// render turns a plan into n messages without drawing anything. Message i
// follows step i modulo the plan's length: a long history repeats its plan
// with fresh ids, and each repetition pairs results with pending calls
// differently. Without FamilyLiveCall, calls left without a result are
// not written.
func render(runtimeID, sessionID string, plan []historyStep, n int, clock clockMode, leave familySet) []contract.Message {
	out := make([]contract.Message, 0, n)
	var pending, answered []pendingCall
	calls := 0
	at := float64(clockBase)
	for i := range n {
		s, round := plan[i%len(plan)], i/len(plan)
		s.pick += round
		if s.share > 0 {
			s.share += round
		}
		var blocks []contract.Block
		switch s.kind {
		case say:
			blocks = append(blocks, s.content...)
		case call:
			blocks = append(blocks, s.content...)
			for k, tmpl := range s.calls {
				calls++
				c := *tmpl
				c.ID = s.callIDs[k].id("call-", calls)
				blocks = append(blocks, &c)
				pending = append(pending, pendingCall{c.ID, c.Name, i})
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
		m := baseMessage(runtimeID, sessionID, s.entry.id("e", i+1), s.role, blocks)
		s.decorate(&m, runtimeID)
		switch clock {
		case clockAscending:
			at += float64(s.tick)
			m.CreatedAt = new(at)
		case clockShuffled:
			m.CreatedAt = new(float64(clockBase + s.tick))
		}
		if s.atomic && isToolMessage(&m) {
			m.Flags.Atomic = new(true)
		}
		out = append(out, m)
	}
	if leave.has(FamilyLiveCall) {
		for _, c := range pending {
			m := &out[c.msg]
			m.Blocks = slices.DeleteFunc(m.Blocks, func(b contract.Block) bool {
				call, ok := b.(*contract.ToolCallBlock)
				return ok && call.ID == c.id
			})
		}
	}
	if n > len(plan) {
		// Repetitions of a step share blocks and members; a deep copy
		// makes every message independent of the others.
		out = contract.CloneMessages(out)
	}
	return out
}

// take removes and returns the element at i modulo the slice's length.
func take(s []pendingCall, i int) (pendingCall, []pendingCall) {
	i %= len(s)
	c := s[i]
	return c, append(s[:i:i], s[i+1:]...)
}
