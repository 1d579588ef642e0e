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

// entryLenient is a store that reads a record whose sourceEntryId is not
// its provenance's entryId, or whose entryId is blank, as if both were the
// message's id — as a runtime deriving one from the other would: the
// record SPEC §7 rejects is held as a valid message.
type entryLenient struct {
	conformance.Source
	breaker conformance.SourceBreaker
}

func (s entryLenient) Break(ctx context.Context, d conformance.Damage) error {
	if d.Kind == conformance.DamageRecord && d.Message != nil {
		m := contract.CloneMessage(d.Message)
		if m.SourceEntryID != m.Provenance.EntryID || contract.IsBlank(m.Provenance.EntryID) {
			m.SourceEntryID, m.Provenance.EntryID = m.ID, m.ID
		}
		d.Message = &m
	}
	return s.breaker.Break(ctx, d)
}

func (s entryLenient) Repair(ctx context.Context) error { return s.breaker.Repair(ctx) }

// Every run writes records whose entry ids break §7 (sourceEntryId other
// than the provenance's entryId, a blank entryId): a store that holds them
// as valid messages fails.
func TestModelWritesRecordsWithBrokenEntryIDs(t *testing.T) {
	t.Parallel()
	f := conformance.NewFactory("entry-lenient", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := memadapter.ConformanceFactory().Create(ctx, setup)
		if err == nil {
			inst.Source = entryLenient{Source: inst.Source, breaker: inst.Source.(conformance.SourceBreaker)}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, f, conformance.WithoutShrinking(), conformance.WithSeed(1))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "of a source SPEC rejects fails (§4, §7: record)") {
		t.Fatalf("%s %+v", r.Status, r.Failure)
	}
}
