package mutants_test

import (
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// TestEveryCheckHasAMutant requires every check of the catalogue to be
// failed by at least one mutant, and every check a mutant lists to exist:
// a check no mutant fails is not known to catch anything. The mutant runs
// prove that each mutant fails exactly the checks it lists.
func TestEveryCheckHasAMutant(t *testing.T) {
	names := map[string]bool{}
	for _, m := range mutants.Catalogue() {
		if names[m.Name] {
			t.Errorf("two mutants are named %s", m.Name)
		}
		names[m.Name] = true
		for _, id := range m.Fails {
			if _, ok := conformance.CheckByID(id); !ok {
				t.Errorf("%s lists %q, which is no check", m.Name, id)
			}
		}
	}
	for _, c := range conformance.Checks() {
		if !slices.ContainsFunc(mutants.Catalogue(), func(m mutants.Mutant) bool { return slices.Contains(m.Fails, c.ID) }) {
			t.Errorf("no mutant fails the check %s", c.ID)
		}
	}
}
