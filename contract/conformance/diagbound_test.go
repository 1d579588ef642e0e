package conformance_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// keepingDiagnostics keeps a diagnostic of its own for every fallback, the
// newest keep of them (keep < 0: all), after the inner adapter's.
type keepingDiagnostics struct {
	contract.Adapter
	keep  int
	mu    sync.Mutex
	extra []contract.Diagnostic
}

func (k *keepingDiagnostics) Complete(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
	res := k.Adapter.Complete(ctx, r)
	if res.Status == contract.StatusFallback {
		k.mu.Lock()
		k.extra = append(k.extra, contract.Diagnostic{Code: contract.DiagnosticCompletionTransportFailed, Severity: contract.SeverityWarning, Message: "Completion transport failed"})
		if k.keep >= 0 && len(k.extra) > k.keep {
			k.extra = k.extra[len(k.extra)-k.keep:]
		}
		k.mu.Unlock()
	}
	return res
}

func (k *keepingDiagnostics) Diagnostics() []contract.Diagnostic {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append(k.Adapter.Diagnostics(), k.extra...)
}

func TestBoundedDiagnosticsFindsTheBound(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckBoundedDiagnostics)
	cleaned := 0
	// SPEC says "bounded" and names no size: 2,000 kept diagnostics pass,
	// and the note reports the bound found.
	large := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return &keepingDiagnostics{Adapter: a, keep: 2000}
	}, &cleaned)
	r := c.Run(ctx, large)
	if r.Status != conformance.StatusPass || !strings.Contains(r.Note, "stop growing at 2100") {
		t.Fatalf("an adapter keeping 2,000 diagnostics (and the inner 100): %s %v, note %q; want a pass reporting the bound 2100", r.Status, r.Failure, r.Note)
	}
	if r := c.Run(ctx, correct()); r.Status != conformance.StatusPass || !strings.Contains(r.Note, "stop growing at 100") {
		t.Fatalf("memadapter: %s %v, note %q; want a pass at its bound of 100", r.Status, r.Failure, r.Note)
	}
	unbounded := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return &keepingDiagnostics{Adapter: a, keep: -1}
	}, &cleaned)
	r = c.Run(ctx, unbounded)
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Expected, "the ceiling") {
		t.Fatalf("an unbounded adapter: %s %+v; want a failure naming the ceiling", r.Status, r.Failure)
	}
	// Below a lower ceiling, 2,000 kept diagnostics are too many.
	if r := c.Run(ctx, large, conformance.WithDiagnosticsLimit(1500)); r.Status != conformance.StatusFail {
		t.Fatalf("2,000 kept diagnostics under a ceiling of 1,500: %s, want a failure", r.Status)
	}
}
