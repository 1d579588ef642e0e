package mutants

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The mutants of transport outputs. A completion passes the transport's
// output back as it came, whatever JSON value it is (§9: the output is
// runtime-owned; the kit compares it as a JSON value, numbers as
// JavaScript reads them). The model's transport answers objects, strings,
// arrays and null of a few dozen bytes; these mutants differ on an empty
// value, on more than 1 MiB, on nesting deeper than 64 and on a number no
// float64 holds. Those that fail a completion record
// completion-transport-failed as the reference adapter does (ownLog).
var pendingOutputs = []Mutant{
	{
		Name: "empty-outputs-become-null", Family: FamilyOutputs,
		Breaks: "a completion passes the transport's output back as it came (§9); this one answers null for an empty string, object or array (an output it takes for \"no output\")",
		Fails:  all(conformance.CheckModel),
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return emptyAsNull{decorator{a}} },
	},
	{
		Name: "outputs-over-1mib-fail", Family: FamilyOutputs,
		Breaks: "a completion passes any output back, however large (§9); this one reads the output through a 1 MiB limit and falls back transport-failed on a longer one",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.output = func(out json.RawMessage) (json.RawMessage, bool) { return out, len(out) <= 1<<20 }
			return m
		},
	},
	{
		Name: "outputs-nested-over-64-fail", Family: FamilyOutputs,
		Breaks: "a completion passes any JSON output back, however deep (§9); this one validates outputs with a 64-level parser and falls back transport-failed on a deeper one",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.output = func(out json.RawMessage) (json.RawMessage, bool) { return out, jsonDepth(out) <= 64 }
			return m
		},
	},
	{
		Name: "outputs-decoded-into-float64", Family: FamilyOutputs,
		Breaks: "a completion passes any JSON output back (§9); this one decodes it into Go values and encodes it again, and falls back transport-failed on 1e400, which no float64 holds",
		Awaits: all(conformance.CheckModel),
		port:   watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.output = func(out json.RawMessage) (json.RawMessage, bool) {
				var v any
				if json.Unmarshal(out, &v) != nil {
					return nil, false
				}
				b, err := json.Marshal(v)
				return b, err == nil
			}
			return m
		},
	},
}

// emptyAsNull answers null for a completed output that is "", {} or [].
type emptyAsNull struct{ decorator }

func (m emptyAsNull) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted {
		switch string(bytes.TrimSpace(r.Output)) {
		case `""`, `{}`, `[]`:
			r.Output = json.RawMessage(`null`)
		}
	}
	return r
}
