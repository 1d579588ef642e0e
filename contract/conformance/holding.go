package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// HoldingDifference names one way a runtime may hold a canonical history
// differently from the history it was given, by design: an instance
// reports the history it holds after seeding (Instance.Held), and the kit
// classifies every difference from the given history into this small,
// fixed vocabulary. The kit infers every holding difference from the held
// history (none is declared): each has an exact rule, checked on every
// message, and each one found is shown as a limit of the run, like a
// refused family. A difference outside the vocabulary — ids, order, roles,
// text and thinking content, tool call and result pairing, arguments,
// groups, the flags pinned, localOnly and synthetic, an empty string
// dropped, every other member a round trip keeps (SPEC §2) — fails the
// check.
//
// Each entry relaxes SPEC §2's rule that a message read back keeps every
// member as given ("nothing is lost in a round trip"), for exactly the
// members it names; a runtime that cannot hold a shape at all refuses its
// family instead (Unrepresentable).
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
	// reverse).
	HoldingProvenanceSource HoldingDifference = "provenance-source"
	// HoldingRuntimeIDDropped: provenance.runtimeId is not held on a
	// message held under the "pi-session" source, which needs none (SPEC
	// §7 checks runtimeId for "runtime-session" messages only).
	HoldingRuntimeIDDropped HoldingDifference = "runtime-id-dropped"
	// HoldingOriginalRoleRewritten: provenance.originalRole is held as the
	// runtime's own name for the role of the entry: non-blank, present on
	// every held message, and one name for every message of one held role.
	HoldingOriginalRoleRewritten HoldingDifference = "original-role-rewritten"
	// HoldingTokenEstimateDerived: tokenEstimate is the runtime's own
	// estimate: present on every held message, a whole number from 0 to
	// 2^53−1, whatever was given.
	HoldingTokenEstimateDerived HoldingDifference = "token-estimate-derived"
	// HoldingAtomicDerived: flags.atomic is derived from the message's
	// structure: present on every held message, true exactly when the
	// message holds a tool call or a tool result. An atomic flag that
	// contradicts the structure is no holding difference.
	HoldingAtomicDerived HoldingDifference = "atomic-derived"
	// HoldingCreatedAtAssigned: a message given without createdAt is held
	// with one, a time a clock holds (a whole millisecond within
	// ±gen.MaxDateMillis); every held message then has a createdAt.
	HoldingCreatedAtAssigned HoldingDifference = "created-at-assigned"
	// HoldingCreatedAtWholeMillis: a createdAt is held at a clock's
	// precision: the whole millisecond less than one millisecond from the
	// given value (3.5 held as 3 or 4). A runtime may hold some messages'
	// times so and others as given (Pi does so for its custom entries,
	// whose time is an ISO timestamp). A value beyond ±gen.MaxDateMillis
	// has no such millisecond: a runtime holding times on a clock refuses
	// gen.FamilyCreatedAtOutOfRange.
	HoldingCreatedAtWholeMillis HoldingDifference = "created-at-whole-ms"
	// HoldingAssistantModelFilled: an assistant message given without
	// provider or model is held with the instance's own (the fixture's
	// model: its provider and id), and every held assistant message has
	// both. A provider or model given, even an empty one, is kept.
	HoldingAssistantModelFilled HoldingDifference = "assistant-model-filled"
	// HoldingNonAssistantModelDropped: provider and model are not held on
	// messages whose role is not assistant, where the runtime's message
	// types have no such members; no held message of another role has
	// either.
	HoldingNonAssistantModelDropped HoldingDifference = "non-assistant-model-dropped"
)

var holdingDifferences = []HoldingDifference{HoldingUnknownMembersDropped, HoldingReferenceAsOpaque, HoldingToolTextAsCustom,
	HoldingProvenanceSource, HoldingRuntimeIDDropped, HoldingOriginalRoleRewritten, HoldingTokenEstimateDerived, HoldingAtomicDerived,
	HoldingCreatedAtAssigned, HoldingCreatedAtWholeMillis, HoldingAssistantModelFilled, HoldingNonAssistantModelDropped}

// HoldingDifferences returns the vocabulary of holding differences,
// always in the same order.
func HoldingDifferences() []HoldingDifference { return slices.Clone(holdingDifferences) }

// ruleHeld is the rule a held history keeps.
var ruleHeld = func() string {
	names := make([]string, len(holdingDifferences))
	for i, h := range holdingDifferences {
		names[i] = string(h)
	}
	return "the history an instance holds (Instance.Held) differs from the one it was given only in the holding differences of the vocabulary (" +
		strings.Join(names, ", ") + ")"
}()

// maxHeldFailures bounds how many differing messages a failure lists.
const maxHeldFailures = 3

// holdingJudge classifies, message by message, how a runtime holds a
// history: the holding differences it shows, and what those differences
// require of every other message the runtime holds.
type holdingJudge struct {
	model contract.ModelDescriptor // the instance's model
	found map[HoldingDifference]bool
	// roleNames is the originalRole held for each held role.
	roleNames map[contract.Role]string
}

func newHoldingJudge(model contract.ModelDescriptor) *holdingJudge {
	return &holdingJudge{model: model, found: map[HoldingDifference]bool{}, roleNames: map[contract.Role]string{}}
}

// differences returns the holding differences found, in vocabulary order.
func (j *holdingJudge) differences() []HoldingDifference {
	var out []HoldingDifference
	for _, h := range holdingDifferences {
		if j.found[h] {
			out = append(out, h)
		}
	}
	return out
}

// classifyHeld compares the history an instance holds with the one it was
// given. It returns the holding differences found, in vocabulary order —
// also when some message differs outside the vocabulary — the judge that
// keeps them, and then a broken rule listing every differing member of
// the first differing messages, as metadata.
func classifyHeld(model contract.ModelDescriptor, given, held []contract.Message) ([]HoldingDifference, *holdingJudge, error) {
	j := newHoldingJudge(model)
	if len(held) != len(given) {
		return nil, j, brokenKind("held message count", ruleHeld, fmt.Sprintf("%d messages held, one for each given", len(given)), fmt.Sprintf("%d messages held", len(held)))
	}
	var failures []string
	failedN := 0
	var kinds []string
	fail := func(what, ks string) {
		failedN++
		if len(failures) < maxHeldFailures {
			failures = append(failures, what)
		}
		for _, k := range strings.Split(ks, ", ") {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	bad := make([]bool, len(given))
	for i := range given {
		if what, k := j.message(i, &given[i], &held[i]); what != "" {
			bad[i] = true
			fail(what, prefixKinds("held ", k))
		}
	}
	// What the differences found require of every held message.
	for i := range held {
		if !bad[i] {
			if what, h := j.consistent(i, &held[i], held); what != "" {
				fail(what, "held otherwise than "+string(h)+" requires")
			}
		}
	}
	if failedN == 0 {
		if d := diffGroups(contract.BuildToolAtomicGroups(given), contract.BuildToolAtomicGroups(held)); d != "" {
			return j.differences(), j, brokenKind("held groups", ruleHeld, "the tool atomic groups of the given history", "the held history's groups: "+d)
		}
		return j.differences(), j, nil
	}
	actual := strings.Join(failures, "; ")
	if failedN > len(failures) {
		actual += fmt.Sprintf("; and %d more messages differ", failedN-len(failures))
	}
	if ds := j.differences(); len(ds) > 0 {
		actual += " (held differently otherwise: " + LimitNames(holdingLimits(ds)) + ")"
	}
	return j.differences(), j, brokenKind(strings.Join(kinds, ", "), ruleHeld, "every message held as given, up to the holding differences of the vocabulary", actual)
}

// message compares message i as given (g) and held (h): it applies to a
// copy of g every holding difference h shows by its rule, records each in
// j.found, and then requires the copy to equal h, wire JSON byte for byte.
// It returns "" or every member in which they differ, and the kind of
// the first difference.
func (j *holdingJudge) message(i int, g, h *contract.Message) (string, string) {
	at := fmt.Sprintf("message #%d (id %s)", i, q(g.ID))
	if h.ID != g.ID {
		return at + " held as " + q(h.ID) + ", not under its id in history order", "message id"
	}
	// The judge replaces members of n and blocks of its own slice, never
	// edits what they point to (a block losing its extra members is
	// cloned first): a shallow copy keeps g as given.
	n := *g
	n.Blocks = slices.Clone(g.Blocks)
	j.provenance(&n, h)
	if n.Role == contract.RoleTool && h.Role == contract.RoleCustom && !hasToolBlocks(&n) {
		n.Role = contract.RoleCustom
		j.found[HoldingToolTextAsCustom] = true
	}
	j.derived(&n, h)
	j.models(&n, h)
	j.unknownAndReferences(&n, h)
	want, err := contract.AppendMessageJSON(nil, &n)
	if err != nil {
		return at + ": the given message does not encode", "message without wire form"
	}
	got, err := contract.AppendMessageJSON(nil, h)
	if err != nil {
		return at + ": the held message does not encode: " + scrub(err.Error()), "message without wire form"
	}
	if bytes.Equal(want, got) {
		return "", ""
	}
	d, kind := diffWire(i, want, got)
	return strings.Replace(d, fmt.Sprintf("message #%d", i), at, 1), kind
}

// provenance applies provenance-source, runtime-id-dropped and
// original-role-rewritten.
func (j *holdingJudge) provenance(n, h *contract.Message) {
	if h.Provenance.Source != n.Provenance.Source && legalSource(n.Provenance.Source) && legalSource(h.Provenance.Source) {
		n.Provenance.Source = h.Provenance.Source
		j.found[HoldingProvenanceSource] = true
	}
	if n.Provenance.RuntimeID != nil && h.Provenance.RuntimeID == nil && h.Provenance.Source == contract.SourcePiSession {
		n.Provenance.RuntimeID = nil
		j.found[HoldingRuntimeIDDropped] = true
	}
	if !sameStr(n.Provenance.OriginalRole, h.Provenance.OriginalRole) && h.Provenance.OriginalRole != nil && !contract.IsBlank(*h.Provenance.OriginalRole) {
		n.Provenance.OriginalRole = h.Provenance.OriginalRole
		j.found[HoldingOriginalRoleRewritten] = true
	}
}

// derived applies token-estimate-derived, atomic-derived,
// created-at-assigned and created-at-whole-ms.
func (j *holdingJudge) derived(n, h *contract.Message) {
	if !sameNum(n.TokenEstimate, h.TokenEstimate) && h.TokenEstimate != nil && estimate(*h.TokenEstimate) {
		n.TokenEstimate = h.TokenEstimate
		j.found[HoldingTokenEstimateDerived] = true
	}
	if !sameBool(n.Flags.Atomic, h.Flags.Atomic) && h.Flags.Atomic != nil && *h.Flags.Atomic == hasToolBlocks(h) {
		n.Flags.Atomic = h.Flags.Atomic
		j.found[HoldingAtomicDerived] = true
	}
	switch {
	case n.CreatedAt == nil && h.CreatedAt != nil && clockTime(*h.CreatedAt):
		n.CreatedAt = h.CreatedAt
		j.found[HoldingCreatedAtAssigned] = true
	case n.CreatedAt != nil && h.CreatedAt != nil && *n.CreatedAt != *h.CreatedAt && clockTime(*h.CreatedAt) && math.Abs(*h.CreatedAt-*n.CreatedAt) < 1:
		n.CreatedAt = h.CreatedAt
		j.found[HoldingCreatedAtWholeMillis] = true
	}
}

// models applies assistant-model-filled and non-assistant-model-dropped.
func (j *holdingJudge) models(n, h *contract.Message) {
	if h.Role == contract.RoleAssistant && n.Role == contract.RoleAssistant {
		if n.Provider == nil && h.Provider != nil && *h.Provider == j.model.Provider {
			n.Provider = h.Provider
			j.found[HoldingAssistantModelFilled] = true
		}
		if n.Model == nil && h.Model != nil && *h.Model == j.model.ID {
			n.Model = h.Model
			j.found[HoldingAssistantModelFilled] = true
		}
		return
	}
	if h.Role != contract.RoleAssistant && n.Role != contract.RoleAssistant {
		if n.Provider != nil && h.Provider == nil {
			n.Provider = nil
			j.found[HoldingNonAssistantModelDropped] = true
		}
		if n.Model != nil && h.Model == nil {
			n.Model = nil
			j.found[HoldingNonAssistantModelDropped] = true
		}
	}
}

// unknownAndReferences applies unknown-members-dropped and
// reference-as-opaque.
func (j *holdingJudge) unknownAndReferences(n, h *contract.Message) {
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
					j.found[HoldingReferenceAsOpaque] = true
					continue
				}
			}
			if len(*blockExtraOf(b)) > 0 && len(*blockExtraOf(h.Blocks[k])) == 0 && h.Blocks[k].Type() == b.Type() {
				bare := contract.CloneBlock(b)
				*blockExtraOf(bare) = nil
				n.Blocks[k] = bare
				dropped = true
			}
		}
	}
	if dropped {
		j.found[HoldingUnknownMembersDropped] = true
	}
}

// consistent checks what the holding differences found require of the
// held message h (#i of held): each is a rule of the whole held history,
// so a runtime that shows one holds every message so. It returns "" or
// what h breaks, and the first holding difference whose requirement it
// breaks.
func (j *holdingJudge) consistent(i int, h *contract.Message, held []contract.Message) (string, HoldingDifference) {
	var broke []string
	if j.found[HoldingUnknownMembersDropped] && slices.Contains(gen.FamiliesOf(held[i:i+1]), gen.FamilyUnknownMembers) {
		broke = append(broke, string(HoldingUnknownMembersDropped)+": unknown members dropped elsewhere and kept here")
	}
	if j.found[HoldingOriginalRoleRewritten] {
		switch r := h.Provenance.OriginalRole; {
		case r == nil || contract.IsBlank(*r):
			broke = append(broke, string(HoldingOriginalRoleRewritten)+": provenance.originalRole absent or blank")
		case j.roleNames[h.Role] == "":
			j.roleNames[h.Role] = *r
		case j.roleNames[h.Role] != *r:
			broke = append(broke, string(HoldingOriginalRoleRewritten)+fmt.Sprintf(": role %s held with two originalRole names", q(string(h.Role))))
		}
	}
	if j.found[HoldingTokenEstimateDerived] && (h.TokenEstimate == nil || !estimate(*h.TokenEstimate)) {
		broke = append(broke, string(HoldingTokenEstimateDerived)+": tokenEstimate absent or not a whole number from 0")
	}
	if j.found[HoldingAtomicDerived] && (h.Flags.Atomic == nil || *h.Flags.Atomic != hasToolBlocks(h)) {
		broke = append(broke, string(HoldingAtomicDerived)+fmt.Sprintf(": flags.atomic absent or contradicting the message's structure (tool blocks: %t)", hasToolBlocks(h)))
	}
	if j.found[HoldingCreatedAtAssigned] && h.CreatedAt == nil {
		broke = append(broke, string(HoldingCreatedAtAssigned)+": createdAt absent")
	}
	if j.found[HoldingAssistantModelFilled] && h.Role == contract.RoleAssistant && (h.Provider == nil || h.Model == nil) {
		broke = append(broke, string(HoldingAssistantModelFilled)+": an assistant message without provider or model")
	}
	if j.found[HoldingNonAssistantModelDropped] && h.Role != contract.RoleAssistant && (h.Provider != nil || h.Model != nil) {
		broke = append(broke, string(HoldingNonAssistantModelDropped)+fmt.Sprintf(": a %s message with provider or model", q(string(h.Role))))
	}
	if len(broke) == 0 {
		return "", ""
	}
	return fmt.Sprintf("message #%d (id %s): %s", i, q(h.ID), strings.Join(broke, "; ")), HoldingDifference(strings.SplitN(broke[0], ":", 2)[0])
}

// estimate reports whether v is a token estimate a runtime derives: a
// whole number from 0 to 2^53−1.
func estimate(v float64) bool { return v >= 0 && v <= 1<<53-1 && v == math.Trunc(v) }

// clockTime reports whether v (ms since the epoch) is a time a clock
// holds: a whole millisecond within ±gen.MaxDateMillis.
func clockTime(v float64) bool { return math.Abs(v) <= gen.MaxDateMillis && v == math.Trunc(v) }

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
	// holding lists the holding differences the held history shows (also
	// when it differs outside the vocabulary).
	holding []HoldingDifference
	// heldErr is the broken rule of a held history differing outside the
	// vocabulary.
	heldErr error
	// judge keeps what the held history showed, for the messages appended
	// later (asHeld).
	judge *holdingJudge
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
	s.holding, s.judge, s.heldErr = classifyHeld(s.fixture.Model, s.fixture.Messages, h)
	s.fixture.Messages = contract.CloneMessages(h)
}

// judgeHeld counts the holding differences of the held history as limits
// — also when it differs outside the vocabulary, so that a failing verdict
// still shows them — and returns the broken rule of such a difference.
func (s *Session) judgeHeld() error {
	s.limits.addHolding(s.holding)
	return s.heldErr
}

// asHeld returns want with every message from index from on replaced by
// got's message at its index when the two differ only in holding
// differences and got keeps what those differences require: a message
// appended to the source is held as the runtime holds the rest of its
// history. A difference the held history did not show (it held nothing
// the difference changes, say no unknown member) is shown from then on, a
// limit like the others; a difference outside the vocabulary leaves want
// as it is, so the comparison fails.
func (s *Session) asHeld(want, got []contract.Message, from int) []contract.Message {
	if s.instance.Held == nil || s.heldErr != nil {
		return want
	}
	out := slices.Clone(want)
	for i := from; i < len(out) && i < len(got); i++ {
		before := s.judge.clone()
		if d, _ := s.judge.message(i, &out[i], &got[i]); d != "" {
			*s.judge = before
			continue
		}
		if d, _ := s.judge.consistent(i, &got[i], got); d != "" {
			*s.judge = before
			continue
		}
		var added []HoldingDifference
		for _, h := range s.judge.differences() {
			if !slices.Contains(s.holding, h) {
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

// clone returns a copy of j, to restore after a message that differs
// outside the vocabulary.
func (j *holdingJudge) clone() holdingJudge {
	return holdingJudge{model: j.model, found: maps.Clone(j.found), roleNames: maps.Clone(j.roleNames)}
}
