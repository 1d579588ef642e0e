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

// Identity implements contract.Adapter; a failed call returns the zero
// Identity.
func (a *remoteAdapter) Identity() contract.Identity {
	var id contract.Identity
	if a.call(context.Background(), MethodIdentity, a.params(), &id) != nil {
		return contract.Identity{}
	}
	return id
}

// CapabilityDeclarations implements contract.Adapter; a failed call returns
// none.
func (a *remoteAdapter) CapabilityDeclarations() []contract.CapabilityDeclaration {
	var ds []contract.CapabilityDeclaration
	if a.call(context.Background(), MethodCapabilityDeclarations, a.params(), &ds) != nil {
		return nil
	}
	return ds
}

// NegotiateCapabilities implements contract.Adapter; a failed call returns
// the zero Negotiation.
func (a *remoteAdapter) NegotiateCapabilities(requests []contract.CapabilityRequest) contract.Negotiation {
	if requests == nil {
		requests = []contract.CapabilityRequest{}
	}
	var n contract.Negotiation
	if a.call(context.Background(), MethodNegotiateCapabilities, negotiateParams{Instance: a.id, Requests: requests}, &n) != nil {
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
// answer — it exited, hung, broke the protocol or answered with an error —
// the result is a fallback with code adapter-closed, not retryable: the
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
func (a *remoteAdapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	var r contract.CompletionResult
	if err := a.callAwaited(ctx, MethodComplete, a.payloadParams(req.Provider, req.Model, req.Payload), &r); err != nil {
		return contract.Fallback(contract.FallbackAdapterClosed, ReasonUnavailable, false)
	}
	return r
}

// Diagnostics implements contract.Adapter: the adapter's diagnostics, then
// the bridge's own. When the call fails only the bridge's are returned.
func (a *remoteAdapter) Diagnostics() []contract.Diagnostic {
	var ds []contract.Diagnostic
	err := a.call(context.Background(), MethodDiagnostics, a.params(), &ds)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		ds = nil
	}
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
