package conformance

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrUnrepresentable is what a factory's Create returns, wrapped, when its
// runtime cannot hold a generated history it was handed — for example a
// runtime that cannot store a tool message carrying two results. Wrap it
// with Unrepresentable (or fmt.Errorf("%w: reason", ErrUnrepresentable)),
// giving a short metadata-only reason: the projection check counts
// refusals by reason and reports them. Refusing is allowed for generated
// histories only, within a bound: refusing the conformance fixture (which
// every check but projection starts from) fails the check, and so does
// refusing more than half the generated histories, or a history made only
// of the shapes every runtime must hold.
var ErrUnrepresentable = errors.New("conformance: the runtime cannot represent this history")

// Unrepresentable returns an error wrapping ErrUnrepresentable with a
// reason: a few words naming the shape the runtime cannot hold, never
// history text.
func Unrepresentable(reason string) error { return &unrepresentable{reason: reason} }

type unrepresentable struct{ reason string }

func (u *unrepresentable) Error() string        { return ErrUnrepresentable.Error() + ": " + u.reason }
func (u *unrepresentable) Is(target error) bool { return target == ErrUnrepresentable }

// maxReason bounds how much of a refusal's reason a report shows.
const maxReason = 80

// refusalReason reports whether err is a refusal and returns its reason,
// scrubbed and cut short.
func refusalReason(err error) (string, bool) {
	if !errors.Is(err, ErrUnrepresentable) {
		return "", false
	}
	var u *unrepresentable
	reason := ""
	if errors.As(err, &u) {
		reason = u.reason
	} else if _, after, ok := strings.Cut(err.Error(), ErrUnrepresentable.Error()+": "); ok {
		reason = after
	}
	reason = strings.Join(strings.Fields(redactProbes(reason)), " ")
	if len(reason) > maxReason {
		reason = scrub(reason[:maxReason])
	}
	if reason == "" {
		reason = "no reason given"
	}
	return reason, true
}

// refusals counts refused generated histories by reason.
type refusals map[string]int

func (r refusals) total() int {
	n := 0
	for _, c := range r {
		n += c
	}
	return n
}

// String lists the reasons, most frequent first: "54 tool message with two
// results, 3 image blocks".
func (r refusals) String() string {
	reasons := make([]string, 0, len(r))
	for k := range r {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if r[reasons[i]] != r[reasons[j]] {
			return r[reasons[i]] > r[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, k := range reasons {
		parts[i] = fmt.Sprintf("%d %s", r[k], k)
	}
	return strings.Join(parts, ", ")
}
