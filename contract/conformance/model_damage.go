package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/ds4context/adapterkit/contract"
)

// This file draws and runs the model check's damage of a canonical source
// (SourceBreaker) and its repair; what reads of a damaged source answer is
// the model's (model.go, read).

// modelHistoryProbe is history text the model writes into appended
// messages and the messages of a damaged source: no error, diagnostic or
// fallback reason may hold it (SPEC §4: errors never contain history
// text).
const modelHistoryProbe = "ds4-model-history-probe-9c1e"

// plantHistoryProbe ends the first text of msgs with the history probe,
// so that an error, diagnostic or fallback reason quoting history text
// shows.
func plantHistoryProbe(msgs []contract.Message) {
	for i := range msgs {
		for j, b := range msgs[i].Blocks {
			if t, ok := b.(*contract.TextBlock); ok {
				msgs[i].Blocks[j] = &contract.TextBlock{Text: t.Text + " " + modelHistoryProbe, Extra: t.Extra}
				return
			}
		}
	}
}

// damageMessage returns a valid message of fx's runtime and session, new
// to the history (entry "damage-<n>"), whose text is the history probe.
func damageMessage(fx Fixture, n int) contract.Message {
	entry := "damage-" + strconv.Itoa(n)
	rt := fx.RuntimeID
	return contract.Message{ID: fx.SessionID + ":" + entry, SourceEntryID: entry, Role: contract.RoleUser,
		Blocks:     []contract.Block{&contract.TextBlock{Text: "the damaged entry holds " + modelHistoryProbe}},
		Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: fx.SessionID, EntryID: entry, RuntimeID: &rt}}
}

// drawDamage draws a damage of the history msgs of fx: its kind and, for
// the record kinds, the message it writes — one §7's validation rejects
// beside msgs for DamageRecord (a duplicate id, provenance of another
// session or runtime, a result whose call msgs does not hold), a valid one
// for the others — and describes it.
func drawDamage(fx Fixture, msgs []contract.Message, rnd *rand.Rand, n int) (Damage, string) {
	kinds := DamageKinds()
	d := Damage{Kind: kinds[rnd.IntN(len(kinds))]}
	switch d.Kind {
	case DamageTornRecord, DamageInvalidUTF8:
		m := damageMessage(fx, n)
		d.Message = &m
		return d, string(d.Kind)
	case DamageRecord:
	default:
		return d, string(d.Kind)
	}
	m := damageMessage(fx, n)
	what := "a message of another session"
	switch rnd.IntN(4) {
	case 0:
		m.Provenance.SessionID += "-other"
	case 1:
		what = "a message of another runtime"
		other := fx.RuntimeID + "-other"
		m.Provenance.RuntimeID = &other
	case 2:
		what = "a result whose call the history does not hold"
		m.Role = contract.RoleTool
		m.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: "damage-call-" + strconv.Itoa(n), ToolName: "read", Content: modelHistoryProbe}}
	default:
		if len(msgs) == 0 {
			m.Provenance.SessionID += "-other"
			break
		}
		what = "a second message with an earlier id"
		was := msgs[rnd.IntN(len(msgs))]
		m.ID = was.ID
	}
	d.Message = &m
	return d, "record: " + what
}

// breakSource damages the instance's canonical history.
func (r *modelRun) breakSource(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	switch {
	case in.src == nil:
		return r.skip(noSource)
	case in.brk == nil:
		return r.skip(noBreaker)
	case m.closed || m.corrupt || m.damage != nil:
		return r.skip("no source writes to a closed or damaged instance")
	}
	d, what := drawDamage(m.fixture, m.msgs, rnd, op.n)
	if err := in.brk(r.ctx, d); err != nil {
		if unsupported(err) {
			return r.skip("the instance's source cannot take some damages (errors.ErrUnsupported)")
		}
		return diagnosticsRule{}, "", failed("the instance's SourceBreaker must break the canonical history as asked", err)
	}
	m.damage = &d
	m.sourceWritten()
	return diagnosticsRule{}, what, nil
}

// repairSource undoes the damage of the instance's canonical history.
func (r *modelRun) repairSource(in *modelInst) (diagnosticsRule, string, error) {
	m := in.m
	switch {
	case in.src == nil:
		return r.skip(noSource)
	case in.repair == nil:
		return r.skip(noBreaker)
	case m.closed:
		return r.skip("no source writes to a closed instance")
	}
	was := "whole"
	switch {
	case m.damage != nil:
		was = string(m.damage.Kind)
	case m.corrupt:
		was = "corrupt"
	}
	if err := in.repair(r.ctx); err != nil {
		return diagnosticsRule{}, "", failed("the instance's SourceBreaker must repair the canonical history", err)
	}
	m.damage, m.corrupt = nil, false
	m.sourceWritten()
	return diagnosticsRule{}, "was " + was, nil
}

// readError checks the error of a read that had to fail: metadata only.
func readError(method string, err error) error {
	if leaksAny(err.Error()) {
		return broken("errors are metadata only: never history text (§4), whatever broke the source", "an error without history text",
			method+": the error quotes some")
	}
	return nil
}

// breakerOf returns the instance source's break and repair hooks.
func breakerOf(src *boundedSource) (func(context.Context, Damage) error, func(context.Context) error) {
	if src == nil {
		return nil, nil
	}
	return src.breaker()
}

// invalidMessage is the reference adapter's message for a history with n
// validation issues (SPEC §12).
func invalidMessage(n int) string {
	return fmt.Sprintf("Canonical history validation failed with %d issue(s)", n)
}
