package conformance_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/reference"
)

// newChecks are the source, aliasing and cancellation checks.
var newChecks = []string{conformance.CheckSourceAppend, conformance.CheckSourceRevision, conformance.CheckSourceCorrupt,
	conformance.CheckSnapshotAliasing, conformance.CheckPayloadUnmodified, conformance.CheckCancellation}

var sourceChecks = newChecks[:3]

func runCheck(t *testing.T, id string, f conformance.Factory) conformance.Result {
	t.Helper()
	c, ok := conformance.CheckByID(id)
	if !ok {
		t.Fatalf("no check %s", id)
	}
	return c.Run(ctx, f)
}

func TestNewChecksPassReferenceAndExample(t *testing.T) {
	for name, f := range map[string]conformance.Factory{
		"reference": reference.NewConformanceFactory(),
		"example":   memadapter.ConformanceFactory(),
	} {
		for _, id := range newChecks {
			if r := runCheck(t, id, f); r.Status != conformance.StatusPass {
				t.Errorf("%s: %s %s: %v %s", name, id, r.Status, r.Failure, r.SkipReason)
			}
		}
	}
}

// withSource is the example factory with each instance's Source replaced.
func withSource(src func(conformance.Source) conformance.Source) conformance.Factory {
	return conformance.NewFactory("with source", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := correct().Create(ctx, setup)
		inst.Source = src(inst.Source)
		return inst, err
	})
}

type fakeSource struct {
	appendErr, corruptErr error
	inner                 conformance.Source
}

func (f fakeSource) Append(ctx context.Context, m contract.Message) error {
	if f.appendErr != nil {
		return f.appendErr
	}
	return f.inner.Append(ctx, m)
}

func (f fakeSource) Corrupt(context.Context) error { return f.corruptErr }

func TestSourceChecksSkipWithoutASource(t *testing.T) {
	f := withSource(func(conformance.Source) conformance.Source { return nil })
	for _, id := range sourceChecks {
		r := runCheck(t, id, f)
		if r.Status != conformance.StatusSkip || !strings.Contains(r.SkipReason, "Instance.Source is nil") {
			t.Errorf("%s: %s %q, want skipped saying why", id, r.Status, r.SkipReason)
		}
	}
}

// A source that does not corrupt leaves a readable history: the check
// fails, naming the rule. A failing source is an error of the check, not
// of the adapter.
func TestSourceCorruptFailsOnAReadableHistory(t *testing.T) {
	f := withSource(func(s conformance.Source) conformance.Source { return fakeSource{inner: s} })
	r := runCheck(t, conformance.CheckSourceCorrupt, f)
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "corrupt canonical source fails") ||
		!strings.Contains(r.Failure.Actual, "a history of 4 messages") {
		t.Fatalf("result %s %v, want a failure saying a history was returned", r.Status, r.Failure)
	}
	broken := errors.New("store unavailable")
	f = withSource(func(s conformance.Source) conformance.Source {
		return fakeSource{inner: s, appendErr: broken, corruptErr: broken}
	})
	for _, id := range sourceChecks {
		if r := runCheck(t, id, f); r.Status != conformance.StatusError || !strings.Contains(r.Failure.Rule, "Source must") {
			t.Errorf("%s: %s %v, want an error naming the source", id, r.Status, r.Failure)
		}
	}
}

// A call with a cancelled context is held to the check's short bound, not
// the run's call bound: a Complete that never returns is reported with it.
func TestCancellationHoldsCallsToAShortBound(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, complete: func(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
			if ctx.Err() != nil {
				<-release
			}
			return a.Complete(ctx, r)
		}}
	}, new(int))
	r := runCheck(t, conformance.CheckCancellation, f)
	if r.Status != conformance.StatusError || r.Failure.Expected != "Complete returns within 2s" {
		t.Fatalf("result %s %v, want an error: Complete returns within 2s", r.Status, r.Failure)
	}
}

// A snapshot with a cancelled context may fail, but one it returns must
// be the history.
func TestCancellationRejectsAnInventedSnapshot(t *testing.T) {
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, snapshot: func(ctx context.Context) (contract.HistorySnapshot, error) {
			s, err := a.SnapshotHistory(ctx)
			if ctx.Err() != nil {
				s.Messages = s.Messages[:1]
			}
			return s, err
		}}
	}, new(int))
	r := runCheck(t, conformance.CheckCancellation, f)
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "4 messages expected, 1 got") {
		t.Fatalf("result %s %v, want a failure", r.Status, r.Failure)
	}
}

// BenchmarkNewChecksReference measures each source, aliasing and
// cancellation check on the reference adapter, instances and cleanup
// included; each should stay well under 100 ms.
func BenchmarkNewChecksReference(b *testing.B) {
	f := reference.NewConformanceFactory()
	for _, id := range newChecks {
		c, _ := conformance.CheckByID(id)
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := c.Run(ctx, f); r.Status != conformance.StatusPass {
					b.Fatal(r.Failure)
				}
			}
		})
	}
}
