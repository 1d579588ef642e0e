package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// secretText stands for payload text: it must never appear in an error.
const secretText = "PAYLOAD-TEXT-MUST-NOT-LEAK"

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkGoroutines fails t if the goroutine count has not returned to
// (about) before once the test is over.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		// No event says that a goroutine ended: Eventually polls the
		// count, within a bound.
		stacks := func() string {
			buf := make([]byte, 1<<16)
			return fmt.Sprintf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		gomega.NewWithT(t).Eventually(runtime.NumGoroutine).WithTimeout(bound(10*time.Second)).WithPolling(10*time.Millisecond).
			Should(gomega.BeNumerically("<=", before+2), stacks)
	})
}

func TestPipeMatchesInProcess(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	direct := &fakeFactory{}
	bridged := &fakeFactory{}
	dt, bt := conformance.NewRecordingTransport(), conformance.NewRecordingTransport()
	fx := conformance.NewFixture()
	di, err := direct.Create(ctx, conformance.Setup{Fixture: fx, Transport: dt})
	if err != nil {
		t.Fatal(err)
	}
	bi, err := Pipe(bridged, Options{}).Create(ctx, conformance.Setup{Fixture: fx, Transport: bt})
	if err != nil {
		t.Fatal(err)
	}
	if bi.ExpectedProjectRoot != di.ExpectedProjectRoot {
		t.Fatalf("root %q, want %q", bi.ExpectedProjectRoot, di.ExpectedProjectRoot)
	}
	d, b := di.Adapter, bi.Adapter
	reqs := []contract.CapabilityRequest{{ID: "compaction"}, {ID: "embeddings", Required: true}}
	payload := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello <b>&"}}}
	steps := []struct {
		name string
		call func(a contract.Adapter) any
	}{
		{"identity", func(a contract.Adapter) any { return a.Identity() }},
		{"declarations", func(a contract.Adapter) any { return a.CapabilityDeclarations() }},
		{"negotiate", func(a contract.Adapter) any { return a.NegotiateCapabilities(reqs) }},
		{"snapshot", func(a contract.Adapter) any { s, err := a.SnapshotHistory(ctx); return []any{s, err == nil} }},
		{"rebuild", func(a contract.Adapter) any { s, err := a.RebuildDerivedState(ctx); return []any{s, err == nil} }},
		{"model", func(a contract.Adapter) any { m, err := a.CurrentModel(ctx); return []any{m, err == nil} }},
		{"root", func(a contract.Adapter) any { r, err := a.TrustedProjectRoot(ctx); return []any{r, err == nil} }},
		{"privacy", func(a contract.Adapter) any {
			r, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "p", Payload: payload})
			return []any{r, err == nil}
		}},
		{"complete", func(a contract.Adapter) any {
			return a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: payload})
		}},
		{"hostile", func(a contract.Adapter) any {
			return a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: make(chan int)})
		}},
		{"hostile-privacy", func(a contract.Adapter) any {
			_, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "p", Payload: func() {}})
			return err != nil
		}},
		{"diagnostics", func(a contract.Adapter) any { return a.Diagnostics() }},
		{"shutdown", func(a contract.Adapter) any { return a.Shutdown(ctx) == nil }},
		{"shutdown-again", func(a contract.Adapter) any { return a.Shutdown(ctx) == nil }},
		{"closed-complete", func(a contract.Adapter) any {
			return a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: payload})
		}},
		{"closed-snapshot", func(a contract.Adapter) any { _, err := a.SnapshotHistory(ctx); return err != nil }},
		{"closed-diagnostics", func(a contract.Adapter) any { return a.Diagnostics() }},
	}
	for _, st := range steps {
		want, got := mustJSON(t, st.call(d)), mustJSON(t, st.call(b))
		if want != got {
			t.Errorf("%s over the bridge:\n got %s\nwant %s", st.name, got, want)
		}
	}
	if dt.Len() != 1 || bt.Len() != 1 {
		t.Errorf("transport calls: direct %d, bridged %d, want 1 each", dt.Len(), bt.Len())
	}
	if want, got := mustJSON(t, dt.Requests()), mustJSON(t, bt.Requests()); want != got {
		t.Errorf("transport requests differ:\n got %s\nwant %s", got, want)
	}
	if err := bi.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if bridged.cleaned() != 1 {
		t.Errorf("cleanups %d, want 1", bridged.cleaned())
	}
}

func TestTransportFailureCrossesAsError(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	tr := conformance.NewRecordingTransport()
	tr.FailNext()
	inst, err := Pipe(&fakeFactory{}, Options{}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: "x"})
	if r.Status != contract.StatusFallback || r.Code != contract.FallbackTransportFailed || !r.Retryable {
		t.Fatalf("result %+v, want a retryable transport-failed fallback", r)
	}
	if tr.Len() != 0 {
		t.Fatalf("failed transport recorded %d requests", tr.Len())
	}
}

func TestPanicCrossesAsPanic(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	inst, err := Pipe(&fakeFactory{}, Options{}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	defer func() {
		v := recover()
		re, ok := v.(*RemoteError)
		if !ok || re.Code != CodeAdapterPanicked || re.Method != MethodEnforcePrivacy {
			t.Fatalf("recovered %#v, want a *RemoteError with code %s", v, CodeAdapterPanicked)
		}
	}()
	inst.Adapter.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "panic", Payload: 1})
	t.Fatal("EnforcePrivacy did not panic")
}

func TestFactoryErrorCrosses(t *testing.T) {
	checkGoroutines(t)
	_, err := Pipe(&fakeFactory{fail: true}, Options{}).Create(context.Background(), conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeFactoryFailed {
		t.Fatalf("error %v, want a factory-failed RemoteError", err)
	}
}

// streams connects a Client to a Server over two pipes.
func streams(t *testing.T, f conformance.Factory) (*Client, chan error) {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), f, sr, sw)
		sw.Close()
		done <- err
	}()
	return NewClient(cr, cw, Options{CallTimeout: bound(10 * time.Second)}), done
}

func TestOneServerManyInstances(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	f := &fakeFactory{}
	c, done := streams(t, f)
	if name, err := c.Hello(ctx); err != nil || name != "fake-factory" {
		t.Fatalf("hello: %q, %v", name, err)
	}
	fx1, fx2 := conformance.NewFixture(), conformance.NewFixture()
	fx2.RuntimeID = "second-runtime"
	t1, t2 := conformance.NewRecordingTransport(), conformance.NewRecordingTransport()
	i1, err := c.Create(ctx, conformance.Setup{Fixture: fx1, Transport: t1})
	if err != nil {
		t.Fatal(err)
	}
	i2, err := c.Create(ctx, conformance.Setup{Fixture: fx2, Transport: t2})
	if err != nil {
		t.Fatal(err)
	}
	if got := i2.Adapter.Identity().RuntimeID; got != "second-runtime" {
		t.Fatalf("second instance runtime %q", got)
	}
	i1.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 1})
	i2.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 2})
	i2.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 3})
	if t1.Len() != 1 || t2.Len() != 2 {
		t.Fatalf("transport calls %d and %d, want 1 and 2: callbacks went to the wrong instance", t1.Len(), t2.Len())
	}
	if err := i1.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := i1.Cleanup(ctx); err == nil {
		t.Fatal("a second cleanup of the same instance succeeded")
	}
	if _, err := i1.Adapter.SnapshotHistory(ctx); err == nil {
		t.Fatal("a cleaned-up instance still answers")
	}
	// The harness leaves without cleaning up the second instance: Serve
	// shuts it down and cleans it up.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if f.cleaned() != 2 {
		t.Fatalf("cleanups %d, want 2", f.cleaned())
	}
}

// rawServer runs Serve over pipes and returns a function that sends one
// line and reads the answer.
func rawServer(t *testing.T) (send func(line string) string, closeIn func() error) {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), &fakeFactory{}, sr, sw)
		sw.Close()
	}()
	buf := make([]byte, 1<<16)
	send = func(line string) string {
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			t.Fatal(err)
		}
		n, err := cr.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(buf[:n]))
	}
	closeIn = func() error {
		cw.Close()
		err := <-done
		cr.Close()
		return err
	}
	return send, closeIn
}

func TestServeAnswers(t *testing.T) {
	checkGoroutines(t)
	send, closeIn := rawServer(t)
	for _, tc := range []struct{ line, want string }{
		{`{"id":1,"method":"identity","params":{"instance":"x"}}`, `{"id":1,"error":{"code":"hello-required","message":"send hello first"}}`},
		{`{"id":2,"method":"hello","params":{"protocol":"runtime-adapter-bridge-v0"}}`, `{"id":2,"error":{"code":"unsupported-version","message":"this adapter speaks runtime-adapter-bridge-v1 only"}}`},
		{`{"id":3,"method":"hello","params":{"protocol":"runtime-adapter-bridge-v1"}}`, `{"id":3,"result":{"protocol":"runtime-adapter-bridge-v1","factory":"fake-factory"}}`},
		{`{"id":4,"method":"identity","params":{"instance":"nope"}}`, `{"id":4,"error":{"code":"unknown-instance","message":"no live instance has this id"}}`},
		{`{"id":5,"method":"bogus","params":{"instance":"nope"}}`, `{"id":5,"error":{"code":"unknown-instance","message":"no live instance has this id"}}`},
		{`{"id":6,"method":"create","params":{"fixture":{"messages":[{"id":1}]}}}`, `{"id":6,"error":{"code":"invalid-params","message":"create params do not have the protocol's shape"}}`},
		{`{"id":7,"method":"create","params":{"fixture":{"runtimeId":"r","sessionId":"s","model":{"provider":"p","id":"m","contextWindow":1},"messages":[]}}}`, `{"id":7,"result":{"instance":"instance-1","expectedProjectRoot":"/fake/root"}}`},
		{`{"id":8,"method":"bogus","params":{"instance":"instance-1"}}`, `{"id":8,"error":{"code":"unknown-method","message":"unknown method \"bogus\""}}`},
		{`{"id":9,"method":"currentModel","params":{"instance":"instance-1"}}`, `{"id":9,"result":{"provider":"p","id":"m","contextWindow":1}}`},
		{`{"id":10,"method":"shutdown","params":{"instance":"instance-1"}}`, `{"id":10,"result":null}`},
		{`{"id":11,"method":"currentModel","params":{"instance":"instance-1"}}`, `{"id":11,"error":{"code":"adapter-error","message":"fake adapter is closed"}}`},
		{`{"id":12,"method":"cancel","params":{"id":99}}`, `{"id":12,"result":null}`},
		{`{"id":13,"method":"cancel","params":{"id":"x"}}`, `{"id":13,"error":{"code":"invalid-params","message":"cancel params do not have the protocol's shape"}}`},
	} {
		if got := send(tc.line); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
	if err := closeIn(); err != nil {
		t.Fatalf("Serve after a clean end of input: %v", err)
	}
}

func TestServeRejectsGarbage(t *testing.T) {
	checkGoroutines(t)
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), &fakeFactory{}, sr, io.Discard) }()
	go func() {
		io.WriteString(cw, "not json "+secretText+"\n")
	}()
	err := <-done
	cw.Close()
	if !errors.Is(err, ErrProtocol) || strings.Contains(err.Error(), secretText) {
		t.Fatalf("Serve: %v, want ErrProtocol without the line's text", err)
	}
}

func TestServeBoundsLines(t *testing.T) {
	checkGoroutines(t)
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- (&Server{Factory: &fakeFactory{}, MaxLineBytes: 1024}).Serve(context.Background(), sr, io.Discard)
	}()
	go func() {
		io.WriteString(cw, strings.Repeat("x", 4096))
	}()
	err := <-done
	cw.Close()
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Serve: %v, want ErrLineTooLong", err)
	}
}

func TestServeStopsOnCancel(t *testing.T) {
	checkGoroutines(t)
	sr, cw := io.Pipe()
	defer cw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, &fakeFactory{}, sr, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v, want context.Canceled", err)
		}
	case <-time.After(bound(10 * time.Second)):
		t.Fatal("Serve did not return after cancellation")
	}
}

func TestOversizedRequestFailsThatCallOnly(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	tr := conformance.NewRecordingTransport()
	inst, err := Pipe(&fakeFactory{}, Options{MaxLineBytes: 4096}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	big := strings.Repeat(secretText, 1000)
	r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: big})
	if r.Status != contract.StatusFallback || r.Code != contract.FallbackAdapterClosed || tr.Len() != 0 {
		t.Fatalf("oversized completion: %+v with %d transport calls", r, tr.Len())
	}
	_, err = inst.Adapter.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "p", Payload: big})
	if !errors.Is(err, ErrLineTooLong) || strings.Contains(err.Error(), secretText) {
		t.Fatalf("oversized enforcement: %v, want ErrLineTooLong without payload text", err)
	}
	if id := inst.Adapter.Identity(); id.AdapterName != "fake" {
		t.Fatalf("the connection did not survive an oversized request: %+v", id)
	}
}

// cancelledTransport blocks every Send until its context ends, and says when it starts and ends.
type cancelledTransport struct {
	entered, left chan struct{}
}

func (b *cancelledTransport) Send(ctx context.Context, _ contract.TransportRequest) (json.RawMessage, error) {
	close(b.entered)
	<-ctx.Done()
	close(b.left)
	return nil, ctx.Err()
}

// A completion the harness gives up on is cancelled on both sides: the
// harness sends cancel, the served completion's context ends, the
// adapter's transport callback is given up in turn, and the harness's
// transport sees its context end.
func TestCancelCrossesTheBridgeBothWays(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	tr := &cancelledTransport{entered: make(chan struct{}), left: make(chan struct{})}
	inst, err := Pipe(&fakeFactory{}, Options{}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan contract.CompletionResult, 1)
	go func() {
		done <- inst.Adapter.Complete(cctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: "x"})
	}()
	wait := bound(10 * time.Second)
	select {
	case <-tr.entered:
	case <-time.After(wait):
		t.Fatal("the completion never reached the transport")
	}
	cancel()
	select {
	case <-tr.left:
	case <-time.After(wait):
		t.Fatalf("the transport's context did not end within %s of the cancel", wait)
	}
	if r := <-done; r.Status != contract.StatusFallback {
		t.Fatalf("a cancelled completion: %+v", r)
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}
