package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// blockingTransport answers no transport call until its context ends.
type blockingTransport struct{}

func (blockingTransport) Send(ctx context.Context, _ contract.TransportRequest) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A child that floods the harness with requests is broken as soon as the
// requests in flight pass the bound — whether it stops reading the
// responses (the transport answers, the writes back block) or the harness
// cannot keep up (the transport blocks) — and the harness's goroutines and
// memory stay within a fixed ceiling meanwhile.
func TestExecBoundsAFloodingChild(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport contract.Transport
	}{
		{"unread-responses", conformance.NewRecordingTransport()},
		{"slow-transport", blockingTransport{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGoroutines(t)
			ctx := context.Background()
			f := childFactory("flood", Options{CallTimeout: bound(20 * time.Second)})
			inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tc.transport})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			baseGoroutines := runtime.NumGoroutine()

			var peak atomic.Int64
			stop, sampled := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					if n := int64(runtime.NumGoroutine()); n > peak.Load() {
						peak.Store(n)
					}
					select {
					case <-stop:
						return
					default:
						runtime.Gosched()
					}
				}
			}()
			_, err = inst.Adapter.TrustedProjectRoot(ctx)
			close(stop)
			<-sampled
			var after runtime.MemStats
			runtime.ReadMemStats(&after)

			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "requests in flight") {
				t.Errorf("flood: %v, want ErrProtocol for too many requests in flight", err)
			}
			grown := int64(after.Sys) - int64(before.Sys)
			t.Logf("goroutines: %d before the flood, at most %d during it; memory obtained from the OS grew %.1f MB",
				baseGoroutines, peak.Load(), float64(grown)/1e6)
			if peak.Load() >= 1000 {
				t.Errorf("%d goroutines during the flood, want fewer than 1,000", peak.Load())
			}
			if grown >= 100<<20 {
				t.Errorf("memory grew %d bytes during the flood, want less than 100 MB", grown)
			}
			if err := inst.Cleanup(ctx); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
	}
}

// A child that stops reading its input cannot block the harness: a write
// that the pipe does not take within the call timeout breaks the
// connection, as a call that got no answer would.
func TestExecBoundsAWriteToADeafChild(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	f := childFactory("deaf", Options{CallTimeout: bound(10 * time.Second)})
	inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Adapter.TrustedProjectRoot(ctx); err != nil {
		t.Fatal(err)
	}
	shortenTimeouts(inst)
	// Far more than a pipe buffers.
	big := map[string]any{"messages": []any{map[string]any{"role": "user", "content": strings.Repeat(secretText, (4<<20)/len(secretText))}}}
	r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: big})
	if r.Code != contract.FallbackAdapterClosed {
		t.Fatalf("completion %+v, want the adapter-closed fallback", r)
	}
	if err := inst.Adapter.Shutdown(ctx); !errors.Is(err, ErrTimeout) || strings.Contains(err.Error(), secretText) {
		t.Fatalf("after a blocked write: %v, want ErrTimeout without payload text", err)
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}
