package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// scripted is the server end of a client under test, driven line by line.
type scripted struct {
	t  *testing.T
	in *bufio.Reader
	w  io.WriteCloser
}

func newScripted(t *testing.T) (*Client, *scripted) {
	t.Helper()
	return newScriptedWith(t, Options{CallTimeout: bound(10 * time.Second)})
}

// newScriptedWith is newScripted with the client's options.
func newScriptedWith(t *testing.T, opts Options) (*Client, *scripted) {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	c := NewClient(cr, cw, opts)
	s := &scripted{t: t, in: bufio.NewReader(sr), w: sw}
	t.Cleanup(func() {
		sw.Close()
		sr.Close()
		c.Close()
	})
	return c, s
}

// read returns the next line the client wrote, decoded.
func (s *scripted) read() envelope {
	s.t.Helper()
	line, err := s.in.ReadBytes('\n')
	if err != nil {
		s.t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		s.t.Fatalf("the client wrote a line that is not JSON: %q", line)
	}
	return env
}

func (s *scripted) write(format string, args ...any) {
	s.t.Helper()
	if _, err := fmt.Fprintf(s.w, format+"\n", args...); err != nil {
		s.t.Fatal(err)
	}
}

func TestClientAnswersCallbacks(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	s.write(`{"id":1,"method":"transport","params":{"instance":"none","request":{"provider":"p","model":"m","destination":"remote","payload":null}}}`)
	if env := s.read(); env.ID != 1 || env.Error == nil || env.Error.Code != CodeUnknownInstance {
		t.Fatalf("transport for no instance answered %+v", env)
	}
	s.write(`{"id":2,"method":"snapshotHistory","params":{}}`)
	if env := s.read(); env.ID != 2 || env.Error == nil || env.Error.Code != CodeUnknownMethod {
		t.Fatalf("an unknown method answered %+v", env)
	}
	s.write(`{"id":3,"method":"transport"}`)
	if env := s.read(); env.ID != 3 || env.Error == nil || env.Error.Code != CodeInvalidParams {
		t.Fatalf("transport without params answered %+v", env)
	}
	if c.Err() != nil {
		t.Fatalf("the connection broke: %v", c.Err())
	}
}

func TestClientAbandonsACancelledCall(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Hello(ctx)
		errc <- err
	}()
	first := s.read()
	cancel()
	// The harness says it gave the call up.
	if c := s.read(); c.Method != MethodCancel || string(c.Params) != fmt.Sprintf(`{"id":%d}`, first.ID) {
		t.Fatalf("after the cancelled call: %s %s, want a cancel naming id %d", c.Method, c.Params, first.ID)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled hello: %v", err)
	}
	// The late answer to the abandoned call is dropped, not a violation.
	s.write(`{"id":%d,"result":{"protocol":"runtime-adapter-bridge-v1","factory":"late"}}`, first.ID)
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"protocol":"runtime-adapter-bridge-v1","factory":"scripted"}}`, env.ID)
	}()
	name, err := c.Hello(context.Background())
	if err != nil || name != "scripted" || c.FactoryName() != "scripted" {
		t.Fatalf("hello after an abandoned call: %q, %v", name, err)
	}
}

func TestClientRejectsAnotherVersion(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"protocol":"runtime-adapter-bridge-v9","factory":"future"}}`, env.ID)
	}()
	if _, err := c.Hello(context.Background()); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("hello answered with another version: %v", err)
	}
}

func TestClientRejectsAResponseWithoutResult(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	go func() {
		env := s.read()
		s.write(`{"id":%d}`, env.ID)
	}()
	if _, err := c.Hello(context.Background()); !errors.Is(err, ErrProtocol) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a response with neither result nor error: %v", err)
	}
}

func TestClientReportsAMalformedResult(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"protocol":17}}`, env.ID)
	}()
	_, err := c.Hello(context.Background())
	if !errors.Is(err, ErrProtocol) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("a result of the wrong shape: %v, want ErrProtocol for that call only", err)
	}
}

// An error answer to a method without an error result is no answer the
// method may invent one for: complete, diagnostics, identity, declarations
// and negotiation panic with the remote error, which names the method and
// the code (unknown-method matching contract.ErrNotImplemented), and the
// connection survives.
func TestMethodsAnsweredWithAnErrorSayIt(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	ctx := context.Background()
	calls := []struct {
		method, code string
		call         func(a contract.Adapter)
	}{
		{MethodComplete, CodeAdapterError, func(a contract.Adapter) {
			a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 1})
		}},
		{MethodComplete, CodeUnknownMethod, func(a contract.Adapter) {
			a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 1})
		}},
		{MethodDiagnostics, CodeUnknownMethod, func(a contract.Adapter) { a.Diagnostics() }},
		{MethodIdentity, CodeAdapterError, func(a contract.Adapter) { a.Identity() }},
		{MethodCapabilityDeclarations, CodeUnknownMethod, func(a contract.Adapter) { a.CapabilityDeclarations() }},
		{MethodNegotiateCapabilities, CodeUnknownMethod, func(a contract.Adapter) { a.NegotiateCapabilities(nil) }},
	}
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"instance":"i","expectedProjectRoot":"/r"}}`, env.ID)
		for _, c := range calls {
			env = s.read()
			s.write(`{"id":%d,"error":{"code":%q,"message":"not today"}}`, env.ID, c.code)
		}
		env = s.read()
		s.write(`{"id":%d,"result":{"runtimeId":"r","adapterName":"a","adapterVersion":"1","contractVersion":"runtime-adapter-v1"}}`, env.ID)
	}()
	inst, err := c.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range calls {
		func() {
			defer func() {
				v := recover()
				var re *RemoteError
				err, _ := v.(error)
				if !errors.As(err, &re) || re.Method != call.method || re.Code != call.code {
					t.Errorf("%s answered %s: recovered %v, want the remote error", call.method, call.code, v)
				}
				if errors.Is(err, contract.ErrNotImplemented) != (call.code == CodeUnknownMethod) {
					t.Errorf("%s answered %s: errors.Is(contract.ErrNotImplemented) = %t", call.method, call.code, !(call.code == CodeUnknownMethod))
				}
			}()
			call.call(inst.Adapter)
			t.Errorf("%s answered %s returned as if answered", call.method, call.code)
		}()
	}
	if id := inst.Adapter.Identity(); id.AdapterName != "a" {
		t.Fatalf("the connection did not survive an error answer: %+v", id)
	}
}

// kvPort answers every reuse with a miss and every replay with a fixed
// output; it fails when failing is set, and counts shutdowns.
type kvPort struct {
	failing   bool
	shutdowns int
}

func (k *kvPort) TryReuse(context.Context, localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	if k.failing {
		return localkv.ReuseAnswer{}, errors.New("port fails")
	}
	return localkv.ReuseAnswer{Status: localkv.ReuseMiss}, nil
}

func (k *kvPort) FullReplay(context.Context, localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	return localkv.ReplayAnswer{Output: json.RawMessage(`"replayed"`), PrefillTokens: 3}, nil
}

func (k *kvPort) Shutdown(context.Context) error {
	k.shutdowns++
	return nil
}

func TestClientAnswersLocalKVCallbacks(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	ctx := context.Background()
	port := &kvPort{}
	go func() {
		env := s.read()
		var p createParams
		if json.Unmarshal(env.Params, &p) != nil || !p.LocalKVPort {
			s.write(`{"id":%d,"error":{"code":"invalid-params","message":"create did not announce the port"}}`, env.ID)
			return
		}
		s.write(`{"id":%d,"result":{"instance":"i","expectedProjectRoot":"/r"}}`, env.ID)
	}()
	if _, err := c.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: &recorder{}, LocalKVPort: port}); err != nil {
		t.Fatal(err)
	}
	req := `{"instance":"i","request":{"key":{"version":"local-kv-eligibility-v1","fingerprint":"f"},"provider":"ollama","model":"m","payload":{},"prefixTokenCount":1,"contextTokenCount":2}}`
	for _, tc := range []struct{ method, want string }{
		{MethodLocalKVTryReuse, `{"status":"miss"}`},
		{MethodLocalKVFullReplay, `{"output":"replayed","prefillTokens":3,"prefillLatencyMs":0}`},
	} {
		s.write(`{"id":1,"method":%q,"params":%s}`, tc.method, req)
		if env := s.read(); env.Error != nil || string(env.Result) != tc.want {
			t.Errorf("%s answered %s %+v, want %s", tc.method, env.Result, env.Error, tc.want)
		}
	}
	port.failing = true
	s.write(`{"id":2,"method":"localKvTryReuse","params":%s}`, req)
	if env := s.read(); env.Error == nil || env.Error.Code != CodeLocalKVPortFailed {
		t.Errorf("a failing port answered %+v", env)
	}
	s.write(`{"id":3,"method":"localKvShutdown","params":{"instance":"i"}}`)
	if env := s.read(); env.Error != nil || port.shutdowns != 1 {
		t.Errorf("shutdown answered %+v after %d shutdowns", env.Error, port.shutdowns)
	}
}

// A callback that names the harness call it serves is refused once that
// call has ended, without reaching the transport; one that names none is
// served, as adapters that do not say are.
func TestClientRefusesCallbacksOfEndedCalls(t *testing.T) {
	checkGoroutines(t)
	c, s := newScripted(t)
	ctx := context.Background()
	tr := &recorder{}
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"instance":"i","expectedProjectRoot":"/r"}}`, env.ID)
	}()
	inst, err := c.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan contract.CompletionResult, 1)
	go func() {
		done <- inst.Adapter.Complete(cctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 1})
	}()
	call := s.read()
	transport := func(id uint64, member string) *WireError {
		s.write(`{"id":%d,"method":"transport","params":{"instance":"i",%s"request":{"provider":"p","model":"m","destination":"remote","payload":{}}}}`, id, member)
		env := s.read()
		if env.ID != id {
			t.Fatalf("answer to %d: %+v", id, env)
		}
		return env.Error
	}
	if e := transport(1, fmt.Sprintf(`"call":%d,`, call.ID)); e != nil || tr.count() != 1 {
		t.Fatalf("a callback of the live call: %+v, %d transport requests", e, tr.count())
	}
	cancel()
	if env := s.read(); env.Method != MethodCancel {
		t.Fatalf("after the cancelled completion: %+v, want a cancel", env)
	}
	for id, member := range map[uint64]string{2: fmt.Sprintf(`"call":%d,`, call.ID), 3: `"call":999,`} {
		if e := transport(id, member); e == nil || e.Code != CodeCallEnded {
			t.Errorf("a callback naming %s answered %+v, want %s", member, e, CodeCallEnded)
		}
	}
	if e := transport(4, ""); e != nil || tr.count() != 2 {
		t.Fatalf("a callback naming no call: %+v, %d transport requests", e, tr.count())
	}
	// The ended completion's answer is still awaited: the adapter's own
	// answer for a context that ended is the result, as in process.
	select {
	case r := <-done:
		t.Fatalf("the cancelled completion returned %+v before the process answered", r)
	default:
	}
	s.write(`{"id":%d,"result":{"status":"fallback","code":"transport-failed","reason":"completion transport failed","retryable":true}}`, call.ID)
	if r := <-done; r.Status != contract.StatusFallback || r.Code != contract.FallbackTransportFailed || !r.Retryable || r.Reason != "completion transport failed" {
		t.Fatalf("a cancelled completion: %+v, want the process's answer", r)
	}
}
