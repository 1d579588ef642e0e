package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// ErrUnrepresentable is what every refusal matches (errors.Is): a factory's
// Create returns Unrepresentable(family) when its runtime cannot hold a
// generated history it was handed — for example a runtime that cannot
// store a tool message carrying two results refuses with
// Unrepresentable(gen.FamilyMultiResult).
//
// A refusal is a declared limit, checked for consistency (see
// docs/conformance.md): it names a family of gen.Families the history
// holds; once a family is refused, every generated history holding it must
// be refused, and histories holding that family alone must be refused for
// it; long-history may not be refused below MinLongHistoryRefusal
// messages; at most half the generated histories may be refused; and
// the conformance fixture, which every check but projection starts from,
// may never be. An error matching ErrUnrepresentable without naming a
// family (free text only) is not a refusal the kit accepts: it fails the
// check.
var ErrUnrepresentable = errors.New("conformance: the runtime cannot represent this history")

// MinLongHistoryRefusal is the fewest messages a history must hold for a
// runtime to refuse it for gen.FamilyLongHistory: a history of 100,000
// messages is an ordinary input (SPEC §6), so a runtime that cannot hold
// one of 10,000 is broken, not limited. No generated history is that long,
// so refusing a generated history for its length always fails.
const MinLongHistoryRefusal = 10_000

// Refusal is the error Unrepresentable returns: the family of history
// shapes the runtime cannot hold, and optional detail words. It matches
// ErrUnrepresentable.
type Refusal struct {
	// Family is the family of gen.Families the refused history holds and
	// the runtime cannot represent.
	Family gen.Family
	// Detail is a few metadata-only words, never history text; it may be
	// empty.
	Detail string
}

// Error returns "conformance: the runtime cannot represent this history:
// FAMILY (DETAIL)".
func (r *Refusal) Error() string {
	s := ErrUnrepresentable.Error() + ": " + string(r.Family)
	if r.Detail != "" {
		s += " (" + r.Detail + ")"
	}
	return s
}

// Is makes a Refusal match ErrUnrepresentable.
func (r *Refusal) Is(target error) bool { return target == ErrUnrepresentable }

// Unrepresentable returns the refusal of a history holding family, which
// the runtime cannot represent, with optional detail words (joined by
// spaces): metadata only, never history text. A factory's Create returns
// it for a generated history (see ErrUnrepresentable for the rules).
func Unrepresentable(family gen.Family, detail ...string) error {
	return &Refusal{Family: family, Detail: strings.Join(detail, " ")}
}

// maxDetail bounds how much of a refusal's detail a report shows.
const maxDetail = 80

// refusalOf reports whether err is a refusal (it matches
// ErrUnrepresentable) and returns its *Refusal, the detail scrubbed and cut
// short. A refusal without a *Refusal, or naming no known family, is
// returned with an empty Family.
func refusalOf(err error) (Refusal, bool) {
	if !errors.Is(err, ErrUnrepresentable) {
		return Refusal{}, false
	}
	var r *Refusal
	if !errors.As(err, &r) {
		return Refusal{}, true
	}
	out := Refusal{Family: r.Family, Detail: strings.Join(strings.Fields(redactProbes(r.Detail)), " ")}
	if len(out.Detail) > maxDetail {
		out.Detail = scrub(out.Detail[:maxDetail])
	}
	if _, err := gen.ParseFamily(string(r.Family)); err != nil && r.Family != "" {
		out.Family = ""
		out.Detail = scrub(string(r.Family))
	}
	return out, true
}

// describe is the refusal as a report shows it.
func (r Refusal) describe() string {
	if r.Family == "" {
		if r.Detail == "" {
			return "a refusal naming no family"
		}
		return "a refusal naming no family of gen.Families (" + q(r.Detail) + ")"
	}
	s := "refused for " + string(r.Family)
	if r.Detail != "" {
		s += " (" + q(r.Detail) + ")"
	}
	return s
}

// The rules a refusal keeps, as the failures and docs/conformance.md word
// them.
const (
	ruleRefusalFamily     = "a refusal names the family of gen.Families the runtime cannot hold (conformance.Unrepresentable(family)), and the refused history holds that family"
	ruleRefusalConsistent = "a refused family is a limit of the run: every generated history holding it is refused, for it or another family it holds"
	ruleRefusalIsolation  = "a refused family is a limit of the run: histories made of the shapes every runtime holds plus that family alone are refused for it"
	ruleRefusalLong       = "long-history is no limit below MinLongHistoryRefusal (10,000) messages: a history of 100,000 messages is an ordinary input"
	ruleRefusalFixture    = "every runtime holds the conformance fixture: a factory may refuse generated histories only"
	ruleRefusalBound      = "the runtime holds too few generated histories to check projection: a factory may refuse at most half of them as unrepresentable"
	ruleRefusalRequired   = "a required family is no limit: the runtime holds every history of it (WithRequiredFamilies, --require-families)"
	ruleDeclaredLimits    = "an instance declares as limits families of gen.Families other than long-history"
)

// checkRefusal returns nil when a refusal r of the history msgs keeps the
// rules one history can show: it names a family the history holds, and a
// long-history refusal comes at MinLongHistoryRefusal messages or more.
func checkRefusal(r Refusal, msgs []contract.Message) error {
	if r.Family == "" {
		return broken(ruleRefusalFamily, "a refusal naming a family of gen.Families, or an instance holding the history", r.describe())
	}
	held := gen.FamiliesOf(msgs)
	if !slices.Contains(held, r.Family) {
		return broken(ruleRefusalFamily, "a refusal naming one of the families the history holds "+familyList(held),
			fmt.Sprintf("refused for %s; the history holds none", r.Family))
	}
	if r.Family == gen.FamilyLongHistory && len(msgs) < MinLongHistoryRefusal {
		return broken(ruleRefusalLong, fmt.Sprintf("an instance holding the history of %d messages", len(msgs)),
			fmt.Sprintf("refused for long-history at %d messages, below %d", len(msgs), MinLongHistoryRefusal))
	}
	return nil
}

// familyList shows a list of families: "[thinking, image]", "[none]".
func familyList(fs []gen.Family) string {
	if len(fs) == 0 {
		return "[none]"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
