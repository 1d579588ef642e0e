package mutants

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// The mutants of the fallback and diagnostics table (SPEC §9) and of the
// lifecycle.
var fallbackCatalogue = []Mutant{
	{
		Name: "invalid-request-retryable", Breaks: "an invalid-request fallback is not retryable",
		Fails: all(conformance.CheckFallbacks, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return invalidRetryable{decorator{a}} },
	},
	{
		Name: "privacy-failure-recorded-as-warning", Breaks: "privacy-enforcement-failed is recorded with severity error",
		Fails: all(conformance.CheckFallbacks, conformance.CheckRecordedDiagnostics, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return downgrade{decorator{a}, contract.DiagnosticPrivacyEnforcementFailed}
		},
	},
	{
		Name: "transport-error-in-diagnostic", Breaks: "a transport error's text never reaches diagnostics",
		Fails: all(conformance.CheckFallbacks, conformance.CheckModel),
		wrap:  wrapTransportErrorText,
	},
	{
		Name: "ascii-blank-check", Breaks: "blank means empty after JavaScript's trim (NBSP, U+FEFF, U+2028 … are whitespace)",
		Fails: all(conformance.CheckInvalidRequests, conformance.CheckModel),
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			return &trimmedBlank{decorator: decorator{a}, env: e, blank: func(s string) bool { return strings.Trim(s, " \t\n\r") == "" }}
		},
	},
	{
		Name: "go-trimspace-blank-check", Breaks: "blank means empty after JavaScript's trim, not strings.TrimSpace (U+FEFF is blank, U+0085 is not)",
		Fails: all(conformance.CheckInvalidRequests, conformance.CheckModel),
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			return &trimmedBlank{decorator: decorator{a}, env: e, blank: func(s string) bool { return strings.TrimSpace(s) == "" }}
		},
	},
	{
		Name: "validates-before-closed", Breaks: "a closed adapter answers adapter-closed before it validates the request",
		Fails: all(conformance.CheckClosedFirst, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &validatesFirst{decorator: decorator{a}} },
	},
	{
		Name: "records-negotiation-diagnostics", Breaks: "negotiation diagnostics are not recorded in Diagnostics()",
		Fails: all(conformance.CheckRecordedDiagnostics, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &recordsNegotiation{decorator: decorator{a}} },
	},
	{
		Name: "blank-provider-privacy-diagnostic", Breaks: "EnforcePrivacy with a blank provider records no diagnostic",
		Fails: all(conformance.CheckRecordedDiagnostics, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &blankPrivacyRecorded{decorator: decorator{a}}
		},
	},
	{
		Name: "adapter-closed-every-shutdown", Breaks: "adapter-closed is recorded once, however often shutdown is called",
		Fails: all(conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &closedEveryShutdown{decorator: decorator{a}}
		},
	},
	{
		Name: "adapter-closed-recorded-late", Breaks: "the first shutdown records adapter-closed",
		Fails: all(conformance.CheckShutdownOnce, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &closedLate{decorator: decorator{a}} },
	},
	{
		Name: "concurrent-shutdown-busy", Breaks: "a Shutdown concurrent with another returns nil",
		// The model's concurrent shutdowns catch it when they overlap.
		Fails:         all(conformance.CheckConcurrentShutdown),
		ModelByChance: true,
		wrap:          func(a contract.Adapter, _ *env) contract.Adapter { return newBusyShutdown(a) },
	},
	{
		Name: "shared-payload-buffer", Breaks: "concurrent completions each send their own payload",
		Fails: all(conformance.CheckConcurrency, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &sharedBuffer{decorator: decorator{a}} },
	},
	{
		Name: "kv-port-shutdown-every-time", Breaks: "the local KV port is shut down exactly once",
		Fails: all(conformance.CheckLocalKVShutdownOnce, conformance.CheckModel),
		wrap:  func(a contract.Adapter, e *env) contract.Adapter { return portShutdownAgain{decorator{a}, e} },
	},
}

// extra holds the diagnostics a mutant records besides its adapter's; it
// keeps the newest few.
type extra struct {
	mu sync.Mutex
	ds []contract.Diagnostic
}

func (x *extra) record(d contract.Diagnostic) {
	x.mu.Lock()
	x.ds = append(x.ds[max(0, len(x.ds)-9):], d)
	x.mu.Unlock()
}

// after returns inner followed by the extra diagnostics.
func (x *extra) after(inner []contract.Diagnostic) []contract.Diagnostic {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append(inner, x.ds...)
}

type invalidRetryable struct{ decorator }

func (m invalidRetryable) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Code == contract.FallbackInvalidRequest {
		r.Retryable = true
	}
	return r
}

// downgrade reports the diagnostics of one code as warnings.
type downgrade struct {
	decorator
	code string
}

func (m downgrade) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	for i := range ds {
		if ds[i].Code == m.code {
			ds[i].Severity = contract.SeverityWarning
		}
	}
	return ds
}

// transportErrorText records every transport error's text in a diagnostic
// of its own, as an adapter that explains a failure by quoting it does.
type transportErrorText struct {
	decorator
	extra extra
}

func wrapTransportErrorText(a contract.Adapter, e *env) contract.Adapter {
	m := &transportErrorText{decorator: decorator{a}}
	inner := e.transport
	e.transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
		out, err := inner.Send(ctx, req)
		if err != nil {
			m.extra.record(contract.Diagnostic{Code: "completion-transport-error", Severity: contract.SeverityWarning, Message: "Transport failed: " + err.Error()})
		}
		return out, err
	})
	return m
}

func (m *transportErrorText) Diagnostics() []contract.Diagnostic {
	return m.extra.after(m.Adapter.Diagnostics())
}

// trimmedBlank validates provider and model with its own notion of blank:
// what it calls blank falls back invalid-request; what it wrongly calls
// valid it sanitises (under the fixture's remote provider's policy, as an
// unknown provider gets) and sends.
type trimmedBlank struct {
	decorator
	env   *env
	blank func(string) bool
	extra extra
}

func (m *trimmedBlank) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	mine := m.blank(req.Provider) || m.blank(req.Model)
	contracts := contract.IsBlank(req.Provider) || contract.IsBlank(req.Model)
	switch {
	case mine && !contracts:
		if _, err := m.Adapter.CurrentModel(ctx); err != nil { // closed
			return m.Adapter.Complete(ctx, req)
		}
		m.extra.record(contract.Diagnostic{Code: contract.DiagnosticCompletionRequestInvalid, Severity: contract.SeverityWarning, Message: "Completion request is missing provider or model identity"})
		return contract.Fallback(contract.FallbackInvalidRequest, "completion request is invalid", false)
	case !mine && contracts:
		res, err := m.Adapter.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: m.env.fixture.Model.Provider, Payload: req.Payload})
		if err != nil {
			return m.Adapter.Complete(ctx, req)
		}
		out, err := m.env.transport.Send(ctx, contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: res.Destination, Payload: res.Payload})
		if err != nil {
			return contract.Fallback(contract.FallbackTransportFailed, "completion transport failed", true)
		}
		return contract.Completed(out, res.Summary(), nil)
	}
	return m.Adapter.Complete(ctx, req)
}

func (m *trimmedBlank) Diagnostics() []contract.Diagnostic {
	return m.extra.after(m.Adapter.Diagnostics())
}

// validatesFirst checks provider and model before it checks whether it is
// closed.
type validatesFirst struct {
	decorator
	closed atomic.Bool
	extra  extra
}

func (m *validatesFirst) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if m.closed.Load() && (contract.IsBlank(req.Provider) || contract.IsBlank(req.Model)) {
		m.extra.record(contract.Diagnostic{Code: contract.DiagnosticCompletionRequestInvalid, Severity: contract.SeverityWarning, Message: "Completion request is missing provider or model identity"})
		return contract.Fallback(contract.FallbackInvalidRequest, "completion request is invalid", false)
	}
	return m.Adapter.Complete(ctx, req)
}

func (m *validatesFirst) Shutdown(ctx context.Context) error {
	err := m.Adapter.Shutdown(ctx)
	m.closed.Store(true)
	return err
}

func (m *validatesFirst) Diagnostics() []contract.Diagnostic {
	return m.extra.after(m.Adapter.Diagnostics())
}

// recordsNegotiation records every negotiation's diagnostics.
type recordsNegotiation struct {
	decorator
	extra extra
}

func (m *recordsNegotiation) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	n := m.Adapter.NegotiateCapabilities(reqs)
	for _, d := range n.Diagnostics {
		m.extra.record(d)
	}
	return n
}

func (m *recordsNegotiation) Diagnostics() []contract.Diagnostic {
	return m.extra.after(m.Adapter.Diagnostics())
}

// blankPrivacyRecorded records privacy-enforcement-failed when
// EnforcePrivacy is asked for a blank provider.
type blankPrivacyRecorded struct {
	decorator
	extra extra
}

func (m *blankPrivacyRecorded) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	if err != nil && contract.IsBlank(req.Provider) {
		if _, cerr := m.Adapter.CurrentModel(ctx); cerr == nil { // open
			m.extra.record(contract.Diagnostic{Code: contract.DiagnosticPrivacyEnforcementFailed, Severity: contract.SeverityError, Message: "Privacy enforcement failed closed before completion transport"})
		}
	}
	return r, err
}

func (m *blankPrivacyRecorded) Diagnostics() []contract.Diagnostic {
	return m.extra.after(m.Adapter.Diagnostics())
}

// closedEveryShutdown records adapter-closed again on every shutdown after
// the first.
type closedEveryShutdown struct {
	decorator
	calls atomic.Int32
	extra extra
}

func (m *closedEveryShutdown) Shutdown(ctx context.Context) error {
	err := m.Adapter.Shutdown(ctx)
	if m.calls.Add(1) > 1 {
		m.extra.record(contract.Diagnostic{Code: contract.DiagnosticAdapterClosed, Severity: contract.SeverityInfo, Message: "Adapter lifecycle closed cleanly"})
	}
	return err
}

func (m *closedEveryShutdown) Diagnostics() []contract.Diagnostic {
	return m.extra.after(m.Adapter.Diagnostics())
}

// closedLate hides adapter-closed until the second shutdown.
type closedLate struct {
	decorator
	calls atomic.Int32
}

func (m *closedLate) Shutdown(ctx context.Context) error {
	m.calls.Add(1)
	return m.Adapter.Shutdown(ctx)
}

func (m *closedLate) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	if m.calls.Load() < 2 {
		return slices.DeleteFunc(ds, func(d contract.Diagnostic) bool { return d.Code == contract.DiagnosticAdapterClosed })
	}
	return ds
}

// busyShutdown's first Shutdown takes a while (up to busyHold, less when
// another caller arrives), and a Shutdown arriving before it is done fails
// instead of waiting for it.
type busyShutdown struct {
	decorator
	started atomic.Bool
	done    atomic.Bool
	arrived chan struct{}
	once    sync.Once
}

// busyHold bounds how long busyShutdown's first Shutdown waits for a
// concurrent one.
const busyHold = 100 * time.Millisecond

func newBusyShutdown(a contract.Adapter) *busyShutdown {
	return &busyShutdown{decorator: decorator{a}, arrived: make(chan struct{})}
}

func (m *busyShutdown) Shutdown(ctx context.Context) error {
	if m.started.CompareAndSwap(false, true) {
		defer m.done.Store(true)
		select {
		case <-m.arrived:
		case <-time.After(busyHold):
		}
		return m.Adapter.Shutdown(ctx)
	}
	if !m.done.Load() {
		m.once.Do(func() { close(m.arrived) })
		return ErrMutant
	}
	return m.Adapter.Shutdown(ctx)
}

// sharedBuffer encodes every payload into one buffer it shares between
// completions and hands the adapter what the buffer holds once it has
// yielded: a concurrent completion's payload, as often as not. Each access
// is locked, so the race detector sees nothing: only comparing what the
// transport receives with what was sent finds it.
type sharedBuffer struct {
	decorator
	mu  sync.Mutex
	buf []byte
}

func (m *sharedBuffer) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	raw, err := json.Marshal(req.Payload)
	if err != nil {
		return m.Adapter.Complete(ctx, req)
	}
	m.mu.Lock()
	m.buf = append(m.buf[:0], raw...)
	m.mu.Unlock()
	runtime.Gosched()
	m.mu.Lock()
	req.Payload = json.RawMessage(slices.Clone(m.buf))
	m.mu.Unlock()
	return m.Adapter.Complete(ctx, req)
}

// portShutdownAgain shuts the local KV port down once more on every
// Shutdown, after the adapter did.
type portShutdownAgain struct {
	decorator
	env *env
}

func (m portShutdownAgain) Shutdown(ctx context.Context) error {
	err := m.Adapter.Shutdown(ctx)
	if sp, ok := m.env.kv.port.(localkv.ShutdownPort); ok {
		_ = sp.Shutdown(ctx)
	}
	return err
}
