package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ds4context/adapterkit/contract"
)

// projectionShrinkTries bounds the shrinking of a generated history that
// failed: each try creates an instance, which over a process bridge costs
// a process. The bound counts tries, not time, so that a failure shrinks
// to the same history on a busy machine as on an idle one.
const projectionShrinkTries = 60

// shrinkHistory looks, within a try budget, for a shorter
// history that fails as msgs did — the same rule and kind of first
// difference — by leaving out runs of its units (a message, or the
// messages of one tool atomic group together, so that every candidate is
// a valid history), halving their length each round. It returns the
// failure of the shortest history it found and its messages, or nil when
// it found none shorter.
func (p *ProjectionRun) shrinkHistory(ctx context.Context, e *env, msgs []contract.Message, failure *brokenRule) (*brokenRule, []contract.Message) {
	// Shrinking counts nothing: the run's limits are restored after.
	saved := limitSet{limits: slices.Clone(p.limits.limits)}
	defer func() { p.limits = saved }()
	units := historyUnits(msgs)
	tries := 0
	var best *brokenRule
	var bestMsgs []contract.Message
	for size := max(len(units)/2, 1); size >= 1; size /= 2 {
		for start := 0; start < len(units) && tries < projectionShrinkTries; {
			cand := slices.Concat(units[:start], units[min(start+size, len(units)):])
			cmsgs := unitMessages(msgs, cand)
			if len(cmsgs) == len(msgs) || !validHistory(cmsgs) {
				start += size
				continue
			}
			tries++
			var br *brokenRule
			if err := p.projectOne(ctx, e, cmsgs); errors.As(err, &br) && br.rule == failure.rule && br.kind == failure.kind {
				units, best, bestMsgs = cand, br, cmsgs
				continue
			}
			start += size
		}
		if size == 1 {
			break
		}
	}
	return best, bestMsgs
}

// historyUnits splits msgs into the units a shrink leaves out whole: the
// indexes of the messages of one tool atomic group, or of one message
// outside every group, in history order.
func historyUnits(msgs []contract.Message) [][]int {
	unitOf := map[string]int{}
	var units [][]int
	for _, g := range contract.BuildToolAtomicGroups(msgs) {
		for _, id := range g.MessageIDs {
			unitOf[id] = len(units)
		}
		units = append(units, nil)
	}
	var out [][]int
	seen := map[int]int{}
	for i := range msgs {
		u, grouped := unitOf[msgs[i].ID]
		if !grouped {
			out = append(out, []int{i})
			continue
		}
		if k, ok := seen[u]; ok {
			out[k] = append(out[k], i)
			continue
		}
		seen[u] = len(out)
		out = append(out, []int{i})
	}
	return out
}

// unitMessages returns the messages of msgs the units hold, in history
// order.
func unitMessages(msgs []contract.Message, units [][]int) []contract.Message {
	var idx []int
	for _, u := range units {
		idx = append(idx, u...)
	}
	slices.Sort(idx)
	out := make([]contract.Message, len(idx))
	for k, i := range idx {
		out[k] = msgs[i]
	}
	return out
}

// validHistory reports whether msgs is a valid history of the conformance
// fixture's runtime and session.
func validHistory(msgs []contract.Message) bool {
	fx := NewFixture()
	s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: fx.RuntimeID, SessionID: fx.SessionID,
		Revision: "r", ProjectRoot: "/", Messages: msgs, ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs)}
	return len(contract.ValidateHistorySnapshot(&s)) == 0
}

// shrunk is the failure br of a history of n messages shrunk to msgs,
// naming where the history came from.
func shrunk(br *brokenRule, where string, n int, msgs []contract.Message) *brokenRule {
	return &brokenRule{rule: br.rule, expected: br.expected, kind: br.kind,
		actual: fmt.Sprintf("%s, shrunk from %d to %d messages, %s: %s", where, n, len(msgs), historyShape(msgs), br.actual)}
}
