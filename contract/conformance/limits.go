package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract/gen"
)

// Limit is one limit of a run, part of its verdict: a family of history
// shapes the runtime refused or declared it cannot hold, or the run left
// out, or a holding difference its held histories show. A run with limits passes — "PASS
// with limits: multi-result, image" — unless a limit's family is required
// (WithRequiredFamilies).
type Limit struct {
	// Family is the refused or declared family; empty for a holding
	// difference.
	Family gen.Family `json:"family,omitempty"`
	// Holding is the holding difference; empty for a family.
	Holding HoldingDifference `json:"holding,omitempty"`
	// Count is how many histories were refused for the family or held
	// with the difference (0 for a declared family, of which nothing was
	// drawn).
	Count int `json:"count"`
	// Reason says how the limit arose: "refused" (with the first
	// refusal's detail words), "declared by the instance", "left out of
	// the run (WithoutFamilies)", "held: …".
	Reason string `json:"reason"`
}

// Name is the limit's family or holding difference.
func (l Limit) Name() string {
	if l.Family != "" {
		return string(l.Family)
	}
	return string(l.Holding)
}

// String is the limit as the faces show it: "multi-result — 47 histories,
// refused: …", "image — declared by the instance" (nothing of a declared or
// left-out family is drawn, so nothing is counted).
func (l Limit) String() string {
	switch l.Count {
	case 0:
		return l.Name() + " — " + l.Reason
	case 1:
		return l.Name() + " — 1 history, " + l.Reason
	}
	return fmt.Sprintf("%s — %d histories, %s", l.Name(), l.Count, l.Reason)
}

// LimitNames returns the names of limits, in order, joined by ", ".
func LimitNames(limits []Limit) string {
	names := make([]string, len(limits))
	for i, l := range limits {
		names[i] = l.Name()
	}
	return strings.Join(names, ", ")
}

// limitRank orders limits: families in the order of gen.Families, then
// holding differences in the order of HoldingDifferences.
func limitRank(l Limit) int {
	if l.Family != "" {
		return slices.Index(gen.Families(), l.Family)
	}
	return len(gen.Families()) + slices.Index(holdingDifferences, l.Holding)
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
		if s.limits[i].Family == l.Family && s.limits[i].Holding == l.Holding {
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
			i := slices.IndexFunc(s.limits, func(x Limit) bool { return x.Family == l.Family && x.Holding == l.Holding })
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
