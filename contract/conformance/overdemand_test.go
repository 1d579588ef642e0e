package conformance_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// Adapters that differ from the reference only where SPEC allows pass the
// checks that touch what they do differently.

// shortDiagnostics keeps the newest 18 diagnostics: a bound SPEC allows
// ("bounded"), at which a run of alike fallbacks leaves the list looking
// unchanged.
type shortDiagnostics struct{ contract.Adapter }

func (a shortDiagnostics) Diagnostics() []contract.Diagnostic {
	ds := a.Adapter.Diagnostics()
	return ds[max(0, len(ds)-18):]
}

func TestASmallDiagnosticsBoundPassesInvalidRequests(t *testing.T) {
	t.Parallel()
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return shortDiagnostics{a} }, new(int))
	for _, id := range []string{conformance.CheckInvalidRequests, conformance.CheckFallbacks, conformance.CheckBoundedDiagnostics} {
		c, _ := conformance.CheckByID(id)
		if r := c.Run(ctx, f); r.Status != conformance.StatusPass {
			t.Errorf("%s: %s %+v", id, r.Status, r.Failure)
		}
	}
}

// notedBypass is an adapter other than the reference that records a
// diagnostic of its own when a local completion goes through the ordinary
// transport: SPEC's "without a diagnostic" is in the reference adapter's
// paragraph (§11).
type notedBypass struct {
	contract.Adapter
	mu    sync.Mutex
	extra []contract.Diagnostic
}

func (a *notedBypass) Identity() contract.Identity {
	id := a.Adapter.Identity()
	id.AdapterName = "another-kv-adapter"
	return id
}

func (a *notedBypass) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := a.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted && r.LocalKV == nil && r.Privacy.Destination == contract.DestinationLocal {
		a.mu.Lock()
		a.extra = append(a.extra, contract.Diagnostic{Code: "local-kv-bypassed", Severity: contract.SeverityInfo, Message: "Local KV reuse was bypassed"})
		a.mu.Unlock()
	}
	return r
}

func (a *notedBypass) Diagnostics() []contract.Diagnostic {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append(a.Adapter.Diagnostics(), a.extra...)
}

func TestAnotherAdapterMayNoteALocalKVBypass(t *testing.T) {
	t.Parallel()
	base := reference.NewConformanceFactory()
	f := conformance.NewFactory("noted-bypass", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		if err == nil {
			inst.Adapter = &notedBypass{Adapter: inst.Adapter}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckLocalKVIneligible)
	if r := c.Run(ctx, f); r.Status != conformance.StatusPass {
		t.Fatalf("%s: %s %+v", c.ID, r.Status, r.Failure)
	}
}
