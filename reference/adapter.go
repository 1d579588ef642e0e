package reference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// Version is the version of this kit's reference adapter (its
// adapterVersion).
const Version = "0.2.0"

// AdapterName is the reference adapter's adapterName.
const AdapterName = "ds4-context-reference-adapter-go"

// EmbeddingPortVersion is the version the adapter declares for the
// embeddings capability when an embedding port is configured.
const EmbeddingPortVersion = "embedding-port-v1"

// Reasons the adapter declares for the capabilities it does not support.
const (
	ReasonNoCompaction           = "reference JSONL runtime has no native compaction hook"
	ReasonNoProviderContinuation = "reference completion transport exposes no provider continuation handle"
	ReasonNoEmbeddingPort        = "no embedding port was configured"
	ReasonNoLocalKV              = "reference completion transport exposes no local KV state"
)

// Fallback reasons of Complete.
const (
	ReasonAdapterClosed   = "reference adapter is closed"
	ReasonInvalidRequest  = "completion request is invalid"
	ReasonPrivacyFailed   = "privacy enforcement failed closed"
	ReasonTransportFailed = "completion transport failed"
)

// ErrInvalidRequest is returned by EnforcePrivacy for a blank provider.
var ErrInvalidRequest = errors.New("reference: provider is blank")

// ErrPrivacyFailed is wrapped by every EnforcePrivacy error raised inside
// sanitisation (together with the privacy engine's own error).
var ErrPrivacyFailed = errors.New("reference: privacy enforcement failed closed")

// Options configure an Adapter.
type Options struct {
	// HistoryPath is the history file (required). It need not exist yet:
	// snapshots fail until it does.
	HistoryPath string
	// RuntimeID is trimmed; blank means DefaultRuntimeID. The history
	// header must carry the same runtime id.
	RuntimeID string
	// ProjectRoot is the project root the runtime trusts (required, must
	// exist). It is resolved to its canonical real path; the history
	// header's root must resolve to the same path.
	ProjectRoot string
	// Model is the selected model, or nil for none. A model with a blank
	// provider or id, or a context window that is not positive, is rejected.
	Model *contract.ModelDescriptor
	// Transport is the runtime's completion transport (required).
	Transport contract.Transport
	// Privacy configures the privacy engine; nil means
	// privacy.DefaultConfig(). An invalid configuration is rejected.
	Privacy *privacy.Config
	// EmbeddingPort, when set, is exposed through EmbeddingPort and
	// declared as the embeddings capability.
	EmbeddingPort contract.EmbeddingPort
	// LocalKV, when set, configures local KV reuse through a runtime port
	// (see LocalKVOptions); nil declares local-kv-reuse unsupported.
	LocalKV *LocalKVOptions
	// MaxBytes bounds the history file size; 0 means DefaultMaxBytes and a
	// negative value is rejected.
	MaxBytes int64
	// MaxMessages bounds the number of messages; 0 means
	// DefaultMaxMessages and a negative value is rejected.
	MaxMessages int
}

// Adapter is the reference runtime adapter: it projects an append-only
// JSONL history file into snapshots and sends completions through a
// callback transport after privacy enforcement. It is safe for concurrent
// use.
type Adapter struct {
	runtimeID string
	root      string
	model     *contract.ModelDescriptor
	transport contract.Transport
	embedding contract.EmbeddingPort
	privacy   *privacy.Engine
	kv        *localKV // nil when local KV is not configured

	closed atomic.Bool
	diags  ring

	// loading holds one token while a snapshot reads the file: reads are
	// serialised, and a caller waits for its turn only as long as its
	// context allows. mu guards store.c alone and is never held while
	// reading the file, so Shutdown never waits for a read.
	loading chan struct{}
	mu      sync.Mutex
	store   store
}

var (
	_ contract.Adapter               = (*Adapter)(nil)
	_ contract.EmbeddingPortProvider = (*Adapter)(nil)
)

func optionsError(reason string) error { return fmt.Errorf("%w: %s", ErrInvalidOptions, reason) }

// New validates opts and returns an adapter. Errors wrap ErrInvalidOptions.
func New(opts Options) (*Adapter, error) {
	if contract.IsBlank(opts.HistoryPath) {
		return nil, optionsError("history path is blank")
	}
	runtimeID := jsstring.Trim(opts.RuntimeID)
	if runtimeID == "" {
		runtimeID = DefaultRuntimeID
	}
	if contract.IsBlank(opts.ProjectRoot) {
		return nil, optionsError("project root is blank")
	}
	root, err := resolveRoot(opts.ProjectRoot)
	if err != nil {
		return nil, optionsError("project root does not resolve")
	}
	if m := opts.Model; m != nil && (contract.IsBlank(m.Provider) || contract.IsBlank(m.ID) || m.ContextWindow <= 0) {
		return nil, optionsError("model needs a provider, an id and a positive context window")
	}
	if opts.Transport == nil {
		return nil, optionsError("transport is required")
	}
	l, err := limits{maxBytes: opts.MaxBytes, maxMessages: opts.MaxMessages}.resolve()
	if err != nil {
		return nil, err
	}
	cfg := privacy.DefaultConfig()
	if opts.Privacy != nil {
		cfg = *opts.Privacy
	}
	engine, err := privacy.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	kv, err := newLocalKV(opts.LocalKV, cfg)
	if err != nil {
		return nil, err
	}
	return &Adapter{
		runtimeID: runtimeID,
		root:      root,
		model:     contract.CloneModel(opts.Model),
		transport: opts.Transport,
		embedding: opts.EmbeddingPort,
		privacy:   engine,
		kv:        kv,
		loading:   make(chan struct{}, 1),
		store:     store{path: opts.HistoryPath, limits: l},
	}, nil
}

// Identity names the adapter.
func (a *Adapter) Identity() contract.Identity {
	return contract.Identity{RuntimeID: a.runtimeID, AdapterName: AdapterName, AdapterVersion: Version, ContractVersion: contract.ContractVersion}
}

// CapabilityDeclarations declares compaction and provider continuation
// unsupported, embeddings supported exactly when an embedding port is
// configured, and local KV reuse supported exactly when a local KV port is
// configured (enabled or not).
func (a *Adapter) CapabilityDeclarations() []contract.CapabilityDeclaration {
	emb := contract.CapabilityDeclaration{ID: contract.CapabilityEmbeddings, Reason: ReasonNoEmbeddingPort}
	if a.embedding != nil {
		emb = contract.CapabilityDeclaration{ID: contract.CapabilityEmbeddings, Supported: true, Version: EmbeddingPortVersion}
	}
	return []contract.CapabilityDeclaration{
		{ID: contract.CapabilityCompaction, Reason: ReasonNoCompaction},
		{ID: contract.CapabilityProviderContinuation, Reason: ReasonNoProviderContinuation},
		emb,
		a.kv.declaration(),
	}
}

// NegotiateCapabilities negotiates requests against the adapter's
// declarations. Its diagnostics are returned, not recorded.
func (a *Adapter) NegotiateCapabilities(requests []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(a.CapabilityDeclarations(), requests)
}

// EmbeddingPort returns the configured embedding port, or nil.
func (a *Adapter) EmbeddingPort() contract.EmbeddingPort { return a.embedding }

// SnapshotHistory reads the history file and returns its snapshot: a deep
// copy the caller owns. A file that cannot be read or parsed records
// canonical-history-read-failed, a header that does not match the adapter
// canonical-history-identity-mismatch, and a history that does not validate
// canonical-history-invalid; each also returns the error.
func (a *Adapter) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return a.snapshot(ctx, false)
}

// RebuildDerivedState drops the cached history, reads the file again and
// records derived-state-rebuilt when that succeeds.
func (a *Adapter) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return a.snapshot(ctx, true)
}

func (a *Adapter) snapshot(ctx context.Context, rebuild bool) (contract.HistorySnapshot, error) {
	if a.closed.Load() {
		return contract.HistorySnapshot{}, ErrClosed
	}
	select {
	case a.loading <- struct{}{}:
	case <-ctx.Done():
		return contract.HistorySnapshot{}, ctx.Err()
	}
	a.mu.Lock()
	if rebuild {
		a.store.c = nil
	}
	prev := a.store.c
	a.mu.Unlock()
	if a.closed.Load() {
		<-a.loading
		return contract.HistorySnapshot{}, ErrClosed
	}
	// While the file is read and compared, copy the cached history for the
	// caller: when the file is unchanged or only grew, that copy is the
	// snapshot's prefix, and on a second processor it costs no time.
	early := startCopy(prev)
	c, extended, err := a.store.load(ctx, prev, a.runtimeID, a.root)
	a.mu.Lock()
	if err == nil && !a.closed.Load() {
		a.store.c = c
	}
	a.mu.Unlock()
	<-a.loading
	if err != nil {
		switch code := errorCode(err); code {
		case "":
		case CodeHistoryInvalid:
			var ve *ValidationError
			errors.As(err, &ve)
			a.diags.record(contract.Diagnostic{Code: code, Severity: contract.SeverityError, Message: invalidHistoryMessage(len(ve.Issues))})
		default:
			a.diags.add(code)
		}
		return contract.HistorySnapshot{}, err
	}
	if rebuild {
		a.diags.add(CodeDerivedStateRebuilt)
	}
	// c is immutable once loaded (see store.extend), so the copy is made
	// outside the lock.
	msgs, groups := early.result(c, extended)
	return contract.HistorySnapshot{
		SchemaVersion:    contract.HistorySchemaVersion,
		RuntimeID:        c.header.RuntimeID,
		SessionID:        c.header.SessionID,
		Revision:         c.revision,
		ProjectRoot:      a.root,
		Messages:         msgs,
		ToolAtomicGroups: groups,
	}, nil
}

// CurrentModel returns a copy of the configured model, or nil.
func (a *Adapter) CurrentModel(context.Context) (*contract.ModelDescriptor, error) {
	if a.closed.Load() {
		return nil, ErrClosed
	}
	return contract.CloneModel(a.model), nil
}

// TrustedProjectRoot returns the canonical project root.
func (a *Adapter) TrustedProjectRoot(context.Context) (string, error) {
	if a.closed.Load() {
		return "", ErrClosed
	}
	return a.root, nil
}

// EnforcePrivacy sanitises req.Payload for req.Provider. A closed adapter
// or a blank provider is an error without a diagnostic; a failure inside
// sanitisation records privacy-enforcement-failed and returns an error
// wrapping ErrPrivacyFailed.
func (a *Adapter) EnforcePrivacy(_ context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	if a.closed.Load() {
		return contract.PrivacyResult{}, ErrClosed
	}
	if contract.IsBlank(req.Provider) {
		return contract.PrivacyResult{}, ErrInvalidRequest
	}
	return a.enforce(req.Provider, req.Payload)
}

func (a *Adapter) enforce(provider string, payload any) (res contract.PrivacyResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("privacy engine panicked")
		}
		if err != nil {
			a.diags.add(contract.DiagnosticPrivacyEnforcementFailed)
			res, err = contract.PrivacyResult{}, errors.Join(ErrPrivacyFailed, err)
		}
	}()
	r, err := a.privacy.SanitizePayload(provider, payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	return r.ForProvider(provider), nil
}

// Complete sanitises req.Payload for req.Provider and sends only the
// sanitised payload through the transport. It never fails: a closed
// adapter, a request without provider or model, a privacy failure (the
// transport is then not called) and a transport error each give an
// explicit fallback.
//
// With local KV configured and enabled, a request whose sanitised
// destination is local is first offered to the local KV path (see
// LocalKVOptions): a KV completion carries LocalKV metadata; an ineligible
// request goes through the transport as usual; a failed KV path records
// local-kv-replay-failed and sends the full sanitised payload through the
// transport.
func (a *Adapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if a.closed.Load() {
		return contract.Fallback(contract.FallbackAdapterClosed, ReasonAdapterClosed, false)
	}
	if contract.IsBlank(req.Provider) || contract.IsBlank(req.Model) {
		a.diags.add(contract.DiagnosticCompletionRequestInvalid)
		return contract.Fallback(contract.FallbackInvalidRequest, ReasonInvalidRequest, false)
	}
	res, err := a.enforce(req.Provider, req.Payload)
	if err != nil {
		return contract.Fallback(contract.FallbackPrivacyEnforcementFail, ReasonPrivacyFailed, false)
	}
	treq := contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: res.Destination, Payload: res.Payload}
	out, meta, done, failed := a.kv.complete(ctx, a.runtimeID, treq)
	if done {
		return contract.Completed(out, res.Summary(), meta)
	}
	if failed {
		a.diags.record(localKVDiagnostic(contract.DiagnosticLocalKVReplayFailed))
	}
	out, err = a.send(ctx, treq)
	if err != nil {
		a.diags.add(contract.DiagnosticCompletionTransportFailed)
		return contract.Fallback(contract.FallbackTransportFailed, ReasonTransportFailed, true)
	}
	return contract.Completed(out, res.Summary(), nil)
}

// send is the completion path after privacy enforcement: the one place a
// sanitised request leaves the adapter. A panicking transport counts as a
// failed one.
func (a *Adapter) send(ctx context.Context, req contract.TransportRequest) (out json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errors.New("transport panicked")
		}
	}()
	return a.transport.Send(ctx, req)
}

// Diagnostics returns the newest diagnostics (at most MaxDiagnostics),
// oldest first.
func (a *Adapter) Diagnostics() []contract.Diagnostic { return a.diags.list() }

// Shutdown closes the adapter and drops its cache. The first call shuts the
// local KV port down (when one is configured, enabled or not), recording
// local-kv-shutdown-failed if that fails, then records adapter-closed;
// later calls do nothing. It returns nil: a port that fails to shut down
// does not keep the adapter open.
func (a *Adapter) Shutdown(ctx context.Context) error {
	if !a.closed.CompareAndSwap(false, true) {
		return nil
	}
	a.mu.Lock()
	a.store.c = nil
	a.mu.Unlock()
	if a.kv != nil {
		if err := a.kv.shutdown(ctx); err != nil {
			a.diags.record(localKVDiagnostic(contract.DiagnosticLocalKVShutdownFailed))
		}
	}
	a.diags.add(contract.DiagnosticAdapterClosed)
	return nil
}
