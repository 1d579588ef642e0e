package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/ds4context/adapterkit/contract/localkv"
)

// Outputs of the recording local KV port.
const (
	// LocalKVHitOutput is what the port answers to a reuse it serves.
	LocalKVHitOutput = `{"role":"assistant","content":"conformance kv hit"}`
	// LocalKVReplayOutput is what the port answers to a full replay.
	LocalKVReplayOutput = `{"role":"assistant","content":"conformance kv replay"}`
)

// The prefill latencies, in milliseconds, the recording port reports for a
// hit and for a full replay.
const (
	recordingHitLatencyMs    = 1
	recordingReplayLatencyMs = 5
)

// LocalKVHandleProbe is a cache-handle-shaped string the recording port
// puts in the text of every error it injects, next to the request's prefix:
// an adapter that copies a port error into a diagnostic, a report or its own
// error leaks both.
const LocalKVHandleProbe = "ds4-conformance-kv-handle-7f3a"

// ErrInjectedKVFailure is the error the recording port's injected failures
// wrap.
var ErrInjectedKVFailure = errors.New("conformance: injected local KV failure")

// injectedKVError is an injected port failure whose text names a handle and
// the request's prefix, as a careless runtime's error might.
type injectedKVError struct{ prefixHash string }

func (e injectedKVError) Error() string {
	return "runtime KV failure for handle " + LocalKVHandleProbe + " (prefix " + e.prefixHash + ")"
}

func (injectedKVError) Unwrap() error { return ErrInjectedKVFailure }

// RecordingKVPort is the local KV runtime port the local KV checks hand a
// factory (Setup.LocalKVPort). It behaves like a runtime that keeps the KV
// state of every prefix it has fully replayed: TryReuse hits for a
// fingerprint it has replayed and misses otherwise. It records every
// request, can be armed to reject, fail or lose its state, and counts
// shutdowns. It is safe for concurrent use.
type RecordingKVPort struct {
	mu         sync.Mutex
	warm       map[string]bool
	tries      []localkv.ReuseRequest
	replays    []localkv.ReuseRequest
	nextReuse  localkv.ReuseStatus // "" or the armed outcome
	failReuse  bool
	failReplay bool
	shutdowns  int
}

// NewRecordingKVPort returns a port with no KV state and no requests.
func NewRecordingKVPort() *RecordingKVPort {
	return &RecordingKVPort{warm: map[string]bool{}}
}

// TryReuse records req. Armed, it answers the armed outcome once;
// otherwise it hits (LocalKVHitOutput, every prefix token saved) when it
// holds state for req.Key.Fingerprint and misses when it does not.
func (p *RecordingKVPort) TryReuse(_ context.Context, req localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries = append(p.tries, cloneReuseRequest(req))
	switch {
	case p.failReuse:
		p.failReuse = false
		return localkv.ReuseAnswer{}, injectedKVError{req.Key.PrefixHash}
	case p.nextReuse != "":
		s := p.nextReuse
		p.nextReuse = ""
		return localkv.ReuseAnswer{Status: s}, nil
	case !p.warm[req.Key.Fingerprint]:
		return localkv.ReuseAnswer{Status: localkv.ReuseMiss}, nil
	}
	return localkv.ReuseAnswer{Status: localkv.ReuseHit, Output: json.RawMessage(LocalKVHitOutput),
		SavedPrefillTokens: req.PrefixTokenCount, PrefillLatencyMs: recordingHitLatencyMs}, nil
}

// FullReplay records req and, unless armed to fail, keeps state for
// req.Key.Fingerprint and answers LocalKVReplayOutput.
func (p *RecordingKVPort) FullReplay(_ context.Context, req localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replays = append(p.replays, cloneReuseRequest(req))
	if p.failReplay {
		p.failReplay = false
		return localkv.ReplayAnswer{}, injectedKVError{req.Key.PrefixHash}
	}
	p.warm[req.Key.Fingerprint] = true
	return localkv.ReplayAnswer{Output: json.RawMessage(LocalKVReplayOutput), PrefillTokens: req.ContextTokenCount, PrefillLatencyMs: recordingReplayLatencyMs}, nil
}

// Shutdown counts the call.
func (p *RecordingKVPort) Shutdown(context.Context) error {
	p.mu.Lock()
	p.shutdowns++
	p.mu.Unlock()
	return nil
}

// RejectNext makes the next TryReuse answer rejected (state the runtime
// holds but judges stale).
func (p *RecordingKVPort) RejectNext() { p.arm(func() { p.nextReuse = localkv.ReuseRejected }) }

// FailReuseNext makes the next TryReuse return an error wrapping
// ErrInjectedKVFailure.
func (p *RecordingKVPort) FailReuseNext() { p.arm(func() { p.failReuse = true }) }

// FailReplayNext makes the next FullReplay return an error wrapping
// ErrInjectedKVFailure.
func (p *RecordingKVPort) FailReplayNext() { p.arm(func() { p.failReplay = true }) }

// Forget drops all KV state, as a runtime restart or an eviction does.
func (p *RecordingKVPort) Forget() { p.arm(func() { clear(p.warm) }) }

func (p *RecordingKVPort) arm(f func()) {
	p.mu.Lock()
	f()
	p.mu.Unlock()
}

// Tries returns copies of the requests TryReuse received, oldest first.
func (p *RecordingKVPort) Tries() []localkv.ReuseRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneReuseRequests(p.tries)
}

// Replays returns copies of the requests FullReplay received, oldest
// first.
func (p *RecordingKVPort) Replays() []localkv.ReuseRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneReuseRequests(p.replays)
}

// Calls returns how many TryReuse and FullReplay calls the port received.
func (p *RecordingKVPort) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.tries) + len(p.replays)
}

// since returns copies of the TryReuse and FullReplay requests after the
// first tries and replays of each.
func (p *RecordingKVPort) since(tries, replays int) ([]localkv.ReuseRequest, []localkv.ReuseRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneReuseRequests(p.tries[min(tries, len(p.tries)):]), cloneReuseRequests(p.replays[min(replays, len(p.replays)):])
}

// Shutdowns returns how many times Shutdown was called.
func (p *RecordingKVPort) Shutdowns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shutdowns
}

func cloneReuseRequest(r localkv.ReuseRequest) localkv.ReuseRequest {
	r.Payload = slices.Clone(r.Payload)
	return r
}

func cloneReuseRequests(rs []localkv.ReuseRequest) []localkv.ReuseRequest {
	out := make([]localkv.ReuseRequest, len(rs))
	for i, r := range rs {
		out[i] = cloneReuseRequest(r)
	}
	return out
}
