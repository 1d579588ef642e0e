package mutants

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// The refusal and holding mutants: runtimes that cannot hold some
// histories, or hold them in their own form. A runtime may refuse a
// generated history for a family it holds, consistently, and may hold a
// history differently in the holding differences of the vocabulary; it
// must hold the conformance fixture. Each mutant hides a defect behind one
// of these allowances, or claims one it does not have.
var refusalCatalogue = []Mutant{
	{
		Name: "refuses-every-generated-history", Breaks: "a runtime holds most generated histories: it may refuse at most half",
		Fails: all(conformance.CheckProjection),
		wrap:  plain,
		before: refuseGenerated(func(ms []contract.Message, fams []gen.Family) error {
			for _, f := range fams {
				if f != gen.FamilyLongHistory {
					return conformance.Unrepresentable(f)
				}
			}
			return nil
		}),
	},
	{
		// Allowed: a runtime that cannot store a tool message carrying two
		// results refuses those histories, and the projection check counts
		// the refusals as a limit instead of failing.
		Name: "refuses-multi-result-tool-messages", Breaks: "nothing: refusing one family of generated history, consistently, is allowed",
		wrap: plain,
		before: refuseGenerated(func(_ []contract.Message, fams []gen.Family) error {
			if slices.Contains(fams, gen.FamilyMultiResult) {
				return conformance.Unrepresentable(gen.FamilyMultiResult, "tool message with two results")
			}
			return nil
		}),
	},
	{
		Name: "refuses-in-free-text", Breaks: "a refusal names the family the runtime cannot hold, not a free-text reason",
		Fails: all(conformance.CheckProjection),
		wrap:  plain,
		before: refuseGenerated(func(_ []contract.Message, fams []gen.Family) error {
			if slices.Contains(fams, gen.FamilyImage) {
				return fmt.Errorf("%w: timestamps out of order", conformance.ErrUnrepresentable)
			}
			return nil
		}),
	},
	{
		// Shows thinking as text, and refuses every history with thinking,
		// naming a family those histories often lack.
		Name: "refuses-thinking-as-parallel-batch", Breaks: "a refusal names a family the refused history holds",
		Fails: all(conformance.CheckProjection),
		wrap:  plain,
		before: refuseGenerated(func(_ []contract.Message, fams []gen.Family) error {
			if slices.Contains(fams, gen.FamilyThinking) {
				return conformance.Unrepresentable(gen.FamilyParallelBatch)
			}
			return nil
		}),
	},
	{
		// Orders the calls of a batch by bytes, and refuses exactly the
		// batches whose UTF-16 order differs: some parallel batches are
		// projected, others refused.
		Name: "refuses-parallel-batches-where-utf16-order-differs", Breaks: "a refused family is refused in every history holding it",
		Fails: all(conformance.CheckProjection),
		wrap:  plain,
		before: refuseGenerated(func(ms []contract.Message, fams []gen.Family) error {
			if slices.Contains(fams, gen.FamilyParallelBatch) && byteOrderDiffers(ms) {
				return conformance.Unrepresentable(gen.FamilyParallelBatch)
			}
			return nil
		}),
	},
	{
		// Cuts snapshots at 64 messages, and refuses every longer history
		// for its length.
		Name: "refuses-long-histories-at-64", Breaks: "long-history is no limit below 10,000 messages",
		// The model catches it when a sequence draws a history of 64
		// messages or more: in 7 of 10 seeds.
		Fails:         all(conformance.CheckProjection),
		ModelByChance: true,
		wrap:          plain,
		before: refuseGenerated(func(ms []contract.Message, _ []gen.Family) error {
			if len(ms) >= 64 {
				return conformance.Unrepresentable(gen.FamilyLongHistory, "more than 64 messages")
			}
			return nil
		}),
	},
	{
		// Refuses multi-result only beside other families, so that every
		// drawn history holding it is refused, but a history holding it
		// alone is projected.
		Name: "refuses-multi-result-beside-other-families", Breaks: "a refused family is refused in histories holding it alone",
		Fails: all(conformance.CheckProjection),
		wrap:  plain,
		before: refuseGenerated(func(_ []contract.Message, fams []gen.Family) error {
			if slices.Contains(fams, gen.FamilyMultiResult) && len(fams) > 1 {
				return conformance.Unrepresentable(gen.FamilyMultiResult)
			}
			return nil
		}),
	},
	{
		Name: "declares-long-history", Breaks: "long-history cannot be declared a limit",
		Fails:  all(conformance.CheckProjection, conformance.CheckModel),
		wrap:   plain,
		limits: []gen.Family{gen.FamilyLongHistory},
	},
	{
		// Allowed: a runtime holding histories as DS4's Pi runtime does
		// (every measured row of pi.md, its converter's slips excluded)
		// reports the history it holds and refuses the families it
		// cannot hold, and passes with those limits.
		Name: "holds-histories-like-pi", Breaks: "nothing: the holding differences of the vocabulary and consistent refusals are allowed",
		wrap: plain, holds: true,
		before: holdLikePi(false),
	},
	{
		// Pi's converter as it is: empty strings dropped and the flags
		// pinned, localOnly and synthetic lost. The fixture has neither,
		// so only generated histories show them.
		Name: "holds-histories-like-pi-with-slips", Breaks: "a held history keeps an empty string and the flags pinned, localOnly and synthetic",
		Fails: all(conformance.CheckProjection),
		wrap:  plain, holds: true,
		before: holdLikePi(true),
	},
	{
		// Upper-cases text and drops unknown members, reporting the held
		// history as if dropping them were all it did.
		Name: "holds-text-upper-cased-as-unknown-members-dropped", Breaks: "a held history differs from the given one only in the holding differences",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckModel),
		wrap:  plain, holds: true,
		before: func(setup *conformance.Setup) error {
			for i := range setup.Fixture.Messages {
				m := &setup.Fixture.Messages[i]
				DropUnknown(m)
				for k, b := range m.Blocks {
					if t, ok := b.(*contract.TextBlock); ok {
						m.Blocks[k] = &contract.TextBlock{Text: strings.ToUpper(t.Text)}
					}
				}
			}
			return nil
		},
	},
	{
		// Trims tool results, reporting the held history with a legal
		// provenance source of its own besides.
		Name: "holds-tool-results-trimmed-as-provenance-source", Breaks: "a held history keeps tool results as given",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckModel),
		wrap:  plain, holds: true,
		before: func(setup *conformance.Setup) error {
			for i := range setup.Fixture.Messages {
				m := &setup.Fixture.Messages[i]
				m.Provenance.Source = contract.SourcePiSession
				for k, b := range m.Blocks {
					if r, ok := b.(*contract.ToolResultBlock); ok && len(r.Content) > 1 {
						m.Blocks[k] = &contract.ToolResultBlock{ToolCallID: r.ToolCallID, ToolName: r.ToolName, Content: r.Content[:len(r.Content)-1], IsError: r.IsError, Extra: r.Extra}
					}
				}
			}
			return nil
		},
	},
}

// refuseGenerated returns a before hook refusing, by refuse, the generated
// histories (every history but the conformance fixture's).
func refuseGenerated(refuse func(ms []contract.Message, fams []gen.Family) error) func(*conformance.Setup) error {
	fixture := conformance.NewFixture().MessageIDs()
	return func(setup *conformance.Setup) error {
		if slices.Equal(setup.Fixture.MessageIDs(), fixture) {
			return nil
		}
		return refuse(setup.Fixture.Messages, gen.FamiliesOf(setup.Fixture.Messages))
	}
}

// byteOrderDiffers reports whether a message of ms holds tool calls whose
// ids sort differently by bytes and in UTF-16 order.
func byteOrderDiffers(ms []contract.Message) bool {
	for _, m := range ms {
		var ids []string
		for _, b := range m.Blocks {
			if c, ok := b.(*contract.ToolCallBlock); ok {
				ids = append(ids, c.ID)
			}
		}
		byBytes := slices.Sorted(slices.Values(ids))
		byUTF16 := slices.SortedFunc(slices.Values(ids), func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		if !slices.Equal(byBytes, byUTF16) {
			return true
		}
	}
	return false
}

// holdLikePi returns a before hook holding the setup's history as Pi
// does (HoldLikePi), or refusing it.
func holdLikePi(slips bool) func(*conformance.Setup) error {
	return func(setup *conformance.Setup) error {
		msgs, err := HoldLikePi(setup.Fixture.Model, setup.Fixture.Messages, slips)
		if err != nil {
			return err
		}
		setup.Fixture.Messages = msgs
		return nil
	}
}

// DropUnknown removes every unknown member of m, as a runtime with
// nowhere to keep them holds a message (tests of holding differences use
// it too).
func DropUnknown(m *contract.Message) {
	m.Extra, m.Provenance.Extra, m.Flags.Extra = nil, nil, nil
	for k, b := range m.Blocks {
		b = contract.CloneBlock(b)
		switch b := b.(type) {
		case *contract.TextBlock:
			b.Extra = nil
		case *contract.ThinkingBlock:
			b.Extra = nil
		case *contract.ToolCallBlock:
			b.Extra = nil
		case *contract.ToolResultBlock:
			b.Extra = nil
		case *contract.ImageBlock:
			b.Extra = nil
		case *contract.FileReferenceBlock:
			b.Extra = nil
		case *contract.ArtifactReferenceBlock:
			b.Extra = nil
		case *contract.SummaryReferenceBlock:
			b.Extra = nil
		case *contract.OpaqueProviderBlock:
			b.Extra = nil
		}
		m.Blocks[k] = b
	}
}
