package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
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
