package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

// transportMode is how the model's transport answers the next request.
type transportMode uint8

const (
	// answerObject answers an object derived from the request's payload.
	answerObject transportMode = iota
	// answerString, answerArray and answerNull answer values that are not
	// objects, which a completion passes back unchanged.
	answerString
	answerArray
	answerNull
	// answerError fails; its text quotes the payload and a credential.
	answerError
	// answerPartial returns output and an error: the completion falls back.
	answerPartial
	// answerBlock waits for the request's context to end.
	answerBlock
	// answerEmpty answers an empty value: "", {} or [].
	answerEmpty
	// answerLarge answers an object of more than 1 MiB.
	answerLarge
	// answerDeep answers a value nested modelDeepOutput levels deep.
	answerDeep
	// transportModes counts the modes.
	transportModes
)

var transportModeNames = [transportModes]string{"object", "string", "array", "null", "error", "partial", "block", "empty", "large", "deep"}

// Sizes of the outputs that reach SPEC's bounds: a large output is more
// than 1 MiB, a deep one nested 128 levels (SPEC bounds neither: the
// output is runtime-owned and comes back unchanged).
const (
	modelLargeOutput = 1<<20 + 17
	modelDeepOutput  = 128
)

// modelBlockBound is how long a blocking transport waits for its context
// before it gives up and reports that the context never ended.
const modelBlockBound = 3 * time.Second

// modelTransportError is the model transport's failure: its text quotes
// the request's payload and a credential, as a careless provider's might.
type modelTransportError struct{ payload string }

func (e modelTransportError) Error() string {
	return "provider rejected the request (authorization: Bearer " + modelTransportCredential + "; body " + e.payload + ")"
}

// modelTransportCredential is the credential the transport error quotes.
const modelTransportCredential = "sk-model-transport-credential-4f1c"

// modelTransport is the transport of an instance under the model check:
// it records every request and answers as the next operation scripted it.
type modelTransport struct {
	mu       sync.Mutex
	mode     transportMode
	reqs     []contract.TransportRequest
	unended  int                // blocking calls whose context never ended
	onCalled context.CancelFunc // cancels the call's context when called
}

// script sets how the next requests are answered, and a cancel to call
// when one arrives ("cancelled during").
func (t *modelTransport) script(mode transportMode, onCalled context.CancelFunc) {
	t.mu.Lock()
	t.mode, t.onCalled = mode, onCalled
	t.mu.Unlock()
}

// outputFor is what the transport answers in mode for a payload: derived
// from the payload's JSON value, so every distinct payload gets its own.
func outputFor(mode transportMode, payload []byte) json.RawMessage {
	sum := sha256.Sum256([]byte(canonicalJSON(payload)))
	tag := "reply-" + hex.EncodeToString(sum[:8])
	switch mode {
	case answerString:
		return json.RawMessage(`"` + tag + `"`)
	case answerArray:
		return json.RawMessage(`["` + tag + `",1,{"n":null}]`)
	case answerNull:
		return json.RawMessage(`null`)
	case answerEmpty:
		return json.RawMessage([]string{`""`, `{}`, `[]`}[sum[8]%3])
	case answerLarge:
		b := make([]byte, 0, modelLargeOutput+64)
		b = append(b, `{"content":"`+tag+` `...)
		for len(b) < modelLargeOutput {
			b = append(b, tag...)
		}
		return append(b, `","n":[1,-0.5,1e-7,"\u00e9\ud83d\ude00"]}`...)
	case answerDeep:
		b := make([]byte, 0, 8*modelDeepOutput+len(tag)+2)
		for i := range modelDeepOutput {
			b = append(b, []string{`[`, `{"a":`}[i%2]...)
		}
		b = append(b, `"`+tag+`"`...)
		for i := modelDeepOutput - 1; i >= 0; i-- {
			b = append(b, []string{`]`, `}`}[i%2]...)
		}
		return b
	}
	return json.RawMessage(`{"role":"assistant","content":"` + tag + `"}`)
}

func (t *modelTransport) Send(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
	t.mu.Lock()
	req.Payload = slices.Clone(req.Payload)
	t.reqs = append(t.reqs, req)
	mode, cancel := t.mode, t.onCalled
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	switch mode {
	case answerError:
		return nil, modelTransportError{payload: string(req.Payload)}
	case answerPartial:
		return outputFor(answerObject, req.Payload), modelTransportError{payload: "partial"}
	case answerBlock:
		if ctx.Done() == nil {
			// A context that can never end: no wait tells more.
			t.mu.Lock()
			t.unended++
			t.mu.Unlock()
			return nil, errors.New("the transport's context can never end")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(modelBlockBound):
			t.mu.Lock()
			t.unended++
			t.mu.Unlock()
			return nil, errors.New("the transport's context never ended")
		}
	}
	if err := ctx.Err(); err != nil {
		// A transport honours its context: a call that ended is not
		// answered.
		return nil, err
	}
	return outputFor(mode, req.Payload), nil
}

// take returns the requests recorded since the last take, and how many
// blocking calls saw a context that never ended.
func (t *modelTransport) take() ([]contract.TransportRequest, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	reqs, unended := t.reqs, t.unended
	t.reqs, t.unended = nil, 0
	return reqs, unended
}
