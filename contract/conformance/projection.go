package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
)

// checkProjection hands the factory generated canonical histories (seeds
// 1..n of the run's history generator) and checks each snapshot is their
// faithful projection.
func checkProjection(ctx context.Context, e *env) error {
	n := e.opts.histories
	if n <= 0 {
		return skip("no generated histories were asked for")
	}
	for seed := 1; seed <= n; seed++ {
		fx := NewFixture()
		fx.Messages = e.opts.generator(fx.RuntimeID, fx.SessionID).Example(seed)
		if err := projectOne(ctx, e, fx); err != nil {
			return withNote(err, fmt.Sprintf("generated history seed %d, %s", seed, historyShape(fx.Messages)))
		}
	}
	e.note = fmt.Sprintf("%d generated histories projected faithfully", n)
	if n == 1 {
		e.note = "1 generated history projected faithfully"
	}
	return nil
}

// projectOne creates an instance holding fx and checks its snapshot.
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
// returns nil, or a *Failure (check "projection") explaining the first
// difference as metadata only. The property spec of package spec calls it
// for every history rapid draws.
func CheckHistory(ctx context.Context, factory Factory, messages []contract.Message, opts ...Option) error {
	c, _ := CheckByID(CheckProjection)
	e := &env{factory: factory, opts: newOptions(opts)}
	fx := NewFixture()
	fx.Messages = messages
	c.run = func(ctx context.Context, e *env) error {
		return withNote(projectOne(ctx, e, fx), "history "+historyShape(messages))
	}
	r := c.runIn(ctx, e)
	if r.Failure != nil {
		return r.Failure
	}
	return nil
}
