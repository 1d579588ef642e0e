package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// HoldingDifference names one way a runtime may hold a canonical history
// differently from the history it was given, by design: an instance
// reports the history it holds after seeding (Instance.Held), and the kit
// classifies every difference from the given history into this small,
// fixed vocabulary. Each holding difference found is shown as a limit of
// the run, like a refused family. A difference outside the vocabulary —
// ids, order, roles, text and thinking content, tool call and result
// pairing, arguments, groups, createdAt, every other member a round trip
// keeps (SPEC §2) — fails the check.
type HoldingDifference string

// The holding differences, in the order HoldingDifferences lists them.
const (
	// HoldingUnknownMembersDropped: no unknown member (Extra) of any
	// message, provenance, flags or block is held; the rule that unknown
	// members survive a round trip verbatim is relaxed. Dropping some of
	// them and keeping others is no holding difference.
	HoldingUnknownMembersDropped HoldingDifference = "unknown-members-dropped"
	// HoldingReferenceAsOpaque: a fileReference, artifactReference or
	// summaryReference block is held as an opaqueProvider block whose
	// originalType is the reference's type and whose value is the
	// reference block's wire JSON, every member of it; the rule that a
	// block keeps its type is relaxed.
	HoldingReferenceAsOpaque HoldingDifference = "reference-as-opaque"
	// HoldingToolTextAsCustom: a tool-role message holding neither tool
	// calls nor tool results is held with the role custom; the rule that a
	// message keeps its role is relaxed for that message only.
	HoldingToolTextAsCustom HoldingDifference = "tool-text-as-custom"
	// HoldingProvenanceSource: a message's provenance source is held as
	// the other legal source ("pi-session" for "runtime-session" or the
	// reverse); every other provenance member is kept.
	HoldingProvenanceSource HoldingDifference = "provenance-source"
)

var holdingDifferences = []HoldingDifference{HoldingUnknownMembersDropped, HoldingReferenceAsOpaque, HoldingToolTextAsCustom, HoldingProvenanceSource}

// HoldingDifferences returns the vocabulary of holding differences,
// always in the same order.
func HoldingDifferences() []HoldingDifference { return slices.Clone(holdingDifferences) }

// ruleHeld is the rule a held history keeps.
const ruleHeld = "the history an instance holds (Instance.Held) differs from the one it was given only in the holding differences of the vocabulary (unknown-members-dropped, reference-as-opaque, tool-text-as-custom, provenance-source)"

// classifyHeld compares the history an instance holds with the one it was
// given and returns the holding differences found, in vocabulary order,
// or a broken rule naming the first difference outside the vocabulary, as
// metadata.
func classifyHeld(given, held []contract.Message) ([]HoldingDifference, error) {
	if len(held) != len(given) {
		return nil, broken(ruleHeld, fmt.Sprintf("%d messages held, one for each given", len(given)), fmt.Sprintf("%d messages held", len(held)))
	}
	found := map[HoldingDifference]bool{}
	for i := range given {
		if err := classifyMessage(i, &given[i], &held[i], found); err != nil {
			return nil, err
		}
	}
	if found[HoldingUnknownMembersDropped] && slices.Contains(gen.FamiliesOf(held), gen.FamilyUnknownMembers) {
		return nil, broken(ruleHeld, "unknown members held everywhere as given, or nowhere", "unknown members dropped in some places and kept in others")
	}
	if d := diffGroups(contract.BuildToolAtomicGroups(given), contract.BuildToolAtomicGroups(held)); d != "" {
		return nil, broken(ruleHeld, "the tool atomic groups of the given history", "the held history's groups: "+d)
	}
	var out []HoldingDifference
	for _, h := range holdingDifferences {
		if found[h] {
			out = append(out, h)
		}
	}
	return out, nil
}

// classifyMessage compares message i as given (g) and held (h): it applies
// to a copy of g every holding difference h shows, records it in found,
// and then requires the copy to equal h, wire JSON byte for byte.
func classifyMessage(i int, g, h *contract.Message, found map[HoldingDifference]bool) error {
	at := fmt.Sprintf("message #%d (id %s)", i, q(g.ID))
	if h.ID != g.ID {
		return broken(ruleHeld, at+" held under its id, in history order", "message #"+fmt.Sprint(i)+" held as "+q(h.ID))
	}
	n := contract.CloneMessage(g)
	if h.Provenance.Source != n.Provenance.Source && legalSource(n.Provenance.Source) && legalSource(h.Provenance.Source) {
		n.Provenance.Source = h.Provenance.Source
		found[HoldingProvenanceSource] = true
	}
	if n.Role == contract.RoleTool && h.Role == contract.RoleCustom && !hasToolBlocks(&n) {
		n.Role = contract.RoleCustom
		found[HoldingToolTextAsCustom] = true
	}
	dropped := false
	drop := func(extra *[]contract.Field, heldExtra []contract.Field) {
		if len(*extra) > 0 && len(heldExtra) == 0 {
			*extra = nil
			dropped = true
		}
	}
	drop(&n.Extra, h.Extra)
	drop(&n.Provenance.Extra, h.Provenance.Extra)
	drop(&n.Flags.Extra, h.Flags.Extra)
	if len(n.Blocks) == len(h.Blocks) {
		for k, b := range n.Blocks {
			if b == nil || h.Blocks[k] == nil {
				continue
			}
			if ob, ok := h.Blocks[k].(*contract.OpaqueProviderBlock); ok && isReference(b) {
				if opaqueHolds(b, ob, &dropped) {
					n.Blocks[k] = h.Blocks[k]
					found[HoldingReferenceAsOpaque] = true
					continue
				}
			}
			if e := blockExtraOf(b); len(*e) > 0 && len(*blockExtraOf(h.Blocks[k])) == 0 && h.Blocks[k].Type() == b.Type() {
				*e = nil
				dropped = true
			}
		}
	}
	if dropped {
		found[HoldingUnknownMembersDropped] = true
	}
	want, err := contract.AppendMessageJSON(nil, &n)
	if err != nil {
		return broken(ruleHeld, at+" encodable as wire JSON", "the given message does not encode")
	}
	got, err := contract.AppendMessageJSON(nil, h)
	if err != nil {
		return broken(ruleHeld, at+" held as a message encodable as wire JSON", "the held message does not encode: "+scrub(err.Error()))
	}
	if bytes.Equal(want, got) {
		return nil
	}
	return broken(ruleHeld, at+" held as given, up to the holding differences of the vocabulary", at+": "+heldMember(&n, h))
}

// heldMember names the first member in which the held message h differs
// from n, the given message with the holding differences applied.
func heldMember(n, h *contract.Message) string {
	enc := func(m contract.Message) string {
		b, _ := contract.AppendMessageJSON(nil, &m)
		return string(b)
	}
	switch {
	case n.Role != h.Role:
		return fmt.Sprintf("role %s given, %s held", q(string(n.Role)), q(string(h.Role)))
	case n.SourceEntryID != h.SourceEntryID:
		return "sourceEntryId differs"
	case !reflect.DeepEqual(n.Provenance, h.Provenance):
		return "provenance differs (" + provenanceMember(&n.Provenance, &h.Provenance) + ")"
	case !reflect.DeepEqual(n.CreatedAt, h.CreatedAt):
		return "createdAt differs"
	case !reflect.DeepEqual(n.Flags, h.Flags):
		return "flags differ"
	case len(n.Blocks) != len(h.Blocks):
		return fmt.Sprintf("%d blocks given, %d held", len(n.Blocks), len(h.Blocks))
	}
	for k := range n.Blocks {
		if n.Blocks[k] == nil || h.Blocks[k] == nil {
			return fmt.Sprintf("block #%d is missing", k)
		}
		nb, hb := contract.Message{Blocks: n.Blocks[k : k+1]}, contract.Message{Blocks: h.Blocks[k : k+1]}
		if enc(nb) != enc(hb) {
			if n.Blocks[k].Type() != h.Blocks[k].Type() {
				return fmt.Sprintf("block #%d: type %s given, %s held", k, n.Blocks[k].Type(), h.Blocks[k].Type())
			}
			return fmt.Sprintf("block #%d (%s): content differs", k, n.Blocks[k].Type())
		}
	}
	return "other members differ (provider, model, tokenEstimate or unknown members)"
}

func provenanceMember(n, h *contract.Provenance) string {
	switch {
	case n.Source != h.Source:
		return fmt.Sprintf("source %s held", q(string(h.Source)))
	case n.SessionID != h.SessionID:
		return "sessionId"
	case n.EntryID != h.EntryID:
		return "entryId"
	case !reflect.DeepEqual(n.OriginalRole, h.OriginalRole):
		return "originalRole"
	case !reflect.DeepEqual(n.RuntimeID, h.RuntimeID):
		return "runtimeId"
	}
	return "unknown members"
}

func legalSource(s contract.Source) bool {
	return s == contract.SourcePiSession || s == contract.SourceRuntimeSession
}

func hasToolBlocks(m *contract.Message) bool {
	return slices.ContainsFunc(m.Blocks, func(b contract.Block) bool {
		if b == nil {
			return false
		}
		t := b.Type()
		return t == contract.BlockToolCall || t == contract.BlockToolResult
	})
}

func isReference(b contract.Block) bool {
	switch b.Type() {
	case contract.BlockFileReference, contract.BlockArtifactReference, contract.BlockSummaryReference:
		return true
	}
	return false
}

// opaqueHolds reports whether the opaque block o holds the reference block
// b: its originalType is b's type, it has no unknown members of its own,
// and its value is b's wire JSON — with b's unknown members, or without
// them (then *dropped is set).
func opaqueHolds(b contract.Block, o *contract.OpaqueProviderBlock, dropped *bool) bool {
	if o.OriginalType == nil || *o.OriginalType != string(b.Type()) || len(o.Extra) > 0 {
		return false
	}
	var value any
	if json.Unmarshal(o.Value, &value) != nil {
		return false
	}
	if reflect.DeepEqual(value, blockValue(b)) {
		return true
	}
	bare := contract.CloneBlock(b)
	*blockExtraOf(bare) = nil
	if len(*blockExtraOf(b)) > 0 && reflect.DeepEqual(value, blockValue(bare)) {
		*dropped = true
		return true
	}
	return false
}

// blockValue is b's wire JSON, decoded as a generic value.
func blockValue(b contract.Block) any {
	enc, err := contract.AppendMessageJSON(nil, &contract.Message{Blocks: []contract.Block{b}})
	if err != nil {
		return nil
	}
	var m struct {
		Blocks []any `json:"blocks"`
	}
	if json.Unmarshal(enc, &m) != nil || len(m.Blocks) != 1 {
		return nil
	}
	return m.Blocks[0]
}

// blockExtraOf points at a block's unknown members.
func blockExtraOf(b contract.Block) *[]contract.Field {
	switch b := b.(type) {
	case *contract.TextBlock:
		return &b.Extra
	case *contract.ThinkingBlock:
		return &b.Extra
	case *contract.ToolCallBlock:
		return &b.Extra
	case *contract.ToolResultBlock:
		return &b.Extra
	case *contract.ImageBlock:
		return &b.Extra
	case *contract.FileReferenceBlock:
		return &b.Extra
	case *contract.ArtifactReferenceBlock:
		return &b.Extra
	case *contract.SummaryReferenceBlock:
		return &b.Extra
	case *contract.OpaqueProviderBlock:
		return &b.Extra
	}
	return new([]contract.Field)
}

// held is what a Session knows of its instance's held history.
type held struct {
	// holding lists the holding differences the held history shows.
	holding []HoldingDifference
	// heldErr is the broken rule of a held history differing outside the
	// vocabulary.
	heldErr error
	// limits, when set, collects the limits the session's checks find.
	limits *limitSet
}

// hold takes the history the instance reports it holds: the checks
// compare snapshots with it from now on, and canonical-history and
// projection judge its differences from the history given.
func (s *Session) hold(h []contract.Message) {
	if h == nil {
		return
	}
	s.holding, s.heldErr = classifyHeld(s.fixture.Messages, h)
	s.fixture.Messages = contract.CloneMessages(h)
}

// judgeHeld returns the broken rule of a held history differing outside
// the vocabulary, and otherwise counts its holding differences as limits.
func (s *Session) judgeHeld() error {
	if s.heldErr != nil {
		return s.heldErr
	}
	s.limits.addHolding(s.holding)
	return nil
}

// asHeld returns want with every message from index from on replaced by
// got's message at its index when the two differ only in holding
// differences: a message appended to the source is held as the runtime
// holds the rest of its history. A difference the held history did not
// show (it held nothing the difference changes, say no unknown member) is
// shown from then on, a limit like the others; a difference outside the
// vocabulary leaves want as it is, so the comparison fails.
func (s *Session) asHeld(want, got []contract.Message, from int) []contract.Message {
	if s.instance.Held == nil || s.heldErr != nil {
		return want
	}
	out := slices.Clone(want)
	for i := from; i < len(out) && i < len(got); i++ {
		found := map[HoldingDifference]bool{}
		if classifyMessage(i, &out[i], &got[i], found) != nil {
			continue
		}
		if found[HoldingUnknownMembersDropped] && slices.Contains(gen.FamiliesOf(got), gen.FamilyUnknownMembers) {
			continue // dropped here, kept elsewhere: no holding difference
		}
		var added []HoldingDifference
		for _, h := range holdingDifferences {
			if found[h] && !slices.Contains(s.holding, h) {
				added = append(added, h)
			}
		}
		if len(added) > 0 {
			s.holding = append(s.holding, added...)
			s.limits.addHolding(added)
		}
		out[i] = got[i]
	}
	return out
}
