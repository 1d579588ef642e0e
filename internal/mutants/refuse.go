package mutants

import (
	"slices"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The refusal mutants: runtimes that cannot hold some histories. A runtime
// may refuse a generated history it cannot represent, within a bound; it
// must hold the conformance fixture.
var refusalCatalogue = []Mutant{
	{
		Name: "refuses-every-generated-history", Breaks: "a runtime holds most generated histories: it may refuse at most half",
		Fails: all(conformance.CheckProjection),
		wrap:  plain,
		before: func(setup *conformance.Setup) error {
			if slices.Equal(setup.Fixture.MessageIDs(), conformance.NewFixture().MessageIDs()) {
				return nil
			}
			return conformance.Unrepresentable("this runtime holds only the conformance fixture")
		},
	},
	{
		// Allowed: a runtime that cannot store a tool message carrying two
		// results refuses those histories, and the projection check counts
		// the refusals instead of failing.
		Name: "refuses-multi-result-tool-messages", Breaks: "nothing: refusing one shape of generated history is allowed",
		wrap: plain,
		before: func(setup *conformance.Setup) error {
			for _, m := range setup.Fixture.Messages {
				results := 0
				for _, b := range m.Blocks {
					if b.Type() == contract.BlockToolResult {
						results++
					}
				}
				if results > 1 {
					return conformance.Unrepresentable("tool message with two results")
				}
			}
			return nil
		},
	},
}
