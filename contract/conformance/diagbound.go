package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
)

// Shape of the bounded-diagnostics search.
const (
	// boundBatch is how many failing completions the search makes between
	// two looks at the diagnostics.
	boundBatch = 50
	// boundQuiet is the shortest stretch of failing completions over which
	// the count must not reach a new high for the search to call it the
	// bound; the stretch is at least as long as the count itself, so a list
	// still growing by one diagnostic every call (or every few) shows it.
	boundQuiet = 200
)

// findDiagnosticsBound makes failing completions until the number of
// diagnostics stops reaching new highs over a stretch of calls at least as
// long as the highest count seen (and boundQuiet), and returns that count
// and how many failing completions it took. It returns an error when the
// count passes ceiling, or is still growing after enough failing
// completions to have passed it twice at one diagnostic a call.
func findDiagnosticsBound(ctx context.Context, s *Session, ceiling int) (bound, calls int, err error) {
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	req := contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID,
		Payload: json.RawMessage(`{"messages":[{"role":"user","content":"bounded"}]}`)}
	defer tr.Disarm()
	high, quiet := len(a.Diagnostics()), 0
	for calls < 2*ceiling+boundQuiet {
		for range boundBatch {
			tr.FailNext()
			a.Complete(ctx, req)
		}
		calls += boundBatch
		n := len(a.Diagnostics())
		if n > ceiling {
			return n, calls, broken("diagnostics are a bounded list: SPEC names no size, but the list stops growing somewhere below the suite's ceiling",
				fmt.Sprintf("at most %d diagnostics (the ceiling) under failing completions", ceiling),
				fmt.Sprintf("%d diagnostics after %d failing completions", n, calls))
		}
		if n > high {
			high, quiet = n, 0
			continue
		}
		quiet += boundBatch
		if quiet >= max(boundQuiet, high) {
			if high == 0 {
				// A list that never grows shows no bound.
				return 0, calls, broken("a transport failure records completion-transport-failed (SPEC §9), so the list's bound can be seen",
					"diagnostics recorded by failing completions", fmt.Sprintf("no diagnostic after %d failing completions", calls))
			}
			return high, calls, nil
		}
	}
	return high, calls, broken("diagnostics are a bounded list: once full, it stops growing",
		fmt.Sprintf("a count that stops reaching new highs within %d failing completions", calls),
		fmt.Sprintf("still growing: %d diagnostics after %d failing completions", high, calls))
}

func checkBounded(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	bound, calls, err := findDiagnosticsBound(ctx, s, e.opts.DiagnosticsLimit)
	if err != nil {
		return err
	}
	e.note = fmt.Sprintf("the diagnostics stop growing at %d (found after %d failing completions; ceiling %d)", bound, calls, e.opts.DiagnosticsLimit)
	return nil
}
