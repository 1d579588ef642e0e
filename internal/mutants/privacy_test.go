package mutants_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// TestPrivacyProbesKillPrivacyMutantsForAnySeed runs the probe check on
// every mutant that privacy-probes must kill, for seeds 1 to 30: the
// mutant tests fix one seed, but the check must kill each mutant whatever
// the seed, with a failure that holds no fixed probe.
func TestPrivacyProbesKillPrivacyMutantsForAnySeed(t *testing.T) {
	check, ok := conformance.CheckByID(conformance.CheckPrivacyProbes)
	if !ok {
		t.Fatal("no privacy-probes check")
	}
	swept := 0
	for _, m := range mutants.Catalogue() {
		if !slices.Contains(m.Fails, conformance.CheckPrivacyProbes) || m.RunnerErr != nil {
			continue
		}
		swept++
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			f := m.Factory(base())
			for s := uint64(1); s <= 30; s++ {
				r := check.Run(context.Background(), f, conformance.WithSeed(s))
				if r.Passed() {
					t.Fatalf("seed %d: privacy-probes passed", s)
				}
				if b, _ := json.Marshal(r); conformance.ContainsProbe(b) {
					t.Fatalf("seed %d: the failure holds a probe", s)
				}
			}
		})
	}
	if swept == 0 {
		t.Fatal("no mutant lists privacy-probes")
	}
}
