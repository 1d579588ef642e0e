package mutants

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/reference"
)

// referenceMessages are the diagnostic messages SPEC §12 gives the
// reference adapter, by code.
var referenceMessages = map[string]string{
	reference.CodeHistoryReadFailed:              "Canonical JSONL history is missing, corrupt, truncated, or outside configured bounds",
	reference.CodeHistoryIdentityMismatch:        "Canonical history identity does not match the trusted adapter configuration",
	reference.CodeDerivedStateRebuilt:            "Disposable adapter state was rebuilt from canonical JSONL history",
	contract.DiagnosticPrivacyEnforcementFailed:  "Privacy enforcement failed closed before completion transport",
	contract.DiagnosticCompletionRequestInvalid:  "Completion request is missing provider or model identity",
	contract.DiagnosticCompletionTransportFailed: "Completion transport failed; native runtime fallback remains available",
	contract.DiagnosticLocalKVReplayFailed:       "Local KV transport failed; completion retried with a full prompt through native transport",
	contract.DiagnosticLocalKVShutdownFailed:     "Runtime KV shutdown failed after adapter closure",
	contract.DiagnosticAdapterClosed:             "Reference adapter lifecycle closed cleanly",
}

// referenceSeverities are the severities SPEC §9, §11 and §12 give them.
var referenceSeverities = map[string]contract.Severity{
	reference.CodeHistoryReadFailed:              contract.SeverityError,
	reference.CodeHistoryIdentityMismatch:        contract.SeverityError,
	reference.CodeHistoryInvalid:                 contract.SeverityError,
	reference.CodeDerivedStateRebuilt:            contract.SeverityInfo,
	contract.DiagnosticPrivacyEnforcementFailed:  contract.SeverityError,
	contract.DiagnosticCompletionRequestInvalid:  contract.SeverityWarning,
	contract.DiagnosticCompletionTransportFailed: contract.SeverityWarning,
	contract.DiagnosticLocalKVReplayFailed:       contract.SeverityWarning,
	contract.DiagnosticLocalKVShutdownFailed:     contract.SeverityWarning,
	contract.DiagnosticAdapterClosed:             contract.SeverityInfo,
}

// diagnosticOf is the diagnostic of code as SPEC §12 words it.
func diagnosticOf(code string) contract.Diagnostic {
	d := contract.Diagnostic{Code: code, Severity: referenceSeverities[code], Message: referenceMessages[code]}
	if code == contract.DiagnosticLocalKVReplayFailed || code == contract.DiagnosticLocalKVShutdownFailed {
		d.Capability = contract.CapabilityLocalKVReuse
	}
	return d
}

// keepPolicy adds d to a diagnostics list as an adapter's bound does.
type keepPolicy func(log []contract.Diagnostic, d contract.Diagnostic) []contract.Diagnostic

// keepNewest keeps the newest n: SPEC §12's policy with n = 100.
func keepNewest(n int) keepPolicy {
	return func(log []contract.Diagnostic, d contract.Diagnostic) []contract.Diagnostic {
		log = append(log, d)
		if len(log) > n {
			log = slices.Delete(log, 0, len(log)-n)
		}
		return log
	}
}

// keepOldest keeps the first n and records nothing once full.
func keepOldest(n int) keepPolicy {
	return func(log []contract.Diagnostic, d contract.Diagnostic) []contract.Diagnostic {
		if len(log) < n {
			log = append(log, d)
		}
		return log
	}
}

// ownLog is the reference adapter keeping its diagnostics in a list of its
// own: it records the codes SPEC §9, §11 and §12 make the reference
// adapter record, with §12's messages, from what each call answered, and
// adds each under its own keep policy. With keepNewest(100) it answers
// exactly as the reference adapter does (a test holds it to that); the
// mutants give it another bound, or another defect that fails a read or
// a completion (which it records as the reference adapter would).
type ownLog struct {
	decorator
	env  *env
	keep keepPolicy
	// check, when set, fails a read the wrapped adapter answered: its
	// error is recorded as the reference adapter records a read's (a
	// *reference.ValidationError as canonical-history-invalid, any other
	// as canonical-history-read-failed).
	check func(s *contract.HistorySnapshot) error
	// output, when set, passes a completed output on, or reports it
	// unreadable (the completion then falls back transport-failed).
	output func(out json.RawMessage) (json.RawMessage, bool)

	mu   sync.Mutex
	log  []contract.Diagnostic
	once sync.Once
}

func newOwnLog(a contract.Adapter, e *env, keep keepPolicy) *ownLog {
	return &ownLog{decorator: decorator{a}, env: e, keep: keep}
}

func (m *ownLog) record(code string) {
	m.mu.Lock()
	m.log = m.keep(m.log, diagnosticOf(code))
	m.mu.Unlock()
}

// Diagnostics returns the adapter's own list, oldest first.
func (m *ownLog) Diagnostics() []contract.Diagnostic {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]contract.Diagnostic{}, m.log...)
}

// replayFailedKey carries, in a completion's context, the flag the local KV
// port shim sets when the full replay fails (see replayWatch).
type replayFailedKey struct{}

func (m *ownLog) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	failed := new(atomic.Bool)
	r := m.Adapter.Complete(context.WithValue(ctx, replayFailedKey{}, failed), req)
	if failed.Load() {
		m.record(contract.DiagnosticLocalKVReplayFailed)
	}
	if r.Status == contract.StatusCompleted && r.LocalKV == nil && m.output != nil {
		if out, ok := m.output(r.Output); ok {
			r.Output = out
		} else {
			r = contract.Fallback(contract.FallbackTransportFailed, reference.ReasonTransportFailed, true)
		}
	}
	switch r.Code {
	case contract.FallbackInvalidRequest:
		m.record(contract.DiagnosticCompletionRequestInvalid)
	case contract.FallbackPrivacyEnforcementFail:
		m.record(contract.DiagnosticPrivacyEnforcementFailed)
	case contract.FallbackTransportFailed:
		m.record(contract.DiagnosticCompletionTransportFailed)
	}
	return r
}

func (m *ownLog) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	if errors.Is(err, reference.ErrPrivacyFailed) {
		m.record(contract.DiagnosticPrivacyEnforcementFailed)
	}
	return r, err
}

func (m *ownLog) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.read(m.Adapter.SnapshotHistory(ctx))
}

func (m *ownLog) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.read(m.Adapter.RebuildDerivedState(ctx))
	if err == nil {
		m.record(reference.CodeDerivedStateRebuilt)
	}
	return s, err
}

// read records the diagnostic of a failed read, as the reference adapter
// does (none for a closed adapter or an ended context).
func (m *ownLog) read(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err == nil && m.check != nil {
		if err = m.check(&s); err != nil {
			s = contract.HistorySnapshot{}
		}
	}
	var ve *reference.ValidationError
	switch {
	case err == nil, errors.Is(err, reference.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
	case errors.As(err, &ve):
		m.mu.Lock()
		m.log = m.keep(m.log, contract.Diagnostic{Code: reference.CodeHistoryInvalid, Severity: contract.SeverityError,
			Message: "Canonical history validation failed with " + strconv.Itoa(len(ve.Issues)) + " issue(s)"})
		m.mu.Unlock()
	case errors.Is(err, reference.ErrIdentityMismatch):
		m.record(reference.CodeHistoryIdentityMismatch)
	default:
		m.record(reference.CodeHistoryReadFailed)
	}
	return s, err
}

// Shutdown records, on the first call, what the wrapped adapter's first
// shutdown recorded: a failed port shutdown, then adapter-closed. Every
// call returns once that is recorded.
func (m *ownLog) Shutdown(ctx context.Context) error {
	err := m.Adapter.Shutdown(ctx)
	m.once.Do(func() {
		if m.env.kv.shutdownFailed.Load() {
			m.record(contract.DiagnosticLocalKVShutdownFailed)
		}
		m.record(contract.DiagnosticAdapterClosed)
	})
	return err
}

// replayWatch is the local KV port of an ownLog mutant: it tells the
// completion whose context it is given that its full replay failed (an
// error or a malformed answer, as the controller judges it), and the
// mutant that the port failed to shut down.
type replayWatch struct {
	portShim
	env *env
}

func watchReplays(p localkv.RuntimePort, e *env) localkv.RuntimePort {
	return replayWatch{portShim{p}, e}
}

func (p replayWatch) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	a, err := p.RuntimePort.FullReplay(ctx, r)
	malformed := len(a.Output) == 0 || !json.Valid(a.Output) || a.PrefillTokens < 0 ||
		math.IsNaN(a.PrefillLatencyMs) || math.IsInf(a.PrefillLatencyMs, 0) || a.PrefillLatencyMs < 0
	if f, ok := ctx.Value(replayFailedKey{}).(*atomic.Bool); ok && (err != nil || malformed) {
		f.Store(true)
	}
	return a, err
}

func (p replayWatch) Shutdown(ctx context.Context) error {
	err := p.portShim.Shutdown(ctx)
	if err != nil {
		p.env.kv.shutdownFailed.Store(true)
	}
	return err
}
