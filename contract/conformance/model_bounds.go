package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// Sizes the bounds operation reaches: a text and a line of well over
// 1 MiB (generated texts stop at 64 KiB), a tool result of over 256 KiB,
// and JSON nested 128 levels deep
// in tool arguments and in a payload (generated values stop at depth 3).
// SPEC bounds none of them below these (the reference adapter reads lines
// to its 64 MiB file bound; JSON nests to 10,000 levels).
const (
	modelBigText   = 1<<20 + 33
	modelBigResult = 256<<10 + 7
	modelBigDepth  = 128
)

// deepJSON is a JSON value nested depth levels deep around leaf.
func deepJSON(depth int, leaf string) json.RawMessage {
	var b strings.Builder
	for i := range depth {
		b.WriteString([]string{`{"a":`, `[`}[i%2])
	}
	b.WriteString(leaf)
	for i := depth - 1; i >= 0; i-- {
		b.WriteString([]string{`}`, `]`}[i%2])
	}
	return json.RawMessage(b.String())
}

// bounds crosses, once in every run, the sizes SPEC allows beyond what
// the generators draw: it appends a tool exchange whose call holds a text
// of more than 1 MiB (a line of that length in a JSONL store) and
// arguments nested 128 deep, and whose result is over 256 KiB, reads it back in the snapshot the sequence
// ends with, and completes a payload nested 128 deep, whose sanitised form
// must reach the transport and whose output come back.
func (r *modelRun) bounds(in *modelInst, op modelOp) (diagnosticsRule, string, error) {
	m := in.m
	if m.closed || m.corrupt || m.damage != nil {
		return r.skip("bounds are crossed on an open instance with a valid history")
	}
	desc := "no source"
	if in.src != nil {
		fx := m.fixture
		entry := func(k int) string { return "bounds-" + strconv.Itoa(op.n) + "-" + strconv.Itoa(k) }
		rt := fx.RuntimeID
		msg := func(k int, role contract.Role, blocks ...contract.Block) contract.Message {
			return contract.Message{ID: fx.SessionID + ":" + entry(k), SourceEntryID: entry(k), Role: role, Blocks: blocks,
				Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: fx.SessionID, EntryID: entry(k), RuntimeID: &rt}}
		}
		callID := "bounds-call-" + strconv.Itoa(op.n)
		text := strings.Repeat("a long line of text, ", modelBigText/21+1)
		msgs := []contract.Message{
			msg(0, contract.RoleAssistant, &contract.TextBlock{Text: text}, &contract.ToolCallBlock{ID: callID, Name: "read", Arguments: deepJSON(modelBigDepth, `"deep"`)}),
			msg(1, contract.RoleTool, &contract.ToolResultBlock{ToolCallID: callID, ToolName: "read", Content: text[:modelBigResult]}),
		}
		appended := 0
		for _, mm := range msgs {
			if err := in.src.Append(r.ctx, mm); err != nil {
				ref, ok := refusalOf(err)
				if !ok {
					return diagnosticsRule{}, "", failed("the instance's Source must append a valid message with a new id", err)
				}
				if err := r.refuse(ref, []contract.Message{mm}); err != nil {
					return diagnosticsRule{}, "", err
				}
				break
			}
			m.msgs = append(m.msgs, mm)
			appended++
		}
		if appended > 0 {
			m.sourceWritten()
		}
		desc = fmt.Sprintf("%d messages appended, a text of %d bytes, arguments nested %d deep", appended, len(text), modelBigDepth)
	}
	payload := fmt.Sprintf(`{"messages":[{"role":"user","content":"a payload nested deep"}],"meta":%s}`, deepJSON(modelBigDepth, `{"note":"[ds4:internal]deep inside[/ds4:internal]"}`))
	c := completionCall{provider: m.fixture.Model.Provider, model: m.fixture.Model.ID, payload: drawnPayload{raw: json.RawMessage(payload)}, mode: answerDeep}
	rule, d, err := r.completeCall(in, c)
	if err != nil {
		return rule, "", err
	}
	return rule, desc + "; " + d, nil
}

// splitExchange appends one part of a tool exchange (op.shape 1: an
// assistant message calling two tools — one when parallel batches are
// left out —, 2 and 3: the result of each call, as a message of its own),
// so that a read sees a live call, then a batch half answered, then the
// whole group: the groups an adapter keeps from earlier reads must follow.
func (r *modelRun) splitExchange(in *modelInst, op modelOp) (diagnosticsRule, string, error) {
	m := in.m
	switch {
	case in.src == nil:
		return r.skip(noSource)
	case m.closed || m.corrupt || m.damage != nil:
		return r.skip("no source writes to a closed or damaged instance")
	case slices.Contains(r.leave, gen.FamilyLiveCall):
		return r.skip("the run leaves live calls out")
	}
	fx := m.fixture
	rt := fx.RuntimeID
	entry := "split-" + strconv.Itoa(op.n) + "-" + strconv.Itoa(op.shape)
	msg := contract.Message{ID: fx.SessionID + ":" + entry, SourceEntryID: entry,
		Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: fx.SessionID, EntryID: entry, RuntimeID: &rt}}
	if op.shape == 1 {
		calls := 2
		if slices.Contains(r.leave, gen.FamilyParallelBatch) {
			calls = 1
		}
		msg.Role = contract.RoleAssistant
		in.splitCalls = nil
		for k := range calls {
			id := "split-call-" + strconv.Itoa(op.n) + "-" + strconv.Itoa(k)
			msg.Blocks = append(msg.Blocks, &contract.ToolCallBlock{ID: id, Name: "lookup", Arguments: json.RawMessage(`{"k":` + strconv.Itoa(k) + `}`)})
			in.splitCalls = append(in.splitCalls, id)
		}
	} else {
		if len(in.splitCalls) == 0 {
			// The call was refused or never appended: a result
			// without its call would break the history (§7).
			return r.skip("no split tool exchange awaits a result")
		}
		id := in.splitCalls[0]
		in.splitCalls = in.splitCalls[1:]
		msg.Role = contract.RoleTool
		msg.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: id, ToolName: "lookup", Content: "result of " + id}}
	}
	if err := in.src.Append(r.ctx, msg); err != nil {
		ref, ok := refusalOf(err)
		if !ok {
			return diagnosticsRule{}, "", failed("the instance's Source must append a valid message with a new id", err)
		}
		in.splitCalls = nil // nothing more of the exchange
		if err := r.refuse(ref, []contract.Message{msg}); err != nil {
			return diagnosticsRule{}, "", err
		}
		return diagnosticsRule{}, "part " + strconv.Itoa(op.shape) + " refused for " + string(ref.Family), nil
	}
	m.msgs = append(m.msgs, msg)
	m.sourceWritten()
	return diagnosticsRule{}, fmt.Sprintf("part %d of a tool exchange, %d call(s) awaiting a result", op.shape, len(in.splitCalls)), nil
}
