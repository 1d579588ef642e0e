package bridge

import (
	"context"
	"encoding/json"
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
	if bridged.Status != inProcess.Status || bridged.Code != inProcess.Code || bridged.Retryable != inProcess.Retryable || bridged.Reason != ReasonCancelled {
		t.Fatalf("over the bridge, a cancelled completion: %+v; in process: %+v (want its status, code and retryability, with reason %q)", bridged, inProcess, ReasonCancelled)
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
