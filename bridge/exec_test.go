package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

func secretPayload() any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": secretText}}}
}

func TestExecServesLikeInProcess(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	f := childFactory("serve-fake", Options{})
	var procs []*process
	f.onStart = func(p *process) { procs = append(procs, p) }
	if f.Name() != filepath.Base(os.Args[0]) {
		t.Fatalf("name before a hello %q", f.Name())
	}
	tr := conformance.NewRecordingTransport()
	inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "fake-factory" {
		t.Fatalf("name after a hello %q, want the served factory's", f.Name())
	}
	a := inst.Adapter
	if id := a.Identity(); id.ContractVersion != contract.ContractVersion || id.RuntimeID != conformance.FixtureRuntimeID {
		t.Fatalf("identity %+v", id)
	}
	snap, err := a.SnapshotHistory(ctx)
	if err != nil || len(snap.Messages) != 4 || len(snap.ToolAtomicGroups) != 1 {
		t.Fatalf("snapshot %d messages, %d groups, %v", len(snap.Messages), len(snap.ToolAtomicGroups), err)
	}
	r := a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: secretPayload()})
	if r.Status != contract.StatusCompleted || tr.Len() != 1 {
		t.Fatalf("completion %+v with %d transport calls", r, tr.Len())
	}
	h := a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: make(chan int)})
	if h.Code != contract.FallbackPrivacyEnforcementFail || tr.Len() != 1 {
		t.Fatalf("uninspectable payload: %+v with %d transport calls", h, tr.Len())
	}
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if len(procs) != 1 || !procs[0].cmd.ProcessState.Exited() || procs[0].cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("a cooperative child did not exit by itself at the end of its input: %v", procs[0].cmd.ProcessState)
	}
}

func TestExecMisbehavingChild(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		cause error
	}{
		{"crash", ErrExited},
		{"hang", ErrTimeout},
		{"garbage", ErrProtocol},
		{"wrong-id", ErrProtocol},
		{"huge", ErrLineTooLong},
		{"unterminated", ErrProtocol},
		{"stdout-closed", ErrExited},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			checkGoroutines(t)
			ctx := context.Background()
			f := childFactory(tc.mode, Options{CallTimeout: bound(10 * time.Second), MaxLineBytes: 1 << 20})
			tr := conformance.NewRecordingTransport()
			inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			if tc.cause == ErrTimeout {
				// Only a hang waits for the timeout; every other mode
				// ends in an event that comes when it comes.
				shortenTimeouts(inst)
			}
			start := time.Now()
			r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: secretPayload()})
			if d := time.Since(start); d > shortTimeout+bound(10*time.Second) {
				t.Errorf("the call took %s", d)
			}
			if r.Status != contract.StatusFallback || r.Code != contract.FallbackAdapterClosed || r.Retryable || r.Reason != ReasonUnavailable {
				t.Errorf("completion %+v, want a non-retryable adapter-closed fallback", r)
			}
			_, err = inst.Adapter.SnapshotHistory(ctx)
			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, tc.cause) {
				t.Errorf("snapshot error %v, want ErrUnavailable and %v", err, tc.cause)
			}
			if err != nil && strings.Contains(err.Error(), secretText) {
				t.Errorf("an error holds payload text: %v", err)
			}
			if id := inst.Adapter.Identity(); id != (contract.Identity{}) {
				t.Errorf("identity of a broken adapter %+v", id)
			}
			ds := inst.Adapter.Diagnostics()
			if len(ds) != 1 || ds[0].Code != DiagnosticProcessFailed || ds[0].Severity != contract.SeverityError {
				t.Errorf("diagnostics %+v, want one %s", ds, DiagnosticProcessFailed)
			}
			start = time.Now()
			if err := inst.Cleanup(ctx); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			if d := time.Since(start); d > bound(10*time.Second) {
				t.Errorf("cleanup took %s", d)
			}
			if tr.Len() != 0 {
				t.Errorf("transport called %d times", tr.Len())
			}
		})
	}
}

// Every process an adapter process starts ends with it — one in its
// process group, one in a session of its own, one forked twice — whether
// the adapter exits on its own at cleanup or is killed for misbehaving.
// Cleanup returns once they are reaped, so none may be left at that point.
func TestExecEndsEveryDescendant(t *testing.T) {
	for _, then := range []string{"cooperate", "hang", "garbage", "crash"} {
		t.Run(then, func(t *testing.T) {
			checkGoroutines(t)
			ctx := context.Background()
			f := childFactory("spawn-"+then, Options{CallTimeout: bound(10 * time.Second)})
			inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
			if err != nil {
				t.Fatal(err)
			}
			list, err := inst.Adapter.TrustedProjectRoot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var pids []int
			for _, s := range strings.Split(list, ",") {
				pid, err := strconv.Atoi(s)
				if err != nil || pid <= 0 {
					t.Fatalf("descendant ids %q", list)
				}
				if syscall.Kill(pid, 0) != nil {
					t.Fatalf("descendant %d is not running before the cleanup", pid)
				}
				pids = append(pids, pid)
			}
			if then == "hang" {
				shortenTimeouts(inst)
			}
			if then != "cooperate" {
				if _, err := inst.Adapter.SnapshotHistory(ctx); !errors.Is(err, ErrUnavailable) {
					t.Fatalf("misbehaving child: %v, want ErrUnavailable", err)
				}
			}
			if err := inst.Cleanup(ctx); err != nil && then == "cooperate" {
				t.Fatal(err)
			}
			for _, pid := range pids {
				if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("descendant %d outlived the cleanup (kill 0: %v)", pid, err)
				}
			}
		})
	}
}

// ExecConfig.Name names the factory before and after hello alike, so the
// Ginkgo container (named before any process runs) and the report agree.
func TestExecNameOverridesHello(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	f := childFactory("serve-fake", Options{})
	f.cfg.Name = "my-adapter"
	if f.Name() != "my-adapter" {
		t.Fatalf("name before a hello %q", f.Name())
	}
	inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "my-adapter" {
		t.Fatalf("name after a hello %q, want ExecConfig.Name", f.Name())
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestExecReportsAFailedExit(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	inst, err := childFactory("serve-fake-exit-1", Options{}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Cleanup(ctx); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "status 1") {
		t.Fatalf("cleanup: %v, want ErrExited with status 1", err)
	}
}

func TestExecCreateFailures(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	setup := conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()}
	_, err := childFactory("old-version", Options{}).Create(ctx, setup)
	if !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("old version: %v, want ErrUnsupportedVersion", err)
	}
	_, err = childFactory("exit-on-create", Options{}).Create(ctx, setup)
	if !errors.Is(err, ErrExited) {
		t.Errorf("exit on create: %v, want ErrExited", err)
	}
	_, err = Command(filepath.Join(t.TempDir(), "no-such-adapter")).Create(ctx, setup)
	if err == nil {
		t.Error("a missing executable created an instance")
	}
}
