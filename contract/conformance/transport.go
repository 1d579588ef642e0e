package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/ds4context/adapterkit/contract"
)

// TransportOutput is what the recording transport answers to every request
// it is not armed to fail.
const TransportOutput = `{"role":"assistant","content":"conformance completion"}`

// ErrInjectedTransportFailure is the error the recording transport returns
// when it has been armed with FailNext.
var ErrInjectedTransportFailure = errors.New("conformance: injected transport failure")

// RecordingTransport is the completion transport a conformance run injects
// into the adapter. It records every request it answers; armed with
// FailNext, it fails the next request once, without recording it. It is safe
// for concurrent use.
type RecordingTransport struct {
	mu       sync.Mutex
	requests []contract.TransportRequest
	armed    bool
	echo     bool // the armed failure echoes the request (failNextEchoing)
}

// NewRecordingTransport returns an unarmed transport with no requests.
func NewRecordingTransport() *RecordingTransport { return &RecordingTransport{} }

// Send records req and returns TransportOutput, or, when armed, disarms and
// returns ErrInjectedTransportFailure without recording.
func (t *RecordingTransport) Send(_ context.Context, req contract.TransportRequest) (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed {
		echo := t.echo
		t.armed, t.echo = false, false
		if echo {
			return nil, echoedTransportError{payload: string(req.Payload)}
		}
		return nil, ErrInjectedTransportFailure
	}
	req.Payload = slices.Clone(req.Payload)
	t.requests = append(t.requests, req)
	return json.RawMessage(TransportOutput), nil
}

// FailNext arms the transport: the next request fails once.
func (t *RecordingTransport) FailNext() {
	t.mu.Lock()
	t.armed, t.echo = true, false
	t.mu.Unlock()
}

// failNextEchoing arms the transport like FailNext, but the failure is an
// echoedTransportError: its text quotes the request's payload and a
// credential, as a careless provider's error might.
func (t *RecordingTransport) failNextEchoing() {
	t.mu.Lock()
	t.armed, t.echo = true, true
	t.mu.Unlock()
}

// Disarm cancels a pending FailNext and reports whether one was pending.
func (t *RecordingTransport) Disarm() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed, t.echo = false, false
	return was
}

// echoedTransportCredential is the credential an echoed transport error
// quotes: it holds the credential probe.
const echoedTransportCredential = ProbeCredential + "-upstream-7f3a9c"

// echoedTransportError is a transport failure whose text echoes the request
// body it was sent and the credential the request was sent with. An adapter
// that copies a transport error into a diagnostic leaks both.
type echoedTransportError struct{ payload string }

func (e echoedTransportError) Error() string {
	return "upstream rejected the request (authorization: Bearer " + echoedTransportCredential + "; body " + e.payload + ")"
}

func (echoedTransportError) Unwrap() error { return ErrInjectedTransportFailure }

// Len returns the number of recorded requests.
func (t *RecordingTransport) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.requests)
}

// Requests returns a copy of the recorded requests, oldest first.
func (t *RecordingTransport) Requests() []contract.TransportRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]contract.TransportRequest, len(t.requests))
	for i, r := range t.requests {
		r.Payload = slices.Clone(r.Payload)
		out[i] = r
	}
	return out
}
