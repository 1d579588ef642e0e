package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract/gen"
)

// Limit is one limit of a run, part of its verdict: a family of history
// shapes the runtime refused or declared it cannot hold, or the run left
// out, a holding difference its held histories show, or a rule of the Go
// kit stricter than SPEC's shared contract that the adapter's enforcement
// leaves out as the TypeScript kit's does (LimitMemberNameFloor). A run
// with limits passes — "PASS with limits: multi-result, image" — unless a
// limit's family is required (WithRequiredFamilies); WithStrictPrivacy
// makes the privacy checks fail instead of showing LimitMemberNameFloor.
type Limit struct {
	// Family is the refused or declared family; empty for another limit.
	Family gen.Family `json:"family,omitempty"`
	// Holding is the holding difference; empty for another limit.
	Holding HoldingDifference `json:"holding,omitempty"`
	// Deviation names the Go kit's stricter rule the adapter leaves out
	// (LimitMemberNameFloor); empty for another limit.
	Deviation string `json:"deviation,omitempty"`
	// Count is how many histories were refused for the family or held
	// with the difference (0 for a declared family, of which nothing was
	// drawn), or, for a deviation, how many payloads the adapter enforced
	// without the rule where the rule changes the result.
	Count int `json:"count"`
	// Reason says how the limit arose: "refused" (with the first
	// refusal's detail words), "declared by the instance", "left out of
	// the run (WithoutFamilies)", "held: …", or what the deviation means.
	Reason string `json:"reason"`
}

// LimitMemberNameFloor is the deviation of an adapter whose privacy
// enforcement equals the Go kit's engine except for one rule SPEC §8
// marks "Go kit only": a member name holding an opening marker outside a
// closed pair raises the marker-structure floor. The TypeScript kit's
// engine counts string values only, so an adapter built on it sends such a
// name, and the rest of its payload, as the contract's shared rules do.
const LimitMemberNameFloor = "member-name-floor"

// deviationReason says what each deviation means, in a limit.
var deviationReason = map[string]string{
	LimitMemberNameFloor: "the marker floor counts string values only, as the TypeScript kit's engine does: a member name with an opening marker outside a closed pair does not raise it (SPEC §8, Go kit only; WithStrictPrivacy, --strict-privacy, demands it)",
}

// Name is the limit's family, holding difference or deviation.
func (l Limit) Name() string {
	switch {
	case l.Family != "":
		return string(l.Family)
	case l.Holding != "":
		return string(l.Holding)
	}
	return l.Deviation
}

// Detail says what the limit counts and why, as the faces of the
// catalogue show it after its name: "12 histories, refused: …", "3
// payloads, the marker floor …", "declared by the instance" (nothing of a
// declared or left-out family is drawn, so nothing is counted).
func (l Limit) Detail() string {
	one, many := "history", "histories"
	if l.Deviation != "" {
		one, many = "payload", "payloads"
	}
	switch l.Count {
	case 0:
		return l.Reason
	case 1:
		return "1 " + one + ", " + l.Reason
	}
	return fmt.Sprintf("%d %s, %s", l.Count, many, l.Reason)
}

// same reports whether l and o are limits of the same name.
func (l Limit) same(o Limit) bool {
	return l.Family == o.Family && l.Holding == o.Holding && l.Deviation == o.Deviation
}

// String is the limit as the faces show it: its name and Detail,
// "multi-result — 47 histories, refused: …".
func (l Limit) String() string { return l.Name() + " — " + l.Detail() }

// LimitNames returns the names of limits, in order, joined by ", ".
func LimitNames(limits []Limit) string {
	names := make([]string, len(limits))
	for i, l := range limits {
		names[i] = l.Name()
	}
	return strings.Join(names, ", ")
}

// limitRank orders limits: families in the order of gen.Families, then
// holding differences in the order of HoldingDifferences, then deviations.
func limitRank(l Limit) int {
	switch {
	case l.Family != "":
		return slices.Index(gen.Families(), l.Family)
	case l.Holding != "":
		return len(gen.Families()) + slices.Index(holdingDifferences, l.Holding)
	}
	return len(gen.Families()) + len(holdingDifferences)
}

// limitSet collects the limits of a check.
type limitSet struct{ limits []Limit }

// add counts n more histories of the limit l (merged with an earlier one
// of the same name, keeping its reason).
func (s *limitSet) add(l Limit) {
	if s == nil {
		return
	}
	for i := range s.limits {
		if s.limits[i].same(l) {
			s.limits[i].Count += l.Count
			return
		}
	}
	s.limits = append(s.limits, l)
}

// addHolding counts one history held with each of the differences hs.
func (s *limitSet) addHolding(hs []HoldingDifference) {
	for _, h := range hs {
		s.add(Limit{Holding: h, Count: 1, Reason: "held: " + holdingReason[h]})
	}
}

// holdingReason says what each holding difference means, in a limit.
var holdingReason = map[HoldingDifference]string{
	HoldingUnknownMembersDropped:    "unknown members are not kept",
	HoldingReferenceAsOpaque:        "reference blocks are kept as opaque provider data",
	HoldingToolTextAsCustom:         "tool-role text messages are kept with the role custom",
	HoldingProvenanceSource:         "the provenance source is the runtime's own legal one",
	HoldingRuntimeIDDropped:         "provenance.runtimeId is not kept on pi-session messages",
	HoldingOriginalRoleRewritten:    "provenance.originalRole is the runtime's own role name",
	HoldingTokenEstimateDerived:     "tokenEstimate is the runtime's own estimate",
	HoldingAtomicDerived:            "flags.atomic is derived from the message's tool blocks",
	HoldingCreatedAtAssigned:        "a message without createdAt is given the time of its entry",
	HoldingCreatedAtWholeMillis:     "createdAt is kept in whole milliseconds",
	HoldingAssistantModelFilled:     "an assistant message without provider or model gets the instance's",
	HoldingNonAssistantModelDropped: "provider and model are kept on assistant messages only",
}

// addDeviation counts n more payloads enforced without the rule of the
// deviation d.
func (s *limitSet) addDeviation(d string, n int) {
	if n > 0 {
		s.add(Limit{Deviation: d, Count: n, Reason: deviationReason[d]})
	}
}

// holdingLimits returns the holding differences hs as limits, for their
// names.
func holdingLimits(hs []HoldingDifference) []Limit {
	out := make([]Limit, len(hs))
	for i, h := range hs {
		out[i] = Limit{Holding: h}
	}
	return out
}

// list returns the limits in rank order.
func (s *limitSet) list() []Limit {
	if s == nil || len(s.limits) == 0 {
		return nil
	}
	out := slices.Clone(s.limits)
	slices.SortStableFunc(out, func(a, b Limit) int { return limitRank(a) - limitRank(b) })
	return out
}

// mergeLimits merges the limits of several checks: one entry per name,
// with the largest count any check reports (checks starting from the same
// fixture each see its holding differences once).
func mergeLimits(all ...[]Limit) []Limit {
	var s limitSet
	for _, ls := range all {
		for _, l := range ls {
			i := slices.IndexFunc(s.limits, l.same)
			switch {
			case i < 0:
				s.limits = append(s.limits, l)
			case l.Count > s.limits[i].Count:
				s.limits[i] = l
			}
		}
	}
	return s.list()
}

// requiredLimit returns a broken rule when one of limits is of a family
// in required.
func requiredLimit(limits []Limit, required []gen.Family) error {
	for _, l := range limits {
		if l.Family != "" && slices.Contains(required, l.Family) {
			return broken(ruleRefusalRequired, fmt.Sprintf("every history of %s held (it is required)", l.Family),
				fmt.Sprintf("%s is a limit: %s, %d histories", l.Family, l.Reason, l.Count))
		}
	}
	return nil
}
