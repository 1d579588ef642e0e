package conformance_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// blockingShutdown wraps an adapter whose Shutdown blocks from the second
// call on, until release is closed — an adapter bug that would hang an
// unbounded suite.
func blockingShutdown(release <-chan struct{}) conformance.Factory {
	cleaned := 0
	return wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		var mu sync.Mutex
		calls := 0
		return hooked{Adapter: a, shutdown: func(ctx context.Context) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n > 1 {
				<-release
			}
			return a.Shutdown(ctx)
		}}
	}, &cleaned)
}

func TestABlockingCallFailsItsCheckAndTheRunGoesOn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	const bound = 200 * time.Millisecond
	rep := conformance.RunChecks(ctx, blockingShutdown(release), conformance.WithCallTimeout(bound), conformance.WithHistories(2))
	if rep.Passed || len(rep.Checks) != len(conformance.Checks()) {
		t.Fatalf("passed %t with %d checks, want a failed run of every check", rep.Passed, len(rep.Checks))
	}
	byID := map[string]conformance.Result{}
	for _, r := range rep.Checks {
		byID[r.ID] = r
	}
	for _, id := range []string{conformance.CaseLifecycle, conformance.CheckClosed, conformance.CheckInOrder} {
		r := byID[id]
		if r.Status == conformance.StatusPass || r.Failure == nil || !strings.Contains(r.Failure.Actual+r.Failure.Rule, "Shutdown did not return within 200ms") {
			t.Errorf("%s: %s %+v, want a failure naming Shutdown and the bound", id, r.Status, r.Failure)
		}
	}
	if r := byID[conformance.CheckNegotiation]; r.Status != conformance.StatusPass {
		t.Errorf("negotiation after the blocked calls: %s %v", r.Status, r.Failure)
	}
}

func TestACallWithinTheBoundPasses(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CaseLifecycle)
	if r := c.Run(ctx, correct(), conformance.WithCallTimeout(time.Minute)); r.Status != conformance.StatusPass {
		t.Fatalf("lifecycle under a generous bound: %s %v", r.Status, r.Failure)
	}
	if r := c.Run(ctx, correct(), conformance.WithCallTimeout(0)); r.Status != conformance.StatusPass {
		t.Fatalf("lifecycle without a bound: %s %v", r.Status, r.Failure)
	}
}

// A Create that returns after the call bound fails the start with the
// bound named, and the instance it returns late is shut down and cleaned
// up by the kit, not handed to anyone (nor raced for: go test -race).
func TestALateCreateIsCleanedUp(t *testing.T) {
	release := make(chan struct{})
	cleaned := make(chan struct{})
	f := conformance.NewFactory("late", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		<-release
		inst, err := correct().Create(context.Background(), setup)
		if err != nil {
			return inst, err
		}
		inner := inst.Cleanup
		inst.Cleanup = func(ctx context.Context) error {
			defer close(cleaned)
			if inner != nil {
				return inner(ctx)
			}
			return nil
		}
		return inst, nil
	})
	s, err := conformance.Start(ctx, f, conformance.WithCallTimeout(50*time.Millisecond))
	if s != nil || !errors.Is(err, conformance.ErrFactory) || !strings.Contains(err.Error(), "Factory.Create") {
		t.Fatalf("start: %v, %v", s, err)
	}
	close(release)
	select {
	case <-cleaned:
	case <-time.After(time.Minute):
		t.Fatal("the instance Create returned late was not cleaned up")
	}
}
