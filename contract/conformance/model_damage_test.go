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

// The reference adapter and memadapter refuse to project a source broken
// every way their stores can be (the reference adapter recording §12's
// diagnostic for each), and give the history back once it is repaired.
func TestModelDamagesAndRepairsTheSource(t *testing.T) {
	t.Parallel()
	for _, kind := range conformance.DamageKinds() {
		if ran, err := conformance.ModelDamage(ctx, reference.NewConformanceFactory(), kind); err != nil || ran != 8 {
			t.Errorf("reference, %s: %d operations ran, %v", kind, ran, err)
		}
		// Its store has no header: it cannot name another runtime or
		// root, and the damage is skipped.
		want := 8
		if kind == conformance.DamageIdentity || kind == conformance.DamageRoot {
			want = 7
		}
		if ran, err := conformance.ModelDamage(ctx, memadapter.ConformanceFactory(), kind); err != nil || ran != want {
			t.Errorf("memadapter, %s: %d operations ran, want %d; %v", kind, ran, want, err)
		}
	}
}

// staleOnError answers a snapshot that fails with the last one that did
// not: a damaged source read as the history it held before.
type staleOnError struct {
	contract.Adapter
	last *contract.HistorySnapshot
}

func (a *staleOnError) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := a.Adapter.SnapshotHistory(ctx)
	switch {
	case err == nil:
		c := contract.CloneSnapshot(&s)
		a.last = &c
	case a.last != nil:
		return contract.CloneSnapshot(a.last), nil
	}
	return s, err
}

// quotingReads puts the history text a failed read saw into its error.
type quotingReads struct{ contract.Adapter }

func (a quotingReads) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := a.Adapter.SnapshotHistory(ctx)
	if err != nil {
		err = errorWith{err, "near: the damaged entry holds ds4-model-history-probe-9c1e"}
	}
	return s, err
}

type errorWith struct {
	error
	text string
}

func (e errorWith) Error() string { return e.error.Error() + " (" + e.text + ")" }

// An adapter that reads a damaged source as the history it held before, or
// whose read error quotes the damaged entry's text, fails.
func TestModelCatchesWhatADamagedSourceShows(t *testing.T) {
	t.Parallel()
	base := reference.NewConformanceFactory()
	wrap := func(w func(contract.Adapter) contract.Adapter) conformance.Factory {
		return conformance.NewFactory("wrapped reference", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
			inst, err := base.Create(ctx, setup)
			if err == nil {
				inst.Adapter = w(inst.Adapter)
			}
			return inst, err
		})
	}
	stale := wrap(func(a contract.Adapter) contract.Adapter { return &staleOnError{Adapter: a} })
	quote := wrap(func(a contract.Adapter) contract.Adapter { return quotingReads{a} })
	for _, kind := range conformance.DamageKinds() {
		if _, err := conformance.ModelDamage(ctx, stale, kind); !failsRule(err, "of a source SPEC rejects fails") {
			t.Errorf("stale on error, %s: %v", kind, err)
		}
		if _, err := conformance.ModelDamage(ctx, quote, kind); !failsRule(err, "never history text") {
			t.Errorf("quoting, %s: %v", kind, err)
		}
	}
}

// failsRule reports whether err is a failure of a rule holding rule.
func failsRule(err error, rule string) bool {
	var f *conformance.Failure
	return errors.As(err, &f) && strings.Contains(f.Rule, rule)
}
