package conformance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// hanging blocks every call of the adapter until release is closed.
type hanging struct {
	contract.Adapter
	release <-chan struct{}
}

func (h hanging) Identity() contract.Identity { <-h.release; return h.Adapter.Identity() }
func (h hanging) CapabilityDeclarations() []contract.CapabilityDeclaration {
	<-h.release
	return h.Adapter.CapabilityDeclarations()
}
func (h hanging) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	<-h.release
	return h.Adapter.SnapshotHistory(ctx)
}
func (h hanging) Shutdown(ctx context.Context) error { <-h.release; return h.Adapter.Shutdown(ctx) }

// An adapter that hangs every time fails the catalogue after waiting the
// bound out once (and once more to tell it from a slow one): every later
// check waits only the short bound, and names the first hang.
func TestAHungAdapterFailsFast(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return hanging{a, release} }, new(int))
	rep := conformance.RunChecks(ctx, f, conformance.WithCallTimeout(500*time.Millisecond))
	waited, named := 0, 0
	first := "the adapter hung earlier, in check " + rep.Checks[0].ID + " (Identity did not return within 500ms, nor within 500ms more), so this run bounds every later call at 100ms"
	for _, r := range rep.Checks {
		switch {
		case r.Status == conformance.StatusSkip:
		case r.Failure == nil:
			t.Errorf("%s: %s", r.ID, r.Status)
		case strings.Contains(r.Failure.Actual, "did not return within 100ms") && strings.Contains(r.Failure.Actual, first):
			named++
		case strings.Contains(r.Failure.Actual, "did not return within 500ms"):
			waited++
		default:
			t.Errorf("%s: %+v", r.ID, r.Failure)
		}
	}
	if waited != 1 || named != len(rep.Checks)-1 {
		t.Fatalf("%d checks waited the whole bound on the hung adapter and %d named the first hang, of %d", waited, named, len(rep.Checks))
	}
}

// slowOnce answers its first snapshot only after its call's bound has
// passed, and every call at once afterwards.
type slowOnce struct {
	contract.Adapter
	first chan struct{}
}

func (s slowOnce) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	select {
	case <-s.first:
	default:
		close(s.first)
		<-ctx.Done() // the call's bound has passed
		<-time.After(250 * time.Millisecond)
	}
	return s.Adapter.SnapshotHistory(context.Background())
}

// A slow adapter that answers late is no hung one: the check whose call
// took too long fails, the others run.
func TestASlowAdapterIsNotTakenForAHungOne(t *testing.T) {
	first := make(chan struct{})
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return slowOnce{a, first} }, new(int))
	rep := conformance.RunChecks(ctx, f, conformance.WithCallTimeout(time.Second), conformance.WithChecks(
		conformance.CaseCanonicalHistory, conformance.CaseRebuild, conformance.CaseIdentity))
	for _, r := range rep.Checks {
		switch {
		case r.ID == conformance.CaseCanonicalHistory:
			if r.Status != conformance.StatusError || !strings.Contains(r.Failure.Actual, "SnapshotHistory did not return within") {
				t.Errorf("the slow check: %s %+v", r.Status, r.Failure)
			}
		case r.Status != conformance.StatusPass:
			t.Errorf("%s after a slow answer: %s %+v", r.ID, r.Status, r.Failure)
		}
	}
}

// givingUp answers every call that takes a context only with the
// context's error, once the context has ended: a hung adapter that honours
// contexts, or one served by a process the bridge stops at the bound.
type givingUp struct{ contract.Adapter }

func (g givingUp) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	<-ctx.Done()
	return contract.HistorySnapshot{}, ctx.Err()
}
func (g givingUp) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	<-ctx.Done()
	return contract.HistorySnapshot{}, ctx.Err()
}
func (g givingUp) Shutdown(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

// An adapter whose calls give up at every bound without an answer is hung
// too, although each call returns: the second check whose call gives up
// marks it so, and every later check names the first.
func TestAnAdapterGivingUpAtEveryBoundFailsFast(t *testing.T) {
	t.Parallel()
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return givingUp{a} }, new(int))
	rep := conformance.RunChecks(ctx, f, conformance.WithCallTimeout(300*time.Millisecond))
	waited, named := 0, 0
	first := "the adapter hung earlier, in check " + rep.Checks[0].ID + " (Shutdown gave up at its bound of 300ms without an answer, and so did a call in check " + rep.Checks[1].ID + "), so this run bounds every later call at 100ms"
	for _, r := range rep.Checks {
		switch {
		case r.Status == conformance.StatusSkip:
		case r.Failure == nil:
			t.Errorf("%s: %s", r.ID, r.Status)
		case strings.Contains(r.Failure.Actual, first):
			named++
		case strings.Contains(r.Failure.Actual, "did not return within 300ms"):
			waited++
		default:
			t.Errorf("%s: %+v", r.ID, r.Failure)
		}
	}
	if waited != 2 || named == 0 {
		t.Fatalf("%d checks waited the whole bound on the adapter and %d named the first hang, of %d", waited, named, len(rep.Checks))
	}
}
