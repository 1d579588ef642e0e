package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

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

// plantHistoryProbe ends the last text of msgs with the history probe —
// or, when they hold no text, gives the last message without a tool result
// one — so that an error, diagnostic or fallback reason quoting history
// text shows.
func plantHistoryProbe(msgs []contract.Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		for j, b := range msgs[i].Blocks {
			if t, ok := b.(*contract.TextBlock); ok {
				msgs[i].Blocks[j] = &contract.TextBlock{Text: t.Text + " " + modelHistoryProbe, Extra: t.Extra}
				return
			}
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(msgs[i].Blocks, func(b contract.Block) bool { _, ok := b.(*contract.ToolResultBlock); return ok }) {
			msgs[i].Blocks = append(slices.Clone(msgs[i].Blocks), &contract.TextBlock{Text: modelHistoryProbe})
			return
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

// damageShapes are the shapes of damage the model applies: each kind,
// and DamageRecord once for each way a record breaks §7 beside the
// history.
var damageShapes = []struct {
	kind   DamageKind
	record string
}{
	{DamageRecord, "another session"}, {DamageRecord, "another runtime"}, {DamageRecord, "orphan result"}, {DamageRecord, "duplicate id"},
	{DamageTornRecord, ""}, {DamageInvalidUTF8, ""}, {DamageTrailing, ""}, {DamageIdentity, ""}, {DamageRoot, ""},
	// Shapes added since: the first sequence of a run gives their
	// operations fixed seeds (crossBounds), so that a seed replays the
	// sequence it drew before they were added.
	{DamageRecord, "entry mismatch"}, {DamageRecord, "blank entry"}, {DamageRecord, "call id twice"},
}

// firstDamageShapes is how many of damageShapes the first sequence of a
// run drew its operations' seeds for before more were added.
const firstDamageShapes = 9

// drawDamage returns the damage of shape k of damageShapes (drawn from rnd
// when k < 0) of the history msgs of fx: its kind and, for the record
// kinds, the message it writes — one §7's validation rejects beside msgs
// for DamageRecord (provenance of another session or runtime, a result
// whose call msgs does not hold, an id msgs holds, a sourceEntryId other
// than the provenance's entryId, a blank entryId, one call id on two
// calls), a valid one for the others — and describes it.
func drawDamage(fx Fixture, msgs []contract.Message, rnd *rand.Rand, n, k int) (Damage, string) {
	if k < 0 {
		k = rnd.IntN(len(damageShapes))
	}
	shape := damageShapes[k]
	d := Damage{Kind: shape.kind}
	if shape.kind == DamageIdentity || shape.kind == DamageTrailing || shape.kind == DamageRoot {
		return d, string(d.Kind)
	}
	m := damageMessage(fx, n)
	d.Message = &m
	if shape.kind != DamageRecord {
		return d, string(d.Kind)
	}
	switch shape.record {
	case "another runtime":
		other := fx.RuntimeID + "-other"
		m.Provenance.RuntimeID = &other
	case "orphan result":
		m.Role = contract.RoleTool
		m.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: "damage-call-" + strconv.Itoa(n), ToolName: "read", Content: modelHistoryProbe}}
	case "entry mismatch":
		m.SourceEntryID += "-other"
	case "blank entry":
		m.SourceEntryID, m.Provenance.EntryID = " ", " "
	case "call id twice":
		id := "damage-call-" + strconv.Itoa(n)
		m.Role = contract.RoleAssistant
		m.Blocks = append(m.Blocks, &contract.ToolCallBlock{ID: id, Name: "read", Arguments: []byte(`{}`)}, &contract.ToolCallBlock{ID: id, Name: "read", Arguments: []byte(`{}`)})
	case "duplicate id":
		if len(msgs) > 0 {
			m.ID = msgs[rnd.IntN(len(msgs))].ID
			break
		}
		fallthrough
	default:
		m.Provenance.SessionID += "-other"
	}
	return d, "record: " + shape.record
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
	d, what := drawDamage(m.fixture, m.msgs, rnd, op.n, op.shape-1)
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

// rewriteSameSize rewrites a message of the history in place keeping the
// size of its entry — one letter of a text changed — so that a cache that
// trusts an unchanged size, or an unchanged message count, shows.
func (r *modelRun) rewriteSameSize(in *modelInst, op modelOp) (diagnosticsRule, string, error) {
	m := in.m
	switch {
	case in.src == nil:
		return r.skip(noSource)
	case in.rewrite == nil:
		return r.skip(noRewrite)
	case m.closed || m.corrupt || m.damage != nil:
		return r.skip("no source writes to a closed or corrupt instance")
	}
	for i := len(m.msgs) - 1; i >= 0; i-- {
		for j, b := range m.msgs[i].Blocks {
			t, ok := b.(*contract.TextBlock)
			at := -1
			if ok {
				at = strings.IndexFunc(t.Text, func(c rune) bool { return c >= 'a' && c <= 'z' })
			}
			if at < 0 {
				continue
			}
			msg := contract.CloneMessage(&m.msgs[i])
			flip := "x"
			if t.Text[at] == 'x' {
				flip = "y"
			}
			msg.Blocks[j] = &contract.TextBlock{Text: t.Text[:at] + flip + t.Text[at+1:], Extra: t.Extra}
			if err := in.rewrite(r.ctx, msg); err != nil {
				if ref, ok := refusalOf(err); ok {
					return diagnosticsRule{}, "refused", r.refuse(ref, []contract.Message{msg})
				}
				return diagnosticsRule{}, "", failed("the instance's SourceRewriter must rewrite a message of the history in place", err)
			}
			m.msgs[i] = msg
			m.sourceWritten()
			return diagnosticsRule{}, fmt.Sprintf("message #%d of %d, one letter", i, len(m.msgs)), nil
		}
	}
	return r.skip("no message holds a text to rewrite")
}
