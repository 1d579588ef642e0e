package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// checkProjection hands the factory generated canonical histories (seeds
// 1..n of the run's history generator) and checks each snapshot is their
// faithful projection.
func checkProjection(ctx context.Context, e *env) error {
	n := e.opts.Histories
	if n <= 0 {
		return skip("no generated histories were asked for")
	}
	e.refused = refusals{}
	for seed := 1; seed <= n; seed++ {
		fx := NewFixture()
		fx.Messages = gen.HistoryWithout(fx.RuntimeID, fx.SessionID, e.opts.LeftOut...).Example(seed)
		err := projectOne(ctx, e, fx)
		if reason, ok := refusalReason(err); ok {
			if err := mayRefuse(fx.Messages, reason); err != nil {
				return withNote(err, fmt.Sprintf("generated history seed %d, %s", seed, historyShape(fx.Messages)))
			}
			e.refused[reason]++
			continue
		}
		if err != nil {
			return withNote(err, fmt.Sprintf("generated history seed %d, %s", seed, historyShape(fx.Messages)))
		}
	}
	return e.refusalVerdict(n)
}

// refusalVerdict writes the projection check's note and fails it when the
// factory refused more than half of the n generated histories.
func (e *env) refusalVerdict(n int) error {
	refused := e.refused.total()
	e.note = fmt.Sprintf("%d generated histories: %d projected faithfully", n, n-refused)
	if refused > 0 {
		e.note += fmt.Sprintf(", %d refused: %s", refused, e.refused)
	}
	if len(e.opts.LeftOut) > 0 {
		names := make([]string, len(e.opts.LeftOut))
		for i, f := range e.opts.LeftOut {
			names[i] = string(f)
		}
		e.note += "; families left out: " + strings.Join(names, ", ")
	}
	if 2*refused > n {
		return broken("the runtime holds too few generated histories to check projection: a factory may refuse at most half of them as unrepresentable",
			fmt.Sprintf("at most %d of %d generated histories refused", n/2, n), e.note)
	}
	return nil
}

// mayRefuse returns nil when a runtime may refuse the history, and a
// broken rule when the history holds none of the families of shapes a
// runtime may be unable to represent (gen.Families): every runtime must
// hold histories made only of the shapes the contract requires.
func mayRefuse(msgs []contract.Message, reason string) error {
	if len(gen.FamiliesOf(msgs)) > 0 {
		return nil
	}
	return broken("every runtime holds histories made only of the shapes the contract requires (text messages of every role, tool exchanges of one call and one result); a factory may refuse only a history holding a family of gen.Families",
		"an instance holding the history", "refused as unrepresentable: "+q(reason))
}

// projectOne creates an instance holding fx and checks its snapshot. A
// refusal of the history is returned as it is.
func projectOne(ctx context.Context, e *env, fx Fixture) error {
	s, err := e.startWith(ctx, fx)
	if err != nil {
		return err
	}
	snap, err := s.Adapter().SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project any valid canonical history", err)
	}
	if err := checkSnapshot(&snap, fx.RuntimeID, fx.SessionID, s.ExpectedProjectRoot(), fx.Messages); err != nil {
		return err
	}
	e.forget(s)
	if err := s.Close(ctx); err != nil {
		return failed("the instance must shut down and clean up without error", err)
	}
	return nil
}

// withNote prefixes what a failure observed with where it was observed.
func withNote(err error, where string) error {
	if err == nil {
		return nil
	}
	var br *brokenRule
	if errors.As(err, &br) {
		return &brokenRule{rule: br.rule, expected: br.expected, actual: where + ": " + br.actual}
	}
	var ae *adapterError
	if errors.As(err, &ae) {
		return &adapterError{rule: ae.rule + " (" + where + ")", err: ae.err}
	}
	return err
}

// CheckHistory creates an instance holding the canonical history
// messages (with the conformance fixture's runtime, session and model),
// snapshots it and checks the snapshot is its faithful projection. It
// returns nil; an error wrapping ErrUnrepresentable, with the factory's
// reason, when the factory refused the history; or a *Failure (check
// "projection") explaining the first difference as metadata only. The
// property spec of package spec calls it for every history rapid draws.
func CheckHistory(ctx context.Context, factory Factory, messages []contract.Message, opts ...Option) error {
	c, _ := CheckByID(CheckProjection)
	e := &env{factory: factory, opts: newOptions(opts)}
	fx := NewFixture()
	fx.Messages = messages
	refused := ""
	c.run = func(ctx context.Context, e *env) error {
		err := projectOne(ctx, e, fx)
		if reason, ok := refusalReason(err); ok {
			if err := mayRefuse(messages, reason); err != nil {
				return withNote(err, "history "+historyShape(messages))
			}
			refused = reason
			return nil
		}
		return withNote(err, "history "+historyShape(messages))
	}
	r := c.runIn(ctx, e)
	switch {
	case r.Failure != nil:
		return r.Failure
	case refused != "":
		return Unrepresentable(refused)
	}
	return nil
}

// CompareSnapshot returns nil when snap is the faithful projection of the
// canonical history messages — the messages member by member in order, no
// validation issue, exactly the derived tool atomic groups (as a set) —
// and otherwise a *Failure (check "projection") explaining the first
// difference as metadata only. It does not compare the snapshot's runtime,
// session or root with anything. The spec package's HoldHistory matcher
// is built on it.
func CompareSnapshot(snap contract.HistorySnapshot, messages []contract.Message) error {
	err := checkSnapshot(&snap, snap.RuntimeID, snap.SessionID, snap.ProjectRoot, messages)
	if err == nil {
		return nil
	}
	_, f, _ := result(CheckProjection, err)
	return f
}
