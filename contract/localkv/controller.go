package localkv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
)

// Errors returned by a Controller. Callers branch with errors.Is.
var (
	// ErrReplayFailed is returned when the full replay of an eligible request
	// failed: the port returned an error or a malformed answer.
	ErrReplayFailed = errors.New("localkv: full replay failed")
	// ErrMalformedAnswer is joined to ErrReplayFailed when the replay answer
	// was malformed rather than an error.
	ErrMalformedAnswer = errors.New("localkv: malformed runtime port answer")
	// ErrShutdownFailed is returned by Shutdown when the port's shutdown failed.
	ErrShutdownFailed = errors.New("localkv: runtime port shutdown failed")
)

// PortError reports a failed port call. Its message is fixed text, so that
// nothing the port put in its own error (a payload excerpt, a key) leaks into
// logs through it; the port's error stays reachable with errors.Is and
// errors.As through Unwrap.
type PortError struct {
	// Op is the failed operation: "full replay" or "shutdown".
	Op string
	// Kind is the sentinel describing the failure (ErrReplayFailed or
	// ErrShutdownFailed).
	Kind error
	// Err is the port's error, or ErrMalformedAnswer.
	Err error
}

// Error returns a fixed message naming the operation and whether the port
// failed, gave up on its context, or answered malformed data. It never
// includes the port's text.
func (e *PortError) Error() string {
	switch {
	case errors.Is(e.Err, ErrMalformedAnswer):
		return "localkv: " + e.Op + " failed: malformed runtime port answer"
	case errors.Is(e.Err, context.Canceled):
		return "localkv: " + e.Op + " failed: " + context.Canceled.Error()
	case errors.Is(e.Err, context.DeadlineExceeded):
		return "localkv: " + e.Op + " failed: " + context.DeadlineExceeded.Error()
	}
	return "localkv: " + e.Op + " failed: runtime port error"
}

// Unwrap returns the sentinel and the port's error.
func (e *PortError) Unwrap() []error { return []error{e.Kind, e.Err} }

// ResultStatus is the status of a controller result.
type ResultStatus string

// Controller result statuses.
const (
	// StatusCompleted means the runtime port produced the output, by reuse or
	// by full replay.
	StatusCompleted ResultStatus = "completed"
	// StatusIneligible means the request was not eligible; the port was not
	// called and the caller should use its ordinary transport.
	StatusIneligible ResultStatus = "ineligible"
)

// ControllerRequest is one completion offered to the local KV path: the
// eligibility input (filled by the adapter with its own runtime identity and
// the request's provider and model) and the complete sanitised payload that a
// full replay sends.
type ControllerRequest struct {
	// Input decides eligibility and the key.
	Input EligibilityInput
	// Payload is the sanitised provider payload, passed to the port as is
	// (each port call gets its own copy).
	Payload json.RawMessage
}

// ControllerResult is the outcome of Controller.Complete. A completed result
// has Output and LocalKV; an ineligible one has Reason.
type ControllerResult struct {
	// Status is StatusCompleted or StatusIneligible.
	Status ResultStatus `json:"status"`
	// Reason is why an ineligible request was bypassed.
	Reason Reason `json:"reason,omitempty"`
	// Output is the runtime's output of a completed request.
	Output json.RawMessage `json:"output,omitempty"`
	// LocalKV describes how a completed request was served.
	LocalKV *contract.LocalKVMetadata `json:"localKv,omitempty"`
}

// Diagnostics are the aggregate counters of a Controller: numbers only, never
// a prefix, payload, key or handle. Every counter saturates at 2^53−1.
type Diagnostics struct {
	// Version is local-kv-diagnostics-v1.
	Version string `json:"version"`
	// Requests counts every Complete call.
	Requests int64 `json:"requests"`
	// EligibleRequests counts eligible requests, BypassedRequests ineligible
	// ones (the port was not called).
	EligibleRequests int64 `json:"eligibleRequests"`
	BypassedRequests int64 `json:"bypassedRequests"`
	// Hits, Misses, Rejected and Unavailable count TryReuse outcomes; errors,
	// malformed hits and unknown statuses count as Unavailable.
	Hits        int64 `json:"hits"`
	Misses      int64 `json:"misses"`
	Rejected    int64 `json:"rejected"`
	Unavailable int64 `json:"unavailable"`
	// FullReplays counts FullReplay calls (one per non-hit) and
	// TransportFailures the replays that failed.
	FullReplays       int64 `json:"fullReplays"`
	TransportFailures int64 `json:"transportFailures"`
	// PrefixTokens and ContextTokens sum the token counts of eligible
	// requests.
	PrefixTokens  int64 `json:"prefixTokens"`
	ContextTokens int64 `json:"contextTokens"`
	// SavedPrefillTokens sums the tokens hits did not prefill.
	SavedPrefillTokens int64 `json:"savedPrefillTokens"`
	// ReplayPrefillTokens and ReplayPrefillLatencyMs sum what successful full
	// replays prefilled and how long that took.
	ReplayPrefillTokens    int64   `json:"replayPrefillTokens"`
	ReplayPrefillLatencyMs float64 `json:"replayPrefillLatencyMs"`
}

// Controller runs the local KV path: it derives eligibility, tries reuse,
// falls back to a full replay on every non-hit, and keeps aggregate
// diagnostics. It is safe for concurrent use.
type Controller struct {
	port     RuntimePort
	mu       sync.Mutex
	d        Diagnostics
	shutdown sync.Once
	shutErr  error
}

// NewController returns a controller over port. It panics if port is nil,
// which is a programming error.
func NewController(port RuntimePort) *Controller {
	if port == nil {
		panic("localkv: NewController with a nil RuntimePort")
	}
	return &Controller{port: port}
}

// Complete serves req through the local KV path.
//
// An ineligible request gives StatusIneligible with the reason and a nil
// error; the port is not called. An eligible request is first offered to
// TryReuse; a well-formed hit completes with mode "hit". Anything else (miss,
// rejected, unavailable, an error, a malformed hit, an unknown status) is
// followed by FullReplay, which completes with mode "full-replay" or fails
// with a *PortError matching ErrReplayFailed.
func (c *Controller) Complete(ctx context.Context, req ControllerRequest) (ControllerResult, error) {
	in := &req.Input
	el := DeriveEligibility(req.Input)
	c.mu.Lock()
	c.d.Requests = satAdd(c.d.Requests, 1)
	if !el.Eligible {
		c.d.BypassedRequests = satAdd(c.d.BypassedRequests, 1)
		c.mu.Unlock()
		return ControllerResult{Status: StatusIneligible, Reason: el.Reason}, nil
	}
	c.d.EligibleRequests = satAdd(c.d.EligibleRequests, 1)
	c.d.PrefixTokens = satAdd(c.d.PrefixTokens, el.PrefixTokenCount)
	c.d.ContextTokens = satAdd(c.d.ContextTokens, el.ContextTokenCount)
	c.mu.Unlock()

	portReq := ReuseRequest{
		Key:               el.Key,
		Provider:          in.Provider,
		Model:             in.Model,
		Payload:           bytes.Clone(req.Payload),
		PrefixTokenCount:  el.PrefixTokenCount,
		ContextTokenCount: el.ContextTokenCount,
	}
	answer, err := c.port.TryReuse(ctx, portReq)
	status := ReuseUnavailable
	if err == nil {
		status = classify(answer, el.PrefixTokenCount)
	}
	if status == ReuseHit {
		c.mu.Lock()
		c.d.Hits = satAdd(c.d.Hits, 1)
		c.d.SavedPrefillTokens = satAdd(c.d.SavedPrefillTokens, answer.SavedPrefillTokens)
		c.mu.Unlock()
		return ControllerResult{
			Status: StatusCompleted,
			Output: answer.Output,
			LocalKV: &contract.LocalKVMetadata{
				Mode:               contract.LocalKVHit,
				PrefixTokens:       el.PrefixTokenCount,
				ContextTokens:      el.ContextTokenCount,
				SavedPrefillTokens: answer.SavedPrefillTokens,
				PrefillLatencyMs:   answer.PrefillLatencyMs,
			},
		}, nil
	}

	c.mu.Lock()
	switch status {
	case ReuseMiss:
		c.d.Misses = satAdd(c.d.Misses, 1)
	case ReuseRejected:
		c.d.Rejected = satAdd(c.d.Rejected, 1)
	default:
		c.d.Unavailable = satAdd(c.d.Unavailable, 1)
	}
	c.d.FullReplays = satAdd(c.d.FullReplays, 1)
	c.mu.Unlock()

	portReq.Payload = bytes.Clone(req.Payload)
	replay, err := c.port.FullReplay(ctx, portReq)
	if err == nil && !wellFormedReplay(replay) {
		err = ErrMalformedAnswer
	}
	if err != nil {
		c.mu.Lock()
		c.d.TransportFailures = satAdd(c.d.TransportFailures, 1)
		c.mu.Unlock()
		return ControllerResult{}, &PortError{Op: "full replay", Kind: ErrReplayFailed, Err: err}
	}
	c.mu.Lock()
	c.d.ReplayPrefillTokens = satAdd(c.d.ReplayPrefillTokens, replay.PrefillTokens)
	c.d.ReplayPrefillLatencyMs = math.Min(c.d.ReplayPrefillLatencyMs+replay.PrefillLatencyMs, MaxSafeInteger)
	c.mu.Unlock()
	return ControllerResult{
		Status: StatusCompleted,
		Output: replay.Output,
		LocalKV: &contract.LocalKVMetadata{
			Mode:                contract.LocalKVFullReplay,
			PrefixTokens:        el.PrefixTokenCount,
			ContextTokens:       el.ContextTokenCount,
			ReplayPrefillTokens: replay.PrefillTokens,
			PrefillLatencyMs:    replay.PrefillLatencyMs,
		},
	}, nil
}

// classify maps a TryReuse answer to the status it counts as: a malformed
// hit and an unknown status count as unavailable.
func classify(a ReuseAnswer, prefixTokens int64) ReuseStatus {
	switch a.Status {
	case ReuseHit:
		if hasOutput(a.Output) && a.SavedPrefillTokens >= 0 && a.SavedPrefillTokens <= prefixTokens && validLatency(a.PrefillLatencyMs) {
			return ReuseHit
		}
	case ReuseMiss, ReuseRejected:
		return a.Status
	}
	return ReuseUnavailable
}

func wellFormedReplay(a ReplayAnswer) bool {
	return hasOutput(a.Output) && a.PrefillTokens >= 0 && validLatency(a.PrefillLatencyMs)
}

// hasOutput reports whether out is one JSON document. JSON null is an
// output; nil or empty is none.
func hasOutput(out json.RawMessage) bool {
	if len(out) == 0 {
		return false
	}
	s := jsonw.NewScanner(out)
	return s.Skip() == nil && s.End() == nil
}

func validLatency(ms float64) bool {
	return ms >= 0 && !math.IsInf(ms, 1) // NaN fails ms >= 0
}

// satAdd adds n ≥ 0 to v, saturating at 2^53−1.
func satAdd(v, n int64) int64 {
	if n >= MaxSafeInteger-v {
		return MaxSafeInteger
	}
	return v + n
}

// Diagnostics returns a snapshot of the aggregate counters.
func (c *Controller) Diagnostics() Diagnostics {
	c.mu.Lock()
	d := c.d
	c.mu.Unlock()
	d.Version = contract.LocalKVDiagnosticsVersion
	return d
}

// ResetDiagnostics zeroes every counter.
func (c *Controller) ResetDiagnostics() {
	c.mu.Lock()
	c.d = Diagnostics{}
	c.mu.Unlock()
}

// Shutdown releases the port's resources if it implements ShutdownPort. The
// port's Shutdown runs at most once; later calls return the first result.
// A failure is a *PortError matching ErrShutdownFailed.
func (c *Controller) Shutdown(ctx context.Context) error {
	c.shutdown.Do(func() {
		sp, ok := c.port.(ShutdownPort)
		if !ok {
			return
		}
		if err := sp.Shutdown(ctx); err != nil {
			c.shutErr = &PortError{Op: "shutdown", Kind: ErrShutdownFailed, Err: err}
		}
	})
	return c.shutErr
}
