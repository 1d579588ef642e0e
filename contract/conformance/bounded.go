package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// DefaultCallTimeout bounds every adapter call a check makes unless
// WithCallTimeout says otherwise.
const DefaultCallTimeout = 10 * time.Second

// callTimeout is an adapter call that did not return within its bound.
type callTimeout struct {
	method string
	bound  time.Duration
	// finished is closed when the call returns after all, if ever.
	finished <-chan struct{}
	// gaveUp, when set, is set by the call once it has returned, at its
	// bound, with nothing but its context's deadline error: it gave up
	// rather than answer late. It is read once finished is closed.
	gaveUp *atomic.Bool
}

// gaveUpAtBound reports whether the call, having finished, gave up at its
// bound without an answer.
func (t *callTimeout) gaveUpAtBound() bool { return t.gaveUp != nil && t.gaveUp.Load() }

func (t *callTimeout) Error() string {
	return fmt.Sprintf("%s did not return within %s", t.method, t.bound)
}

// methodFailure is an adapter method that failed where the contract gives
// it no way to: a method without an error result that panicked with an
// error (as a bridge client does when the adapter process answers an
// error), or any method answering contract.ErrNotImplemented. The check
// runner turns it into an error naming the method; no check passes on it.
type methodFailure struct {
	method string
	err    error
}

func (m *methodFailure) Error() string {
	if m.notImplemented() {
		return m.method + " is not implemented: " + scrub(m.err.Error())
	}
	return m.method + " failed: " + scrub(m.err.Error())
}

func (m *methodFailure) Unwrap() error { return m.err }

func (m *methodFailure) notImplemented() bool { return errors.Is(m.err, contract.ErrNotImplemented) }

// rule is the rule a methodFailure breaks.
func (m *methodFailure) rule() string {
	if m.notImplemented() {
		return "an adapter implements every method of runtime-adapter-v1 (it answered " + m.method + " with contract.ErrNotImplemented, over the bridge unknown-method)"
	}
	return "an adapter method without an error result answers: it never fails (over the bridge: it never answers an error)"
}

// bounded runs f, an adapter call named method, and waits at most bound for
// it. A call that does not return in time panics with a *callTimeout, which
// the check runner turns into a failure naming the method and the bound;
// the call's goroutine is left behind, since nothing can stop it. A panic
// inside f is re-raised on the caller's goroutine. A bound of 0 or less
// calls f directly.
func bounded(method string, bound time.Duration, f func()) {
	if bound <= 0 {
		f()
		return
	}
	done := make(chan any, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer func() { done <- recover() }()
		f()
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case v := <-done:
		if v != nil {
			panic(v)
		}
	case <-t.C:
		panic(&callTimeout{method: method, bound: bound, finished: finished})
	}
}

// answers runs f, a call of the adapter method method, which has no error
// result: a panic with an error that is not a runtime error — what a
// bridge client does when the adapter process answers an error — is
// re-raised as a *methodFailure naming method.
func answers(method string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			if err, ok := v.(error); ok {
				var re runtime.Error
				var mf *methodFailure
				if !errors.As(err, &re) && !errors.As(err, &mf) {
					v = &methodFailure{method: method, err: err}
				}
			}
			panic(v)
		}
	}()
	f()
}

// notImplemented panics with a *methodFailure when err says the adapter
// does not implement method, so that no check takes it for the error the
// contract asks for (a read after shutdown, a payload failing closed).
func notImplemented(method string, err error) error {
	if err != nil && errors.Is(err, contract.ErrNotImplemented) {
		panic(&methodFailure{method: method, err: err})
	}
	return err
}

// recovered describes what a goroutine of a check recovered from its
// adapter calls: a call that did not return within its bound says so (the
// bound panics with it), anything else is a panic of the adapter, written
// after panicked.
func recovered(v any, panicked string) string {
	switch v := v.(type) {
	case *callTimeout:
		return v.Error()
	case *methodFailure:
		return v.Error()
	}
	return panicked + Redact(fmt.Sprint(v))
}

// boundedContext gives an adapter call a context that expires with its
// bound, so that an adapter honouring contexts returns by itself.
func boundedContext(ctx context.Context, bound time.Duration) (context.Context, context.CancelFunc) {
	if bound <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, bound)
}

// boundedAdapter is the adapter a check sees: every method of the
// underlying adapter, each bounded.
type boundedAdapter struct {
	inner contract.Adapter
	bound time.Duration
}

func callBounded[T any](b *boundedAdapter, method string, f func() T) (out T) {
	bounded(method, b.bound, func() { answers(method, func() { out = f() }) })
	return out
}

func callBoundedCtx[T any](ctx context.Context, b *boundedAdapter, method string, f func(context.Context) (T, error)) (out T, err error) {
	bctx, cancel := boundedContext(ctx, b.bound)
	// A call that gives up when its bound ends, without an answer, did not
	// return within the bound either; it returns, so it is no hung call by
	// itself (see hangWatch).
	gaveUp := new(atomic.Bool)
	defer func() {
		v := recover()
		if v == nil {
			cancel()
			return
		}
		// A call still running keeps its context until the bound ends
		// it, so that what it then answers tells a hung call from one
		// that gave up (cancelling here would race the deadline).
		if to, ok := v.(*callTimeout); ok && to.gaveUp == nil {
			to.gaveUp = gaveUp
		} else {
			cancel()
		}
		panic(v)
	}()
	bounded(method, b.bound, func() {
		o, e := f(bctx)
		if e != nil && ctx.Err() == nil && errors.Is(bctx.Err(), context.DeadlineExceeded) && errors.Is(e, context.DeadlineExceeded) {
			gaveUp.Store(true)
		}
		out, err = o, e
	})
	if gaveUp.Load() {
		panic(&callTimeout{method: method, bound: b.bound, finished: returnedCall, gaveUp: gaveUp})
	}
	return out, notImplemented(method, err)
}

// returnedCall is the finished channel of a call that has returned.
var returnedCall = func() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (b *boundedAdapter) Identity() contract.Identity {
	return callBounded(b, "Identity", b.inner.Identity)
}

func (b *boundedAdapter) CapabilityDeclarations() []contract.CapabilityDeclaration {
	return callBounded(b, "CapabilityDeclarations", b.inner.CapabilityDeclarations)
}

func (b *boundedAdapter) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return callBounded(b, "NegotiateCapabilities", func() contract.Negotiation { return b.inner.NegotiateCapabilities(reqs) })
}

func (b *boundedAdapter) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return callBoundedCtx(ctx, b, "SnapshotHistory", b.inner.SnapshotHistory)
}

func (b *boundedAdapter) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return callBoundedCtx(ctx, b, "RebuildDerivedState", b.inner.RebuildDerivedState)
}

func (b *boundedAdapter) CurrentModel(ctx context.Context) (*contract.ModelDescriptor, error) {
	return callBoundedCtx(ctx, b, "CurrentModel", b.inner.CurrentModel)
}

func (b *boundedAdapter) TrustedProjectRoot(ctx context.Context) (string, error) {
	return callBoundedCtx(ctx, b, "TrustedProjectRoot", b.inner.TrustedProjectRoot)
}

func (b *boundedAdapter) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	return callBoundedCtx(ctx, b, "EnforcePrivacy", func(ctx context.Context) (contract.PrivacyResult, error) {
		return b.inner.EnforcePrivacy(ctx, req)
	})
}

func (b *boundedAdapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r, _ := callBoundedCtx(ctx, b, "Complete", func(ctx context.Context) (r contract.CompletionResult, _ error) {
		answers("Complete", func() { r = b.inner.Complete(ctx, req) })
		return r, nil
	})
	return r
}

func (b *boundedAdapter) Diagnostics() []contract.Diagnostic {
	return callBounded(b, "Diagnostics", b.inner.Diagnostics)
}

func (b *boundedAdapter) Shutdown(ctx context.Context) error {
	_, err := callBoundedCtx(ctx, b, "Shutdown", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, b.inner.Shutdown(ctx)
	})
	return err
}

// embeddingPort returns the adapter's embedding port, bounded, and whether
// the adapter offers one (ok is false when it does not implement
// contract.EmbeddingPortProvider; the port is nil when it offers none).
func (b *boundedAdapter) embeddingPort() (port contract.EmbeddingPort, ok bool) {
	p, ok := b.inner.(contract.EmbeddingPortProvider)
	if !ok {
		return nil, false
	}
	inner := callBounded(b, "EmbeddingPort", p.EmbeddingPort)
	if inner == nil {
		return nil, true
	}
	return &boundedPort{inner: inner, bound: b.bound}, true
}

// localKVDiagnostics returns the adapter's aggregate local KV counters, if
// it keeps them.
func (b *boundedAdapter) localKVDiagnostics() (localkv.Diagnostics, bool) {
	p, ok := b.inner.(localkv.DiagnosticsProvider)
	if !ok {
		return localkv.Diagnostics{}, false
	}
	var d localkv.Diagnostics
	bounded("LocalKVDiagnostics", b.bound, func() { d, ok = p.LocalKVDiagnostics() })
	return d, ok
}

// boundedPort is an embedding port whose calls are bounded.
type boundedPort struct {
	inner contract.EmbeddingPort
	bound time.Duration
}

func (p *boundedPort) Identity() contract.EmbeddingIdentity {
	var id contract.EmbeddingIdentity
	bounded("EmbeddingPort().Identity", p.bound, func() { id = p.inner.Identity() })
	return id
}

func (p *boundedPort) Embed(ctx context.Context, texts []string) (vecs [][]float64, err error) {
	ctx, cancel := boundedContext(ctx, p.bound)
	defer cancel()
	bounded("EmbeddingPort().Embed", p.bound, func() { vecs, err = p.inner.Embed(ctx, texts) })
	return vecs, notImplemented("EmbeddingPort().Embed", err)
}
