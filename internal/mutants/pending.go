package mutants

import "slices"

// Pending returns the mutants no check catches yet, or not every check
// that should: each lists the checks that fail it today (Fails, exactly)
// and those that must fail it once they draw the input that shows its
// defect (Awaits), which pass it today. None is in Catalogue: a mutant
// moves there, with its docs row, once every check it awaits fails it.
func Pending() []Mutant {
	return slices.Concat(pendingBounds, pendingErrors, pendingConcurrency, pendingStrings, pendingSources, pendingOutputs, pendingLocalKV)
}
