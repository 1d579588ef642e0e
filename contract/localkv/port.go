package localkv

import (
	"context"
	"encoding/json"
)

// RuntimePort is the handle-free boundary to a runtime that keeps reusable
// prefix (KV) state. The runtime owns every cache handle and the transport;
// it is only ever given an eligibility key and the complete sanitised
// payload, and it returns outputs and counts, never a handle.
//
// Implementations must be safe for concurrent use: a Controller calls them
// from as many goroutines as call it.
type RuntimePort interface {
	// TryReuse asks the runtime to serve the request from state cached under
	// req.Key. Any error, and any answer that is not a well-formed hit, miss,
	// rejection or unavailability, is counted as unavailable and followed by
	// a full replay.
	TryReuse(ctx context.Context, req ReuseRequest) (ReuseAnswer, error)
	// FullReplay serves the request from the complete payload, without reuse.
	FullReplay(ctx context.Context, req ReuseRequest) (ReplayAnswer, error)
}

// ShutdownPort is implemented by runtime ports that hold resources to release
// when their adapter closes.
type ShutdownPort interface {
	// Shutdown releases the port's resources. A Controller calls it at most
	// once.
	Shutdown(ctx context.Context) error
}

// ReuseRequest is what a runtime port receives: the eligibility key, the
// provider and model, the complete sanitised payload to replay, and the token
// counts. It never carries a cache handle. Each port call receives its own
// copy of Payload.
type ReuseRequest struct {
	// Key is the eligibility key; Key.Fingerprint names the reusable state.
	Key Key `json:"key"`
	// Provider and Model are the request's provider and model.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Payload is the complete sanitised payload, enough for a full replay.
	Payload json.RawMessage `json:"payload"`
	// PrefixTokenCount and ContextTokenCount are the request's token counts.
	PrefixTokenCount  int64 `json:"prefixTokenCount"`
	ContextTokenCount int64 `json:"contextTokenCount"`
}

// ReuseStatus is the outcome of TryReuse.
type ReuseStatus string

// The TryReuse outcomes. Any other status counts as unavailable.
const (
	// ReuseHit means the runtime reused cached state and produced the output.
	ReuseHit ReuseStatus = "hit"
	// ReuseMiss means the runtime had no state for the key.
	ReuseMiss ReuseStatus = "miss"
	// ReuseRejected means the runtime refused to reuse state for the key.
	ReuseRejected ReuseStatus = "rejected"
	// ReuseUnavailable means reuse could not be attempted.
	ReuseUnavailable ReuseStatus = "unavailable"
)

// ReuseAnswer is the answer of TryReuse. Output, SavedPrefillTokens and
// PrefillLatencyMs are read only for a hit, which is well formed when Output
// is a JSON document (nil or empty means no output), SavedPrefillTokens is in
// [0, PrefixTokenCount] and PrefillLatencyMs is finite and ≥ 0.
type ReuseAnswer struct {
	// Status is the outcome.
	Status ReuseStatus `json:"status"`
	// Output is the runtime's output of a hit; JSON null is an output.
	Output json.RawMessage `json:"output,omitempty"`
	// SavedPrefillTokens is how many prefix tokens the hit did not prefill.
	SavedPrefillTokens int64 `json:"savedPrefillTokens,omitempty"`
	// PrefillLatencyMs is the hit's prefill time in milliseconds.
	PrefillLatencyMs float64 `json:"prefillLatencyMs,omitempty"`
}

// ReplayAnswer is the answer of FullReplay. It is well formed when Output is
// a JSON document (nil or empty means no output), PrefillTokens is ≥ 0 and
// PrefillLatencyMs is finite and ≥ 0.
type ReplayAnswer struct {
	// Output is the runtime's output; JSON null is an output.
	Output json.RawMessage `json:"output"`
	// PrefillTokens is how many tokens the replay prefilled.
	PrefillTokens int64 `json:"prefillTokens"`
	// PrefillLatencyMs is the replay's prefill time in milliseconds.
	PrefillLatencyMs float64 `json:"prefillLatencyMs"`
}
