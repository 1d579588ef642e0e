package mutants_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// pendingToRun returns the pending mutants TestPendingMutants runs: every
// one under everyFaceEnv=1, else the first of each family (each mutant's
// trigger runs whatever the sample).
func pendingToRun() []mutants.Mutant { return familySample(mutants.Pending()) }

// familySample returns all under everyFaceEnv=1, else the first of each
// family.
func familySample(all []mutants.Mutant) []mutants.Mutant {
	if os.Getenv(everyFaceEnv) == "1" {
		return all
	}
	var out []mutants.Mutant
	seen := map[string]bool{}
	for _, m := range all {
		if !seen[m.Family] {
			seen[m.Family] = true
			out = append(out, m)
		}
	}
	return out
}

// failedChecks returns the ids of the checks a run did not pass, sorted.
func failedChecks(r conformance.RunReport) []string {
	var ids []string
	for _, c := range r.Checks {
		if !c.Passed() {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestPendingMutants holds each pending mutant to what the kit sees of it
// today: the checks it lists in Fails fail it, and the checks it awaits
// pass it. When a check starts failing a mutant it awaits, this test fails
// until the check moves from Awaits to Fails (and, once it awaits nothing,
// the mutant moves to Catalogue with its row in docs/conformance.md). By
// default it runs those checks only, on the first mutant of each family,
// and the model check only where the mutant must fail it (awaiting the
// model, the costliest check, is watched under everyFaceEnv=1), so a
// mutant that fails no check and awaits only the model runs no check by
// default; under everyFaceEnv=1 it runs the whole catalogue on every
// pending mutant, and then requires exactly Fails to fail.
func TestPendingMutants(t *testing.T) {
	every := os.Getenv(everyFaceEnv) == "1"
	for _, m := range mutants.Pending() {
		switch {
		case m.Family == "":
			t.Errorf("%s names no family", m.Name)
		case len(m.Awaits) == 0:
			t.Errorf("%s awaits no check: it belongs in Catalogue", m.Name)
		case slices.ContainsFunc(m.Awaits, func(id string) bool { return slices.Contains(m.Fails, id) }):
			t.Errorf("%s lists a check both as failing it and as awaited", m.Name)
		}
		for _, id := range slices.Concat(m.Fails, m.Awaits) {
			if _, ok := conformance.CheckByID(id); !ok {
				t.Errorf("%s lists %q, which is no check", m.Name, id)
			}
		}
	}
	for _, m := range pendingToRun() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			opts := []conformance.Option{conformance.WithSeed(seed), conformance.WithoutShrinking()}
			ran := slices.Concat(m.Fails, m.Awaits)
			if !every {
				ran = slices.DeleteFunc(ran, func(id string) bool {
					return id == conformance.CheckModel && !slices.Contains(m.Fails, id)
				})
				if len(ran) == 0 {
					// WithChecks with no id would run the whole catalogue.
					t.Skipf("fails no check and awaits only the model, which %s=1 watches (its trigger runs in TestPendingAndLegalShowTheirDifference)", everyFaceEnv)
				}
				opts = append(opts, conformance.WithChecks(ran...))
			}
			failed := failedChecks(conformance.RunChecks(context.Background(), m.Factory(base()), opts...))
			for _, id := range m.Awaits {
				if m.ModelByChance && id == conformance.CheckModel {
					continue // caught in some runs only
				}
				if slices.Contains(failed, id) {
					t.Errorf("%s now fails it (breaks: %s): move %s from Awaits to Fails", id, m.Breaks, id)
				}
			}
			for _, id := range m.Fails {
				if !slices.Contains(failed, id) {
					t.Errorf("%s no longer fails it", id)
				}
			}
			if want := slices.Sorted(slices.Values(m.Fails)); every && !slices.Equal(byChance(m, failed), want) {
				t.Errorf("failed checks %q, want exactly %q", failed, want)
			}
		})
	}
}

// TestLegalVariantsPass runs the catalogue on the legal variants: no check
// may fail one but those it lists as over-demanding (OverDemands), and each
// of those must still fail it, so that the list shrinks as checks are
// mended. By default it runs every check but projection, which no variant
// touches, and the model, the costliest, on the first variant of each
// family; under everyFaceEnv=1 every check on every variant.
func TestLegalVariantsPass(t *testing.T) {
	var ids []string
	if !everyFace() {
		for _, c := range conformance.Checks() {
			if c.ID != conformance.CheckProjection && c.ID != conformance.CheckModel {
				ids = append(ids, c.ID)
			}
		}
	}
	for _, v := range mutants.LegalVariants() {
		if len(v.Fails) > 0 || len(v.Awaits) > 0 || v.Family == "" {
			t.Errorf("%s: a legal variant names its family and fails or awaits no check (its over-demands go in OverDemands)", v.Name)
		}
		for _, id := range v.OverDemands {
			if _, ok := conformance.CheckByID(id); !ok {
				t.Errorf("%s lists %q, which is no check", v.Name, id)
			}
		}
	}
	for _, v := range familySample(mutants.LegalVariants()) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			failed := failedChecks(conformance.RunChecks(context.Background(), v.Factory(base()), conformance.WithSeed(seed), conformance.WithChecks(ids...)))
			want := slices.Sorted(slices.Values(v.OverDemands))
			if ids != nil {
				want = slices.DeleteFunc(want, func(id string) bool { return !slices.Contains(ids, id) })
			}
			if !slices.Equal(failed, want) {
				t.Errorf("failed checks %q, over-demands listed %q: a check that fails a legal variant demands more than SPEC (%s)", failed, want, v.Breaks)
			}
		})
	}
}

// A mutant that must reach the reference factory's history file refuses a
// base factory whose instance has none, and shuts that instance down and
// cleans it up before it says so.
func TestMutantsNeedingTheHistoryFileCleanUpWithoutOne(t *testing.T) {
	var cleaned, shut bool
	noFile := conformance.NewFactory("no history file", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base().Create(ctx, setup)
		if err != nil {
			return inst, err
		}
		clean := inst.Cleanup
		inst.Cleanup = func(ctx context.Context) error { cleaned = true; return clean(ctx) }
		inst.Adapter = shutdownSeen{inst.Adapter, &shut}
		inst.Source = nil
		return inst, nil
	})
	for _, name := range []string{"accepts-duplicate-message-ids", "snapshots-another-runtimes-history"} {
		cleaned, shut = false, false
		m := byName(t, name)
		inst, err := m.Factory(noFile).Create(context.Background(), conformance.Setup{Fixture: conformance.NewFixture(), Transport: contract.TransportFunc(failing)})
		if err == nil || inst.Adapter != nil || !cleaned || !shut {
			t.Errorf("%s over a base without a history file: err %v, adapter %v, cleaned up %t, shut down %t; want an error after shutdown and cleanup", name, err, inst.Adapter, cleaned, shut)
		}
	}
}

type shutdownSeen struct {
	contract.Adapter
	shut *bool
}

func (s shutdownSeen) Shutdown(ctx context.Context) error {
	*s.shut = true
	return s.Adapter.Shutdown(ctx)
}

func byName(t *testing.T, name string) mutants.Mutant {
	t.Helper()
	for _, m := range slices.Concat(mutants.Catalogue(), mutants.Pending(), mutants.LegalVariants()) {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no mutant or variant %s", name)
	return mutants.Mutant{}
}
