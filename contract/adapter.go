package contract

import (
	"context"
	"encoding/json"
	"errors"
)

// ErrNotImplemented is what an adapter method returns when the adapter does
// not implement it (a method without an error result panics with an error
// wrapping it). An adapter process that answers the bridge's unknown-method
// error reaches the harness so. The conformance checks name such a method
// in every check that calls it, and no check passes on it: an adapter that
// does not implement a method of the contract does not conform.
var ErrNotImplemented = errors.New("contract: method not implemented")

// ModelDescriptor describes the selected provider model and its limits.
type ModelDescriptor struct {
	Provider      string     `json:"provider"`
	ID            string     `json:"id"`
	ContextWindow int64      `json:"contextWindow"`
	MaxTokens     *int64     `json:"maxTokens,omitempty"`
	Reasoning     *bool      `json:"reasoning,omitempty"`
	Input         []string   `json:"input,omitempty"`
	Cost          *ModelCost `json:"cost,omitempty"`
}

// ModelCost is a model's price per token class.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Identity names an adapter and the contract it implements.
type Identity struct {
	RuntimeID       string `json:"runtimeId"`
	AdapterName     string `json:"adapterName"`
	AdapterVersion  string `json:"adapterVersion"`
	ContractVersion string `json:"contractVersion"`
}

// Destination says whether a provider runs locally or remotely.
type Destination string

// The two destinations.
const (
	DestinationLocal  Destination = "local"
	DestinationRemote Destination = "remote"
)

// PrivacyRequest asks an adapter to sanitise a provider payload. Payload is
// any JSON-encodable value; a json.RawMessage (or []byte) is read as one JSON
// document in document order. A value that cannot be fully inspected makes
// enforcement fail closed.
type PrivacyRequest struct {
	Provider string
	Payload  any
}

// PrivacyResult is a sanitised payload and what sanitisation did.
type PrivacyResult struct {
	Provider         string          `json:"provider"`
	Destination      Destination     `json:"destination"`
	Payload          json.RawMessage `json:"payload"`
	Changed          bool            `json:"changed"`
	BlockedBlocks    int             `json:"blockedBlocks"`
	SecretRedactions int             `json:"secretRedactions"`
}

// PrivacySummary is the metadata of a PrivacyResult, without the payload, as
// a completed CompletionResult reports it.
type PrivacySummary struct {
	Provider         string      `json:"provider"`
	Destination      Destination `json:"destination"`
	Changed          bool        `json:"changed"`
	BlockedBlocks    int         `json:"blockedBlocks"`
	SecretRedactions int         `json:"secretRedactions"`
}

// Summary returns the result's metadata without its payload.
func (r PrivacyResult) Summary() PrivacySummary {
	return PrivacySummary{Provider: r.Provider, Destination: r.Destination, Changed: r.Changed,
		BlockedBlocks: r.BlockedBlocks, SecretRedactions: r.SecretRedactions}
}

// CompletionRequest asks an adapter for a provider completion. Payload is
// sanitised by the adapter before anything reaches the transport.
type CompletionRequest struct {
	Provider string
	Model    string
	Payload  any
}

// CompletionStatus is "completed" or "fallback".
type CompletionStatus string

// The two completion statuses.
const (
	StatusCompleted CompletionStatus = "completed"
	StatusFallback  CompletionStatus = "fallback"
)

// FallbackCode says why a completion fell back to the native runtime.
type FallbackCode string

// The four fallback codes.
const (
	FallbackAdapterClosed          FallbackCode = "adapter-closed"
	FallbackInvalidRequest         FallbackCode = "invalid-request"
	FallbackPrivacyEnforcementFail FallbackCode = "privacy-enforcement-failed"
	FallbackTransportFailed        FallbackCode = "transport-failed"
)

// CompletionResult is what Adapter.Complete returns: either a completed
// result (Output, Privacy and, for local KV completions, LocalKV) or an
// explicit fallback (Code, Reason, Retryable). It is never an error.
type CompletionResult struct {
	Status    CompletionStatus
	Output    json.RawMessage
	Privacy   PrivacySummary
	LocalKV   *LocalKVMetadata
	Code      FallbackCode
	Reason    string
	Retryable bool
}

// Completed builds a completed result.
func Completed(output json.RawMessage, privacy PrivacySummary, localKV *LocalKVMetadata) CompletionResult {
	return CompletionResult{Status: StatusCompleted, Output: output, Privacy: privacy, LocalKV: localKV}
}

// Fallback builds a fallback result.
func Fallback(code FallbackCode, reason string, retryable bool) CompletionResult {
	return CompletionResult{Status: StatusFallback, Code: code, Reason: reason, Retryable: retryable}
}

type completedWire struct {
	Status  CompletionStatus `json:"status"`
	Output  json.RawMessage  `json:"output"`
	Privacy PrivacySummary   `json:"privacy"`
	LocalKV *LocalKVMetadata `json:"localKv,omitempty"`
}

type fallbackWire struct {
	Status    CompletionStatus `json:"status"`
	Code      FallbackCode     `json:"code"`
	Reason    string           `json:"reason"`
	Retryable bool             `json:"retryable"`
}

// MarshalJSON writes the wire shape of the result's status.
func (r CompletionResult) MarshalJSON() ([]byte, error) {
	if r.Status == StatusFallback {
		return json.Marshal(fallbackWire{r.Status, r.Code, r.Reason, r.Retryable})
	}
	out := r.Output
	if out == nil {
		out = json.RawMessage("null")
	}
	return json.Marshal(completedWire{r.Status, out, r.Privacy, r.LocalKV})
}

// UnmarshalJSON reads either wire shape.
func (r *CompletionResult) UnmarshalJSON(data []byte) error {
	var probe struct {
		Status CompletionStatus `json:"status"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	switch probe.Status {
	case StatusFallback:
		var w fallbackWire
		if err := json.Unmarshal(data, &w); err != nil {
			return err
		}
		*r = Fallback(w.Code, w.Reason, w.Retryable)
	case StatusCompleted:
		var w completedWire
		if err := json.Unmarshal(data, &w); err != nil {
			return err
		}
		*r = Completed(w.Output, w.Privacy, w.LocalKV)
	default:
		return &DecodeError{Path: "completion.status", Err: ErrInvalidEnum}
	}
	return nil
}

// TransportRequest is what an adapter hands its completion transport: the
// sanitised payload only, with the destination privacy decided.
type TransportRequest struct {
	Provider    string          `json:"provider"`
	Model       string          `json:"model"`
	Destination Destination     `json:"destination"`
	Payload     json.RawMessage `json:"payload"`
}

// Transport is the runtime's provider boundary, injected into an adapter.
type Transport interface {
	// Send performs one completion and returns the provider's output.
	Send(ctx context.Context, req TransportRequest) (json.RawMessage, error)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(ctx context.Context, req TransportRequest) (json.RawMessage, error)

// Send calls f.
func (f TransportFunc) Send(ctx context.Context, req TransportRequest) (json.RawMessage, error) {
	return f(ctx, req)
}

// Adapter is a runtime adapter: the runtime's side of runtime-adapter-v1.
//
// The runtime's native history stays canonical; an adapter projects it into
// snapshots, never writes provider-facing messages back, enforces privacy
// immediately before transport (failing closed), answers every completion
// with a result or an explicit fallback, reports metadata-only diagnostics
// and shuts down idempotently. After Shutdown, SnapshotHistory,
// RebuildDerivedState, CurrentModel, TrustedProjectRoot and EnforcePrivacy
// return errors and Complete falls back with FallbackAdapterClosed;
// CapabilityDeclarations, NegotiateCapabilities and Diagnostics keep working.
//
// Implementations must be safe for concurrent use.
type Adapter interface {
	// Identity names the adapter and the contract version it implements.
	Identity() Identity
	// CapabilityDeclarations lists what the adapter supports, with versions,
	// and what it does not, with reasons.
	CapabilityDeclarations() []CapabilityDeclaration
	// NegotiateCapabilities applies NegotiateCapabilities to the adapter's
	// own declarations.
	NegotiateCapabilities(requests []CapabilityRequest) Negotiation
	// SnapshotHistory projects the canonical history. It errors on an
	// invalid, corrupt, identity-mismatched or untrusted source, and never
	// invents history.
	SnapshotHistory(ctx context.Context) (HistorySnapshot, error)
	// RebuildDerivedState discards derived caches and re-reads the canonical
	// source, returning a snapshot equal to a fresh one.
	RebuildDerivedState(ctx context.Context) (HistorySnapshot, error)
	// CurrentModel returns the selected model, or nil when none is selected.
	CurrentModel(ctx context.Context) (*ModelDescriptor, error)
	// TrustedProjectRoot returns the canonical (absolute, symlink-resolved)
	// project root the runtime trusts.
	TrustedProjectRoot(ctx context.Context) (string, error)
	// EnforcePrivacy sanitises a payload for a provider; any failure is an
	// error (fail closed).
	EnforcePrivacy(ctx context.Context, req PrivacyRequest) (PrivacyResult, error)
	// Complete sanitises the payload and calls the transport. It never
	// fails: problems become an explicit fallback result.
	Complete(ctx context.Context, req CompletionRequest) CompletionResult
	// Diagnostics returns a bounded, metadata-only list of diagnostics.
	Diagnostics() []Diagnostic
	// Shutdown releases resources; calling it again is not an error.
	Shutdown(ctx context.Context) error
}

// EmbeddingIdentity describes an embedding port.
type EmbeddingIdentity struct {
	Provider    string      `json:"provider"`
	Model       string      `json:"model"`
	Dimensions  int         `json:"dimensions"`
	Destination Destination `json:"destination"`
}

// EmbeddingPort embeds texts into vectors of Identity().Dimensions numbers.
type EmbeddingPort interface {
	// Identity describes the port.
	Identity() EmbeddingIdentity
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// EmbeddingPortProvider is implemented by adapters that may expose an
// embedding port. EmbeddingPort returns nil when none is configured.
type EmbeddingPortProvider interface {
	EmbeddingPort() EmbeddingPort
}
