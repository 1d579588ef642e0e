package conformance

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrNotOneCampaign: the reports given to MergeReports are not shards of one
// campaign of one adapter, run by one version of the kit.
var ErrNotOneCampaign = errors.New("conformance: the reports are not shards of one campaign")

// MergeReports combines the reports of a campaign's shards (RunChecks with
// WithShard, conform --shard) into the report of the whole campaign. It
// returns an error matching ErrNotOneCampaign, and no report, when a report
// is not a shard's, or the reports differ in their format, contract or kit
// version, adapter, or campaign (seed, number of shards, checks and the
// settings that draw them). A shard missing or given twice is a problem of
// the merged report, which then has not passed.
//
// The merged report holds every check of the campaign in catalogue order:
// a check that splits the campaign's input (model, projection) combined
// over every shard — its status the first failing shard's (its failure
// naming the shard, its rerun commands those of every failing shard), its
// covered counts and limits added up —, every other check as shard 1 ran
// it. It then judges what no shard can see alone: a family one shard
// refused must not be projected faithfully in another, and at most half of
// all the generated histories may be refused. Passed is true when every
// shard passed, no merged check failed and nothing is missing: the
// conjunction of the shards, and of those rules.
func MergeReports(reports []RunReport) (RunReport, error) {
	if len(reports) == 0 {
		return RunReport{}, fmt.Errorf("%w: no report given", ErrNotOneCampaign)
	}
	first := reports[0]
	for i, r := range reports {
		if r.Campaign == nil {
			return RunReport{}, fmt.Errorf("%w: report %d is not a shard's (a run with --shard, WithShard)", ErrNotOneCampaign, i+1)
		}
		c := r.Campaign
		if c.Shards < 1 || c.Shard < 1 || c.Shard > c.Shards {
			return RunReport{}, fmt.Errorf("%w: report %d names shard %d/%d, which no campaign has (a merged report is merged already)", ErrNotOneCampaign, i+1, c.Shard, c.Shards)
		}
		if c.Seed == 0 {
			return RunReport{}, fmt.Errorf("%w: report %d names no campaign seed (its shard ran with no --seed)", ErrNotOneCampaign, i+1)
		}
		if i == 0 {
			continue
		}
		for _, d := range []struct{ what, a, b string }{
			{"report format", first.Version, r.Version},
			{"contract version", first.ContractVersion, r.ContractVersion},
			{"kit version", first.KitVersion, r.KitVersion},
			{"adapter", first.FactoryName, r.FactoryName},
			{"campaign seed", seedText(first.Campaign.Seed), seedText(c.Seed)},
			{"number of shards", fmt.Sprint(first.Campaign.Shards), fmt.Sprint(c.Shards)},
			{"checks", strings.Join(first.Campaign.Checks, ","), strings.Join(c.Checks, ",")},
			{"generated histories", fmt.Sprint(first.Campaign.Histories), fmt.Sprint(c.Histories)},
			{"model steps", fmt.Sprint(first.Campaign.ModelSteps), fmt.Sprint(c.ModelSteps)},
			{"diagnostics limit", fmt.Sprint(first.Campaign.DiagnosticsLimit), fmt.Sprint(c.DiagnosticsLimit)},
			{"required capabilities", fmt.Sprint(first.Campaign.RequiredCapabilities), fmt.Sprint(c.RequiredCapabilities)},
			{"required families", fmt.Sprint(first.Campaign.RequiredFamilies), fmt.Sprint(c.RequiredFamilies)},
			{"families left out", fmt.Sprint(first.LeftOut), fmt.Sprint(r.LeftOut)},
		} {
			if d.a != d.b {
				return RunReport{}, fmt.Errorf("%w: %s %q in report 1, %q in report %d", ErrNotOneCampaign, d.what, scrub(d.a), scrub(d.b), i+1)
			}
		}
	}
	camp := *first.Campaign
	camp.Shard = 0
	merged := RunReport{Version: first.Version, ContractVersion: first.ContractVersion, KitVersion: first.KitVersion,
		FactoryName: first.FactoryName, Campaign: &camp, LeftOut: first.LeftOut}
	// The shards, by number; a shard missing or given twice is a problem.
	shards := make([]*RunReport, camp.Shards+1)
	from := make([]int, camp.Shards+1) // the report each shard came from
	allPassed := true
	for i := range reports {
		r := &reports[i]
		if shards[r.Campaign.Shard] != nil {
			merged.Problems = append(merged.Problems, fmt.Sprintf("shard %d/%d is given twice (reports %d and %d)", r.Campaign.Shard, camp.Shards, from[r.Campaign.Shard], i+1))
			continue
		}
		shards[r.Campaign.Shard], from[r.Campaign.Shard] = r, i+1
		allPassed = allPassed && r.Passed
		merged.Instances += r.Instances
		merged.Duration = max(merged.Duration, r.Duration)
		for _, p := range r.Problems {
			merged.Problems = append(merged.Problems, fmt.Sprintf("shard %d/%d: %s", r.Campaign.Shard, camp.Shards, p))
		}
	}
	for k := 1; k <= camp.Shards; k++ {
		if shards[k] == nil {
			merged.Problems = append(merged.Problems, fmt.Sprintf("shard %d/%d is missing: the campaign's part it runs is not in the merge", k, camp.Shards))
		}
	}
	if shards[1] != nil {
		merged.Conformance = shards[1].Conformance
	}
	for _, id := range camp.Checks {
		c, ok := CheckByID(id)
		if !ok {
			merged.Problems = append(merged.Problems, fmt.Sprintf("no check of this kit has the id %q", scrub(id)))
			continue
		}
		var parts []shardResult
		for k := 1; k <= camp.Shards; k++ {
			if shards[k] == nil || !c.split && k != 1 {
				continue
			}
			j := slices.IndexFunc(shards[k].Checks, func(r Result) bool { return r.ID == id })
			if j < 0 {
				merged.Problems = append(merged.Problems, fmt.Sprintf("shard %d/%d has no result of %s", k, camp.Shards, id))
				continue
			}
			parts = append(parts, shardResult{shard: k, r: shards[k].Checks[j]})
		}
		if len(parts) == 0 {
			continue
		}
		r := parts[0].r
		if c.split {
			r = combine(c, camp, parts)
		}
		merged.Checks = append(merged.Checks, r)
		merged.Limits = mergeLimits(merged.Limits, r.Limits)
	}
	_, failedN, _ := merged.Counts()
	merged.Passed = allPassed && failedN == 0 && len(merged.Problems) == 0 && len(merged.Checks) > 0
	return merged, nil
}

// shardResult is one shard's result of a check.
type shardResult struct {
	shard int
	r     Result
}

// combine merges the results of a check that splits its input over the
// campaign's shards, and judges the rules of the whole campaign the check
// keeps.
func combine(c Check, camp Campaign, parts []shardResult) Result {
	out := Result{ID: c.ID, Kind: c.Kind, Capability: c.Capability, Status: StatusSkip, Seed: camp.Seed}
	var failing []string
	var limits limitSet
	for _, p := range parts {
		r := p.r
		out.Duration += r.Duration
		for k, v := range r.Covered {
			if out.Covered == nil {
				out.Covered = map[string]int{}
			}
			out.Covered[k] += v
		}
		for _, l := range r.Limits {
			limits.add(l)
		}
		switch r.Status {
		case StatusPass:
			if out.Status == StatusSkip {
				out.Status = StatusPass
			}
		case StatusSkip:
			if out.SkipReason == "" {
				out.SkipReason = r.SkipReason
			}
		case StatusFail, StatusError:
			failing = append(failing, fmt.Sprintf("%d/%d", p.shard, camp.Shards))
			out.Rerun = append(out.Rerun, r.Rerun...)
			if out.Failure == nil {
				out.Status = r.Status
				f := *r.Failure
				f.Actual = fmt.Sprintf("shard %d/%d: %s", p.shard, camp.Shards, f.Actual)
				out.Failure = &f
			}
		}
	}
	if out.Status != StatusSkip {
		out.SkipReason = ""
	}
	out.Limits = limits.list()
	if len(failing) > 1 {
		out.Failure.Actual += fmt.Sprintf(" (shards %s failed; the first is shown)", strings.Join(failing, ", "))
	}
	if out.Status == StatusPass && c.ID == CheckProjection {
		if err := campaignRefusals(camp, parts); err != nil {
			out.Status, out.Failure, _ = result(c.ID, err)
		}
	}
	out.Note = coveredNote(camp, out.Covered)
	return out
}

// coveredNote says what a merged check covered over its shards.
func coveredNote(camp Campaign, covered map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(covered)) {
		if !strings.HasPrefix(k, projectedKey) {
			parts = append(parts, fmt.Sprintf("%d %s", covered[k], k))
		}
	}
	note := fmt.Sprintf("%d shards of seed %s", camp.Shards, seedText(camp.Seed))
	if len(parts) > 0 {
		note += ": " + strings.Join(parts, ", ")
	}
	return note
}

// campaignRefusals judges the rules of refusals over a campaign's shards
// of the projection check, each of which has judged its own part: a family
// one shard refused is refused in every shard (no generated history holding
// it projected faithfully anywhere), and at most half of the campaign's
// histories are refused.
func campaignRefusals(camp Campaign, parts []shardResult) error {
	for _, p := range parts {
		for _, l := range p.r.Limits {
			if l.Family == "" || !strings.HasPrefix(l.Reason, "refused") {
				continue
			}
			for _, q := range parts {
				if n := q.r.Covered[projectedKey+string(l.Family)]; n > 0 && q.shard != p.shard {
					return broken(ruleRefusalConsistent, fmt.Sprintf("every generated history holding %s refused", l.Family),
						fmt.Sprintf("refused %s in shard %d/%d (%d histories), projected %d histories holding it faithfully in shard %d/%d",
							l.Family, p.shard, camp.Shards, l.Count, n, q.shard, camp.Shards))
				}
			}
		}
	}
	var refused, drawn int
	for _, p := range parts {
		refused += p.r.Covered["refused"]
		drawn += p.r.Covered["histories"] + p.r.Covered["long"]
	}
	if 2*refused > drawn {
		return broken(ruleRefusalBound, fmt.Sprintf("at most %d of %d generated histories refused", drawn/2, drawn),
			fmt.Sprintf("%d refused over the campaign's %d shards", refused, camp.Shards))
	}
	return nil
}
