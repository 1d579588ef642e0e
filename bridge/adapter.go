package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ds4context/adapterkit/contract"
)

// Diagnostic codes the bridge records on the harness side, in addition to
// the adapter's own.
const (
	// DiagnosticProcessFailed is recorded once when the connection to the
	// adapter process breaks (exit, timeout, protocol violation).
	DiagnosticProcessFailed = "adapter-process-failed"
)

// ReasonUnavailable is the reason of the fallback Complete returns when the
// adapter process cannot answer.
const ReasonUnavailable = "runtime adapter process did not complete the request"

// maxLocalDiagnostics bounds the diagnostics the bridge keeps itself.
const maxLocalDiagnostics = 100

// remoteAdapter is a contract.Adapter whose methods are calls to one
// instance on the server.
type remoteAdapter struct {
	c         *Client
	id        string
	embedding *embeddingDecl // nil when the instance declared no port

	mu    sync.Mutex
	local []contract.Diagnostic
	noted bool
}

var (
	_ contract.Adapter               = (*remoteAdapter)(nil)
	_ contract.EmbeddingPortProvider = (*remoteAdapter)(nil)
)

// call performs one call on the instance. An adapter-panicked answer is
// re-raised as a panic, as the method would have panicked in process; a
// broken connection is recorded as a diagnostic.
func (a *remoteAdapter) call(ctx context.Context, method string, params, result any) error {
	return a.checked(a.c.p.call(ctx, a.c.timeout, method, params, result))
}

// callAwaited is call through peer.callAwaited: the process's answer is
// awaited even when ctx ends.
func (a *remoteAdapter) callAwaited(ctx context.Context, method string, params, result any) error {
	return a.checked(a.c.p.callAwaited(ctx, a.c.timeout, method, params, result))
}

// checked panics with an adapter's panic the process reported, and notes a
// process that cannot answer.
func (a *remoteAdapter) checked(err error) error {
	if err == nil {
		return nil
	}
	var re *RemoteError
	if errors.As(err, &re) && re.Code == CodeAdapterPanicked {
		panic(re)
	}
	if errors.Is(err, ErrUnavailable) {
		a.noteFailure()
	}
	return err
}

// answered reports whether a method without an error result got its
// answer. When the adapter did not answer — the process cannot answer at
// all (the connection broke: the bridge recorded adapter-process-failed),
// or the request could not be sent (larger than the line bound) — it is
// false, and the method returns the substitute its doc names. When the
// adapter answered with an error (unknown-method included), or with a
// result of the wrong shape, no substitute is honest, since the caller
// would take it for the adapter's own: the method panics with that error (a
// *RemoteError names the method and the remote code; unknown-method
// matches contract.ErrNotImplemented), which the conformance checks report
// as the method's failure. So does an answer the bridge dropped because it
// did not fit beside the answers held (ErrHeldTooLarge): the adapter
// answered, and no substitute is its answer.
func answered(err error) bool {
	var re *RemoteError
	switch {
	case err == nil:
		return true
	case errors.As(err, &re), (errors.Is(err, ErrProtocol) || errors.Is(err, ErrHeldTooLarge)) && !errors.Is(err, ErrUnavailable):
		panic(err)
	}
	return false
}

func (a *remoteAdapter) noteFailure() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.noted {
		return
	}
	a.noted = true
	a.record(contract.Diagnostic{Code: DiagnosticProcessFailed, Severity: contract.SeverityError,
		Message: "Runtime adapter process failed and was stopped; the bridge can no longer reach it"})
}

// record appends a local diagnostic, keeping the newest; a.mu is held.
func (a *remoteAdapter) record(d contract.Diagnostic) {
	a.local = append(a.local, d)
	if len(a.local) > maxLocalDiagnostics {
		a.local = append(a.local[:0], a.local[len(a.local)-maxLocalDiagnostics:]...)
	}
}

func (a *remoteAdapter) params() instanceParams { return instanceParams{Instance: a.id} }

// Identity implements contract.Adapter; when the process cannot answer it
// returns the zero Identity, and an error answer panics (see answered).
func (a *remoteAdapter) Identity() contract.Identity {
	var id contract.Identity
	if !answered(a.call(context.Background(), MethodIdentity, a.params(), &id)) {
		return contract.Identity{}
	}
	return id
}

// CapabilityDeclarations implements contract.Adapter; when the process
// cannot answer it returns none, and an error answer panics (see answered).
func (a *remoteAdapter) CapabilityDeclarations() []contract.CapabilityDeclaration {
	var ds []contract.CapabilityDeclaration
	if !answered(a.call(context.Background(), MethodCapabilityDeclarations, a.params(), &ds)) {
		return nil
	}
	return ds
}

// NegotiateCapabilities implements contract.Adapter; when the process
// cannot answer it returns the zero Negotiation, and an error answer panics
// (see answered).
func (a *remoteAdapter) NegotiateCapabilities(requests []contract.CapabilityRequest) contract.Negotiation {
	if requests == nil {
		requests = []contract.CapabilityRequest{}
	}
	var n contract.Negotiation
	if !answered(a.call(context.Background(), MethodNegotiateCapabilities, negotiateParams{Instance: a.id, Requests: requests}, &n)) {
		return contract.Negotiation{}
	}
	return n
}

func (a *remoteAdapter) snapshot(ctx context.Context, method string) (contract.HistorySnapshot, error) {
	var s contract.HistorySnapshot
	if err := a.call(ctx, method, a.params(), &s); err != nil {
		return contract.HistorySnapshot{}, err
	}
	return s, nil
}

// SnapshotHistory implements contract.Adapter.
func (a *remoteAdapter) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return a.snapshot(ctx, MethodSnapshotHistory)
}

// RebuildDerivedState implements contract.Adapter.
func (a *remoteAdapter) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return a.snapshot(ctx, MethodRebuildDerivedState)
}

// CurrentModel implements contract.Adapter.
func (a *remoteAdapter) CurrentModel(ctx context.Context) (*contract.ModelDescriptor, error) {
	var m *contract.ModelDescriptor
	if err := a.call(ctx, MethodCurrentModel, a.params(), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// TrustedProjectRoot implements contract.Adapter.
func (a *remoteAdapter) TrustedProjectRoot(ctx context.Context) (string, error) {
	var root string
	if err := a.call(ctx, MethodTrustedProjectRoot, a.params(), &root); err != nil {
		return "", err
	}
	return root, nil
}

// payloadParams encodes a payload for the wire. A payload that cannot be
// encoded is never sent: the params say so and the adapter fails closed.
func (a *remoteAdapter) payloadParams(provider, model string, payload any) payloadParams {
	p := payloadParams{Instance: a.id, Provider: provider, Model: model}
	raw, err := marshal(payload)
	if err != nil {
		p.Uninspectable = true
		return p
	}
	p.Payload = raw
	return p
}

// EnforcePrivacy implements contract.Adapter.
func (a *remoteAdapter) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	var r contract.PrivacyResult
	if err := a.call(ctx, MethodEnforcePrivacy, a.payloadParams(req.Provider, "", req.Payload), &r); err != nil {
		return contract.PrivacyResult{}, err
	}
	return r, nil
}

// Complete implements contract.Adapter. When the adapter process cannot
// answer — it exited, hung or broke the protocol — the result is a fallback
// with code adapter-closed, not retryable: the
// process is gone (or no longer trusted), so the native runtime must take
// over, and retrying through the same adapter cannot help. transport-failed
// is not used: it promises a retry may succeed and blames the provider.
//
// When the caller's context ends first, nothing broke: the process is told
// (cancel), the transport callbacks of the call are refused from then on,
// and its answer is still awaited within the call bound — the adapter's own
// answer for a context that ended, exactly what it gives in process. A
// request whose context had ended before the call is sent too, and
// cancelled at once.
//
// An adapter that answers complete with an error breaks the contract (a
// completion never fails): Complete panics with that error, which names
// the method and the remote code (see answered), rather than invent a
// fallback the adapter did not give.
func (a *remoteAdapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	var r contract.CompletionResult
	if !answered(a.callAwaited(ctx, MethodComplete, a.payloadParams(req.Provider, req.Model, req.Payload), &r)) {
		return contract.Fallback(contract.FallbackAdapterClosed, ReasonUnavailable, false)
	}
	return r
}

// Diagnostics implements contract.Adapter: the adapter's diagnostics, then
// the bridge's own. When the process cannot answer only the bridge's are
// returned — adapter-process-failed among them, so the caller can tell; an
// error answer panics (see answered).
func (a *remoteAdapter) Diagnostics() []contract.Diagnostic {
	var ds []contract.Diagnostic
	if !answered(a.call(context.Background(), MethodDiagnostics, a.params(), &ds)) {
		ds = nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return append(ds, a.local...)
}

// Shutdown implements contract.Adapter.
func (a *remoteAdapter) Shutdown(ctx context.Context) error {
	return a.call(ctx, MethodShutdown, a.params(), nil)
}

// EmbeddingPort implements contract.EmbeddingPortProvider: the port the
// instance declared when it was created, whose Embed sends embed requests,
// or nil when it declared none.
func (a *remoteAdapter) EmbeddingPort() contract.EmbeddingPort {
	if a.embedding == nil {
		return nil
	}
	return &remoteEmbedder{a: a, decl: *a.embedding}
}

// remoteEmbedder is an embedding port in the adapter process.
type remoteEmbedder struct {
	a    *remoteAdapter
	decl embeddingDecl
}

// Identity returns the identity the instance declared.
func (e *remoteEmbedder) Identity() contract.EmbeddingIdentity { return e.decl.EmbeddingIdentity }

// Embed sends the texts in one embed request, or, when the port declared a
// maxBatch, in consecutive requests of at most that many texts, and joins
// the vectors in order. With several requests, each must answer one vector
// per text, or the vectors could not be matched to their texts.
func (e *remoteEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	if texts == nil {
		texts = []string{}
	}
	size := len(texts)
	if e.decl.MaxBatch > 0 && size > e.decl.MaxBatch {
		size = e.decl.MaxBatch
	}
	if size == len(texts) {
		var vecs [][]float64
		if err := e.a.call(ctx, MethodEmbed, embedParams{Instance: e.a.id, Texts: texts}, &vecs); err != nil {
			return nil, err
		}
		return vecs, nil
	}
	out := make([][]float64, 0, len(texts))
	for start := 0; start < len(texts); start += size {
		batch := texts[start:min(start+size, len(texts))]
		var vecs [][]float64
		if err := e.a.call(ctx, MethodEmbed, embedParams{Instance: e.a.id, Texts: batch}, &vecs); err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("bridge: %s: %w: a batch of %d texts got %d vectors", MethodEmbed, ErrProtocol, len(batch), len(vecs))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// uninspectable stands for a payload the harness could not encode: its
// encoding fails, so an adapter's privacy enforcement fails closed on it.
type uninspectable struct{}

func (uninspectable) MarshalJSON() ([]byte, error) { return nil, ErrUninspectable }

var _ json.Marshaler = uninspectable{}
