package bridge

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// waitingTransport blocks every send until its context ends (or the test
// does), saying on entered that a send began.
type waitingTransport struct {
	entered chan struct{}
	done    <-chan struct{}
}

func (w *waitingTransport) Send(ctx context.Context, _ contract.TransportRequest) (json.RawMessage, error) {
	w.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-w.done:
		return nil, context.Canceled
	}
}

// completeCancelled creates an instance from factory over a waiting
// transport, cancels a completion once its transport call began, and
// returns the completion's result and the instance, still open.
func completeCancelled(t *testing.T, factory conformance.Factory) (contract.CompletionResult, conformance.Instance) {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	tr := &waitingTransport{entered: make(chan struct{}, 1), done: done}
	inst, err := factory.Create(context.Background(), conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Cleanup(context.Background()) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-tr.entered:
			cancel()
		case <-done:
		}
	}()
	fx := conformance.NewFixture()
	res := make(chan contract.CompletionResult, 1)
	go func() {
		res <- inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: "hello"})
	}()
	select {
	case r := <-res:
		return r, inst
	case <-time.After(bound(10 * time.Second)):
		t.Fatal("the cancelled completion did not return")
	}
	return contract.CompletionResult{}, inst
}

// A caller that cancels its own completion gets over the bridge what the
// adapter in process gives for a cancelled context — a retryable
// transport-failed fallback — and the process stays in service: nothing
// broke, so it is not adapter-closed.
func TestCancelledCompleteFallsBackAsInProcess(t *testing.T) {
	checkGoroutines(t)
	inProcess, _ := completeCancelled(t, reference.NewConformanceFactory())
	if inProcess.Status != contract.StatusFallback {
		t.Fatalf("in process, a cancelled completion: %+v; want a fallback", inProcess)
	}
	bridged, inst := completeCancelled(t, Pipe(reference.NewConformanceFactory(), Options{}))
	if bridged.Status != inProcess.Status || bridged.Code != inProcess.Code || bridged.Retryable != inProcess.Retryable || bridged.Reason != inProcess.Reason {
		t.Fatalf("over the bridge, a cancelled completion: %+v; in process: %+v", bridged, inProcess)
	}
	for _, d := range inst.Adapter.Diagnostics() {
		if d.Code == DiagnosticProcessFailed {
			t.Fatalf("a cancelled completion recorded %s", d.Code)
		}
	}
	if id := inst.Adapter.Identity(); id.AdapterName == "" {
		t.Fatal("the adapter does not answer after a cancelled completion")
	}
}

// ctxTransport answers at once unless the context of the send has ended,
// as a transport honouring its context does.
type ctxTransport struct{}

func (ctxTransport) Send(ctx context.Context, _ contract.TransportRequest) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"ok":true}`), nil
}

// A completion whose context ended before the call gets over the bridge
// the answer, and leaves the diagnostics, the adapter gives in process
// over a transport that honours its context.
func TestCompleteCancelledBeforeTheCallAnswersAsInProcess(t *testing.T) {
	checkGoroutines(t)
	run := func(factory conformance.Factory) (contract.CompletionResult, []string) {
		t.Helper()
		inst, err := factory.Create(context.Background(), conformance.Setup{Fixture: conformance.NewFixture(), Transport: ctxTransport{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = inst.Cleanup(context.Background()) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		fx := conformance.NewFixture()
		r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: "hello"})
		var codes []string
		for _, d := range inst.Adapter.Diagnostics() {
			codes = append(codes, d.Code+" "+d.Message)
		}
		return r, codes
	}
	inProcess, want := run(reference.NewConformanceFactory())
	bridged, got := run(Pipe(reference.NewConformanceFactory(), Options{}))
	if bridged.Status != inProcess.Status || bridged.Code != inProcess.Code || bridged.Reason != inProcess.Reason || bridged.Retryable != inProcess.Retryable || !slices.Equal(got, want) {
		t.Fatalf("over the bridge: %+v, diagnostics %q\nin process: %+v, diagnostics %q", bridged, got, inProcess, want)
	}
}
