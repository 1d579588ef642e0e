package conformance_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// doubledClosed reports every adapter-closed diagnostic twice.
type doubledClosed struct{ contract.Adapter }

func (d doubledClosed) Diagnostics() []contract.Diagnostic {
	var out []contract.Diagnostic
	for _, x := range d.Adapter.Diagnostics() {
		out = append(out, x)
		if x.Code == contract.DiagnosticAdapterClosed {
			out = append(out, x)
		}
	}
	return out
}

func TestShutdownChecksCountAdapterClosed(t *testing.T) {
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return doubledClosed{a} }, new(int))
	for _, id := range []string{conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown} {
		c, _ := conformance.CheckByID(id)
		r := c.Run(ctx, f)
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "2 (all info: true)") {
			t.Errorf("%s on an adapter recording adapter-closed twice: %s %v", id, r.Status, r.Failure)
		}
	}
}

func TestConcurrentShutdownReportsEveryFailingCall(t *testing.T) {
	var calls atomic.Int32
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, shutdown: func(ctx context.Context) error {
			if calls.Add(1) > 1 {
				panic("shutdown twice")
			}
			return a.Shutdown(ctx)
		}}
	}, new(int))
	c, _ := conformance.CheckByID(conformance.CheckConcurrentShutdown)
	r := c.Run(ctx, f)
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "Shutdown panicked: shutdown twice") {
		t.Fatalf("concurrent-shutdown on an adapter whose later shutdowns panic: %s %v", r.Status, r.Failure)
	}
	if n := calls.Load(); n < 16 {
		t.Fatalf("%d Shutdown calls, want the 16 concurrent ones and the runner's", n)
	}
}

func TestFallbacksFailureNeverShowsTheQuotedPayload(t *testing.T) {
	var quoted atomic.Pointer[string]
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return &quoting{Adapter: a, quoted: &quoted}
	}, new(int))
	c, _ := conformance.CheckByID(conformance.CheckFallbacks)
	r := c.Run(ctx, f)
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "(not shown)") {
		t.Fatalf("fallbacks on an adapter quoting payloads into diagnostics: %s %v", r.Status, r.Failure)
	}
	p := quoted.Load()
	if p == nil || strings.Contains(r.Failure.Error(), *p) {
		t.Fatalf("the failure shows the quoted payload (or nothing was quoted): %v", r.Failure)
	}
}

// quoting records a diagnostic quoting the payload of every transport-failed
// completion.
type quoting struct {
	contract.Adapter
	quoted *atomic.Pointer[string]
}

func (q *quoting) Complete(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
	res := q.Adapter.Complete(ctx, r)
	if res.Code == contract.FallbackTransportFailed {
		b, _ := json.Marshal(r.Payload)
		s := string(b)
		q.quoted.Store(&s)
	}
	return res
}

func (q *quoting) Diagnostics() []contract.Diagnostic {
	ds := q.Adapter.Diagnostics()
	if p := q.quoted.Load(); p != nil {
		ds = append(ds, contract.Diagnostic{Code: "quoted", Severity: contract.SeverityWarning, Message: "failed: " + *p})
	}
	return ds
}

// BenchmarkFallbackAndLifecycleChecks measures each check of the fallback
// table and the lifecycle, and the concurrency check, on a fresh instance
// of the example and the reference adapter, factory and cleanup included.
func BenchmarkFallbackAndLifecycleChecks(b *testing.B) {
	ids := []string{conformance.CheckFallbacks, conformance.CheckInvalidRequests, conformance.CheckClosedFirst,
		conformance.CheckRecordedDiagnostics, conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown,
		conformance.CheckLocalKVShutdownOnce, conformance.CheckConcurrency}
	for _, f := range []conformance.Factory{correct(), reference.NewConformanceFactory()} {
		for _, id := range ids {
			c, _ := conformance.CheckByID(id)
			b.Run(f.Name()+"/"+id, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if r := c.Run(ctx, f); !r.Passed() {
						b.Fatal(r.Failure)
					}
				}
			})
		}
	}
}

// A call that does not return is named as such, never as a panic: the
// bound stops waiting for it by panicking on the calling goroutine, which
// the checks calling from goroutines of their own recover.
func TestHungCallsInGoroutinesDidNotReturn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var shutdowns atomic.Int32
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a,
			shutdown: func(ctx context.Context) error {
				if shutdowns.Add(1) == 2 {
					<-release
				}
				return a.Shutdown(ctx)
			},
			complete: func(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
				if strings.Contains(fmtPayload(r.Payload), "concurrency-w3-r1") {
					<-release
				}
				return a.Complete(ctx, r)
			}}
	}, new(int))
	for id, want := range map[string]string{
		conformance.CheckConcurrentShutdown: "Shutdown did not return within 200ms",
		conformance.CheckConcurrency:        "Complete did not return within 200ms",
	} {
		shutdowns.Store(0)
		c, _ := conformance.CheckByID(id)
		r := c.Run(ctx, f, conformance.WithCallTimeout(200*time.Millisecond))
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, want) || strings.Contains(r.Failure.Actual, "panic") {
			t.Errorf("%s on an adapter with a call that hangs: %s %v; want a failure saying %q", id, r.Status, r.Failure, want)
		}
	}
}

// fmtPayload is the JSON text of a payload, to find a marker in it.
func fmtPayload(p any) string {
	b, _ := json.Marshal(p)
	return string(b)
}
