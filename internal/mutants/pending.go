package mutants

import "slices"

// Pending returns the mutants no check catches yet, or not every check
// that should: each lists the checks that fail it today (Fails, exactly)
// and those that must fail it once they draw the input that shows its
// defect (Awaits), which pass it today. None is in Catalogue: a mutant
// moves there, with its docs row, once every check it awaits fails it
// (its Awaits move to Fails).
func Pending() []Mutant {
	return slices.DeleteFunc(roundTwo(), func(m Mutant) bool { return len(m.Awaits) == 0 })
}

// roundTwo returns the mutants of the families the model's drawing once
// missed (bounds, errors, concurrency, strings, sources, outputs, local
// KV): those the checks now catch (no Awaits left) are in Catalogue, the
// others in Pending.
func roundTwo() []Mutant {
	return slices.Concat(pendingBounds, pendingErrors, pendingConcurrency, pendingStrings, pendingSources, pendingOutputs, pendingLocalKV)
}
