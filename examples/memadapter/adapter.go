package memadapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sync"

	"github.com/ds4context/adapterkit/contract"
)

// Name and Version identify the adapter.
const (
	Name    = "memadapter"
	Version = "0.1.0"
	// MaxDiagnostics is how many diagnostics the adapter keeps (the newest).
	MaxDiagnostics = 100
)

// Errors returned by the adapter.
var (
	// ErrClosed: the adapter has been shut down.
	ErrClosed = errors.New("memadapter: adapter is closed")
	// ErrInvalidOptions: New was given unusable options.
	ErrInvalidOptions = errors.New("memadapter: invalid options")
	// ErrPrivacy: a payload could not be sanitised.
	ErrPrivacy = errors.New("memadapter: privacy enforcement failed")
	// ErrInvalidHistory: the history does not decode or does not validate.
	ErrInvalidHistory = errors.New("memadapter: canonical history is invalid")
)

// Options configures an Adapter.
type Options struct {
	RuntimeID   string
	SessionID   string
	ProjectRoot string // canonical (absolute, symlink-resolved)
	Model       *contract.ModelDescriptor
	Messages    []contract.Message
	Transport   contract.Transport
	// Embeddings configures a deterministic local embedding port.
	Embeddings bool
}

// Adapter is an in-memory runtime adapter. It is safe for concurrent use.
//
// Its canonical history is the runtime's store: one wire-JSON record per
// message, as the runtime wrote it. Snapshots decode and validate the
// records; the snapshot is derived state, kept until the store changes or
// a rebuild drops it, and every caller gets a deep copy.
type Adapter struct {
	opts    Options
	port    contract.EmbeddingPort
	mu      sync.Mutex
	records [][]byte // the canonical history
	writes  int      // counts changes of records
	// whole holds the records before the first Corrupt or Break of the
	// source since the history was last whole, nil when it is whole.
	whole  [][]byte
	snap   *contract.HistorySnapshot
	snapAt int // writes when snap was derived
	diags  []contract.Diagnostic
	shut   bool
}

var _ contract.Adapter = (*Adapter)(nil)
var _ contract.EmbeddingPortProvider = (*Adapter)(nil)

// New returns an adapter whose canonical history holds opts.Messages. A
// message that cannot be encoded as wire JSON is an ErrInvalidHistory
// error; a history that does not validate fails the snapshots.
func New(opts Options) (*Adapter, error) {
	if contract.IsBlank(opts.RuntimeID) || contract.IsBlank(opts.SessionID) || contract.IsBlank(opts.ProjectRoot) || opts.Transport == nil {
		return nil, ErrInvalidOptions
	}
	records := make([][]byte, len(opts.Messages))
	for i := range opts.Messages {
		b, err := contract.AppendMessageJSON(nil, &opts.Messages[i])
		if err != nil {
			return nil, ErrInvalidHistory
		}
		records[i] = b
	}
	opts.Messages = nil
	opts.Model = contract.CloneModel(opts.Model) // the caller's stays the caller's
	a := &Adapter{opts: opts, records: records}
	if opts.Embeddings {
		a.port = hashEmbedder{}
	}
	return a, nil
}

// Identity names the adapter.
func (a *Adapter) Identity() contract.Identity {
	return contract.Identity{RuntimeID: a.opts.RuntimeID, AdapterName: Name, AdapterVersion: Version, ContractVersion: contract.ContractVersion}
}

// CapabilityDeclarations declares embeddings when a port is configured and
// explains every capability it does not support.
func (a *Adapter) CapabilityDeclarations() []contract.CapabilityDeclaration {
	emb := contract.CapabilityDeclaration{ID: contract.CapabilityEmbeddings, Reason: "no embedding port was configured"}
	if a.port != nil {
		emb = contract.CapabilityDeclaration{ID: contract.CapabilityEmbeddings, Supported: true, Version: "embedding-port-v1"}
	}
	return []contract.CapabilityDeclaration{
		{ID: contract.CapabilityCompaction, Reason: "in-memory runtime has no native compaction"},
		{ID: contract.CapabilityProviderContinuation, Reason: "in-memory transport has no continuation handle"},
		emb,
		{ID: contract.CapabilityLocalKVReuse, Reason: "in-memory transport exposes no local KV state"},
	}
}

// NegotiateCapabilities negotiates against the adapter's declarations.
func (a *Adapter) NegotiateCapabilities(requests []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(a.CapabilityDeclarations(), requests)
}

// EmbeddingPort returns the embedding port, or nil when none is configured.
func (a *Adapter) EmbeddingPort() contract.EmbeddingPort { return a.port }

func (a *Adapter) record(code string, sev contract.Severity, msg string) {
	a.diags = append(a.diags, contract.Diagnostic{Code: code, Severity: sev, Message: msg})
	if n := len(a.diags) - MaxDiagnostics; n > 0 {
		a.diags = slices.Delete(a.diags, 0, n)
	}
}

// SnapshotHistory returns a deep copy of the history snapshot, derived
// again when the canonical history changed. A record that does not decode
// records canonical-history-read-failed and a history that does not
// validate canonical-history-invalid (both of severity error); each also
// returns an error.
func (a *Adapter) SnapshotHistory(context.Context) (contract.HistorySnapshot, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shut {
		return contract.HistorySnapshot{}, ErrClosed
	}
	return a.snapshotLocked()
}

func (a *Adapter) snapshotLocked() (contract.HistorySnapshot, error) {
	if a.snap == nil || a.snapAt != a.writes {
		a.snap = nil
		h := sha256.New()
		msgs := make([]contract.Message, len(a.records))
		for i, rec := range a.records {
			m, err := contract.DecodeMessage(rec)
			if err != nil {
				a.record("canonical-history-read-failed", contract.SeverityError, "Canonical history holds a record that does not decode")
				return contract.HistorySnapshot{}, ErrInvalidHistory
			}
			msgs[i] = m
			h.Write(rec)
			h.Write([]byte{'\n'})
		}
		s := contract.HistorySnapshot{
			SchemaVersion:    contract.HistorySchemaVersion,
			RuntimeID:        a.opts.RuntimeID,
			SessionID:        a.opts.SessionID,
			Revision:         hex.EncodeToString(h.Sum(nil)),
			ProjectRoot:      a.opts.ProjectRoot,
			Messages:         msgs,
			ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs),
		}
		if is := contract.ValidateHistorySnapshot(&s); len(is) > 0 {
			a.record("canonical-history-invalid", contract.SeverityError, "Canonical history validation failed")
			return contract.HistorySnapshot{}, ErrInvalidHistory
		}
		a.snap, a.snapAt = &s, a.writes
	}
	return contract.CloneSnapshot(a.snap), nil
}

// appendRecord appends msg to the canonical history, as the runtime
// records a new entry.
func (a *Adapter) appendRecord(msg contract.Message) error {
	b, err := contract.AppendMessageJSON(nil, &msg)
	if err != nil {
		return ErrInvalidHistory
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, b)
	a.writes++
	return nil
}

// tearLastRecord cuts the last record of the canonical history in half,
// as a torn write would leave it; an empty history gets a torn record.
func (a *Adapter) tearLastRecord() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keepWholeLocked()
	if len(a.records) == 0 {
		a.records = append(a.records, []byte(`{"id":`))
		a.writes++
		return nil
	}
	last := a.records[len(a.records)-1]
	a.records[len(a.records)-1] = slices.Clone(last[:len(last)/2])
	a.writes++
	return nil
}

// RebuildDerivedState drops the cached snapshot and computes it again.
func (a *Adapter) RebuildDerivedState(context.Context) (contract.HistorySnapshot, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shut {
		return contract.HistorySnapshot{}, ErrClosed
	}
	a.snap = nil
	s, err := a.snapshotLocked()
	if err == nil {
		a.record("derived-state-rebuilt", contract.SeverityInfo, "Disposable adapter state was rebuilt from canonical history")
	}
	return s, err
}

// CurrentModel returns a deep copy of the configured model, or nil.
func (a *Adapter) CurrentModel(context.Context) (*contract.ModelDescriptor, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shut {
		return nil, ErrClosed
	}
	return contract.CloneModel(a.opts.Model), nil
}

// TrustedProjectRoot returns the configured canonical project root.
func (a *Adapter) TrustedProjectRoot(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shut {
		return "", ErrClosed
	}
	return a.opts.ProjectRoot, nil
}

// EnforcePrivacy sanitises req.Payload for req.Provider.
func (a *Adapter) EnforcePrivacy(_ context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	a.mu.Lock()
	closed := a.shut
	a.mu.Unlock()
	if closed {
		return contract.PrivacyResult{}, ErrClosed
	}
	if contract.IsBlank(req.Provider) {
		return contract.PrivacyResult{}, ErrPrivacy
	}
	res, err := sanitize(req.Provider, req.Payload)
	if err != nil {
		a.mu.Lock()
		a.record(contract.DiagnosticPrivacyEnforcementFailed, contract.SeverityError, "Privacy enforcement failed closed before completion transport")
		a.mu.Unlock()
		return contract.PrivacyResult{}, ErrPrivacy
	}
	return res, nil
}

// Complete sanitises the payload and calls the transport, falling back
// explicitly on every failure.
func (a *Adapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	a.mu.Lock()
	closed := a.shut
	if !closed && (contract.IsBlank(req.Provider) || contract.IsBlank(req.Model)) {
		a.record(contract.DiagnosticCompletionRequestInvalid, contract.SeverityWarning, "Completion request is missing provider or model identity")
		a.mu.Unlock()
		return contract.Fallback(contract.FallbackInvalidRequest, "completion request is invalid", false)
	}
	a.mu.Unlock()
	if closed {
		return contract.Fallback(contract.FallbackAdapterClosed, "adapter is closed", false)
	}
	res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: req.Provider, Payload: req.Payload})
	if err != nil {
		return contract.Fallback(contract.FallbackPrivacyEnforcementFail, "privacy enforcement failed closed", false)
	}
	out, err := a.opts.Transport.Send(ctx, contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: res.Destination, Payload: res.Payload})
	if err != nil {
		a.mu.Lock()
		a.record(contract.DiagnosticCompletionTransportFailed, contract.SeverityWarning, "Completion transport failed; native runtime fallback remains available")
		a.mu.Unlock()
		return contract.Fallback(contract.FallbackTransportFailed, "completion transport failed", true)
	}
	return contract.Completed(out, res.Summary(), nil)
}

// Diagnostics returns a copy of the newest diagnostics.
func (a *Adapter) Diagnostics() []contract.Diagnostic {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.diags)
}

// Shutdown closes the adapter; later calls do nothing.
func (a *Adapter) Shutdown(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.shut {
		a.shut = true
		a.snap = nil
		a.record(contract.DiagnosticAdapterClosed, contract.SeverityInfo, "Adapter lifecycle closed cleanly")
	}
	return nil
}

// hashEmbedder embeds texts into 8 deterministic dimensions.
type hashEmbedder struct{}

func (hashEmbedder) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "memadapter", Model: "sha256-8", Dimensions: 8, Destination: contract.DestinationLocal}
}

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		sum := sha256.Sum256([]byte(t))
		v := make([]float64, 8)
		for d := range v {
			v[d] = float64(sum[d])/255 + 0.01
		}
		out[i] = v
	}
	return out, nil
}
