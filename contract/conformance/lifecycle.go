package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/ds4context/adapterkit/contract"
)

// Sizes of the lifecycle checks.
const (
	// repeatedShutdowns is how many times shutdown-once shuts down.
	repeatedShutdowns = 4
	// concurrentShutdowns is how many goroutines concurrent-shutdown
	// starts at once.
	concurrentShutdowns = 16
)

// countAdapterClosed counts the adapter-closed diagnostics and reports
// whether each has severity info.
func countAdapterClosed(ds []contract.Diagnostic) (n int, info bool) {
	info = true
	for _, d := range ds {
		if d.Code == contract.DiagnosticAdapterClosed {
			n++
			info = info && d.Severity == contract.SeverityInfo
		}
	}
	return n, info
}

// wantOneAdapterClosed ends the check unless the diagnostics hold exactly
// one adapter-closed diagnostic, of severity info.
func wantOneAdapterClosed(a contract.Adapter, after string) error {
	ds := a.Diagnostics()
	if n, info := countAdapterClosed(ds); n != 1 || !info {
		return broken("shutdown records adapter-closed (info) once, however often it is called",
			fmt.Sprintf("exactly one %q diagnostic of severity %q after %s", contract.DiagnosticAdapterClosed, contract.SeverityInfo, after),
			fmt.Sprintf("%d (all info: %t) among diagnostics %s", n, info, describeDiagnostics(ds)))
	}
	return nil
}

// shutdownAll calls Shutdown from n goroutines released at once and
// returns what went wrong (at most a few problems).
func shutdownAll(ctx context.Context, a contract.Adapter, n int) []string {
	var (
		mu       sync.Mutex
		problems []string
		ready    sync.WaitGroup
		done     sync.WaitGroup
	)
	report := func(p string) {
		mu.Lock()
		if len(problems) < 5 {
			problems = append(problems, p)
		}
		mu.Unlock()
	}
	start := make(chan struct{})
	for g := range n {
		ready.Add(1)
		done.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					report(fmt.Sprintf("goroutine %d: %s", g, recovered(v, "Shutdown panicked: ")))
				}
			}()
			ready.Done()
			<-start
			if err := a.Shutdown(ctx); err != nil {
				report(fmt.Sprintf("goroutine %d: Shutdown error: %s", g, Redact(err.Error())))
			}
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	return problems
}

func checkShutdownOnce(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	if n, _ := countAdapterClosed(a.Diagnostics()); n != 0 {
		return broken("adapter-closed is recorded when the adapter shuts down, not before", "no adapter-closed diagnostic before shutdown", fmt.Sprintf("%d", n))
	}
	for i := range repeatedShutdowns {
		if err := a.Shutdown(ctx); err != nil {
			return broken("shutdown is idempotent: every call succeeds", fmt.Sprintf("no error from shutdown #%d", i+1), "error: "+Redact(err.Error()))
		}
		if err := wantOneAdapterClosed(a, fmt.Sprintf("%d shutdowns", i+1)); err != nil {
			return err
		}
	}
	c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PlainPayload()})
	if c.Status != contract.StatusFallback || c.Code != contract.FallbackAdapterClosed {
		return broken("after shutdown, a completion falls back with adapter-closed", fmt.Sprintf("fallback %q", contract.FallbackAdapterClosed), describeResult(c))
	}
	return wantOneAdapterClosed(a, fmt.Sprintf("%d shutdowns and a completion", repeatedShutdowns))
}

func checkConcurrentShutdown(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	if problems := shutdownAll(ctx, a, concurrentShutdowns); len(problems) > 0 {
		return broken("concurrent shutdowns are safe: every call returns nil",
			fmt.Sprintf("no error or panic from %d concurrent Shutdown calls", concurrentShutdowns),
			strings.Join(problems, "\n          "))
	}
	if err := wantOneAdapterClosed(a, fmt.Sprintf("%d concurrent shutdowns", concurrentShutdowns)); err != nil {
		return err
	}
	c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PlainPayload()})
	if c.Status != contract.StatusFallback || c.Code != contract.FallbackAdapterClosed {
		return broken("after concurrent shutdowns the adapter is closed: a completion falls back with adapter-closed",
			fmt.Sprintf("fallback %q", contract.FallbackAdapterClosed), describeResult(c))
	}
	if _, err := a.SnapshotHistory(ctx); err == nil {
		return broken("after concurrent shutdowns the adapter is closed: SnapshotHistory returns an error", "an error", "a snapshot")
	}
	return nil
}

func checkKVShutdownOnce(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	const rule = "an adapter shuts its local KV runtime port down exactly once, when it shuts down"
	// Use the port once, so the adapter holds whatever state it keeps.
	k.complete(ctx, kvPrompt())
	if n := k.port.Shutdowns(); n != 0 {
		return broken(rule, "no port shutdown while the adapter is open", fmt.Sprintf("%d port shutdowns", n))
	}
	for i := range repeatedShutdowns {
		if err := k.a.Shutdown(ctx); err != nil {
			return broken("shutdown is idempotent: every call succeeds", fmt.Sprintf("no error from shutdown #%d", i+1), "error: "+Redact(err.Error()))
		}
		if n := k.port.Shutdowns(); n != 1 {
			return broken(rule, fmt.Sprintf("one port shutdown after %d adapter shutdowns", i+1), fmt.Sprintf("%d port shutdowns", n))
		}
	}
	if problems := shutdownAll(ctx, k.a, concurrentShutdowns); len(problems) > 0 {
		return broken("concurrent shutdowns are safe: every call returns nil",
			fmt.Sprintf("no error or panic from %d concurrent Shutdown calls", concurrentShutdowns),
			strings.Join(problems, "\n          "))
	}
	if n := k.port.Shutdowns(); n != 1 {
		return broken(rule, fmt.Sprintf("one port shutdown after %d more, concurrent, adapter shutdowns", concurrentShutdowns), fmt.Sprintf("%d port shutdowns", n))
	}
	return nil
}

func lifecycleChecks() []Check {
	return []Check{
		{ID: CheckShutdownOnce, Kind: KindExtended, run: checkShutdownOnce,
			Summary: fmt.Sprintf("%d shutdowns all succeed and record exactly one adapter-closed diagnostic", repeatedShutdowns),
			Rule:    "shutdown is idempotent and records adapter-closed (info) exactly once"},
		{ID: CheckConcurrentShutdown, Kind: KindExtended, run: checkConcurrentShutdown,
			Summary: fmt.Sprintf("%d concurrent shutdowns all return nil, record one adapter-closed and leave the adapter closed", concurrentShutdowns),
			Rule:    "concurrent shutdowns all succeed, record adapter-closed once and close the adapter"},
		{ID: CheckLocalKVShutdownOnce, Kind: KindFeature, Capability: contract.CapabilityLocalKVReuse, run: checkKVShutdownOnce,
			Summary: "repeated and concurrent shutdowns shut the local KV port down exactly once",
			Rule:    "an adapter shuts its local KV runtime port down exactly once, when it shuts down, however often and concurrently it is shut down"},
	}
}
