package conformance_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/reference"
)

// campaignSeed is the seed of the campaigns these tests split.
const campaignSeed = 0x5eed0fca4a19

// A campaign split into shards runs exactly the unsharded run's model
// sequences and generated histories, each once: the shards' covered counts
// add up to the unsharded run's, and the merge gives its verdict.
func TestShardsAddUpToTheCampaign(t *testing.T) {
	ctx := context.Background()
	factory := reference.NewConformanceFactory()
	opts := []conformance.Option{conformance.WithSeed(campaignSeed), conformance.WithModelSteps(300), conformance.WithHistories(6),
		conformance.WithChecks(conformance.CheckModel, conformance.CheckProjection, conformance.CaseIdentity)}
	whole := conformance.RunChecks(ctx, factory, opts...)
	if !whole.Passed {
		t.Fatalf("the unsharded campaign failed: %+v", whole.Checks)
	}
	if whole.KitVersion != reference.Version {
		t.Fatalf("the report names kit version %q, the reference adapter %q", whole.KitVersion, reference.Version)
	}
	if whole.Campaign != nil {
		t.Fatalf("an unsharded run reports a campaign: %+v", whole.Campaign)
	}
	const n = 4
	var shards []conformance.RunReport
	for i := 1; i <= n; i++ {
		rep := conformance.RunChecks(ctx, factory, append(slices.Clone(opts), conformance.WithShard(i, n))...)
		if !rep.Passed {
			t.Fatalf("shard %d/%d failed: %+v %v", i, n, rep.Checks, rep.Problems)
		}
		c := rep.Campaign
		if c == nil || c.Seed != campaignSeed || c.Shard != i || c.Shards != n || rep.KitVersion != whole.KitVersion || rep.KitVersion == "" {
			t.Fatalf("shard %d/%d reports campaign %+v, kit %q", i, n, c, rep.KitVersion)
		}
		// Only shard 1 runs the checks that split nothing.
		ids := checkIDs(rep)
		want := []string{conformance.CheckProjection, conformance.CheckModel}
		if i == 1 {
			want = []string{conformance.CaseIdentity, conformance.CheckProjection, conformance.CheckModel}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("shard %d/%d ran %q, want %q", i, n, ids, want)
		}
		shards = append(shards, rep)
	}
	for _, id := range []string{conformance.CheckModel, conformance.CheckProjection} {
		sum := map[string]int{}
		for _, s := range shards {
			r := resultOf(t, s, id)
			if r.Seed != campaignSeed {
				t.Fatalf("%s of shard %d drew from seed %#x", id, s.Campaign.Shard, r.Seed)
			}
			for k, v := range r.Covered {
				sum[k] += v
			}
		}
		w := resultOf(t, whole, id).Covered
		for _, k := range []string{"sequences", "operations", "histories"} {
			if w[k] != sum[k] {
				t.Errorf("%s: the shards cover %d %s, the unsharded run %d", id, sum[k], k, w[k])
			}
		}
	}
	if c := resultOf(t, whole, conformance.CheckProjection).Covered; c["histories"] != 6 {
		t.Errorf("the unsharded run covers %d generated histories, want 6", c["histories"])
	}
	// The campaign's sequences are split: no shard ran them all.
	all := resultOf(t, whole, conformance.CheckModel).Covered["sequences"]
	for _, s := range shards {
		if got := resultOf(t, s, conformance.CheckModel).Covered["sequences"]; all < 2 || got == all {
			t.Errorf("shard %d/%d ran %d of the campaign's %d model sequences", s.Campaign.Shard, n, got, all)
		}
	}
	// The order of the reports does not matter.
	rev := slices.Clone(shards)
	slices.Reverse(rev)
	merged, err := conformance.MergeReports(rev)
	if err != nil {
		t.Fatal(err)
	}
	if !merged.Passed || !slices.Equal(checkIDs(merged), checkIDs(whole)) {
		t.Fatalf("merged: passed %t, checks %q; unsharded: %q", merged.Passed, checkIDs(merged), checkIDs(whole))
	}
	for _, id := range []string{conformance.CheckModel, conformance.CheckProjection} {
		got, want := resultOf(t, merged, id), resultOf(t, whole, id)
		for _, k := range []string{"sequences", "operations", "histories"} {
			if got.Covered[k] != want.Covered[k] {
				t.Errorf("merged %s covers %d %s, the unsharded run %d", id, got.Covered[k], k, want.Covered[k])
			}
		}
	}
	mp, mf, ms := merged.Counts()
	wp, wf, ws := whole.Counts()
	if mp != wp || mf != wf || ms != ws {
		t.Errorf("merged counts %d/%d/%d, unsharded %d/%d/%d", mp, mf, ms, wp, wf, ws)
	}
}

// A shard without the campaign's seed would draw a campaign of its own:
// the run refuses it.
func TestAShardNeedsTheCampaignSeed(t *testing.T) {
	rep := conformance.RunChecks(context.Background(), reference.NewConformanceFactory(), conformance.WithShard(1, 2), conformance.WithChecks(conformance.CaseIdentity))
	if rep.Passed || len(rep.Checks) != 0 || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "seed") {
		t.Fatalf("a shard without a seed: passed %t, checks %d, problems %q", rep.Passed, len(rep.Checks), rep.Problems)
	}
}

func TestWithShardPanicsOnAShardNoCampaignHas(t *testing.T) {
	for _, in := range [][2]int{{0, 4}, {5, 4}, {1, 0}, {-1, 2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WithShard(%d, %d) did not panic", in[0], in[1])
				}
			}()
			conformance.WithShard(in[0], in[1])
		}()
	}
}

// shard builds the report of shard i of n of a campaign whose model check
// covered ops operations and whose projection check refused or projected
// the given families.
func shard(i, n int, status conformance.Status, covered map[string]int, limits ...conformance.Limit) conformance.RunReport {
	r := conformance.Result{ID: conformance.CheckProjection, Kind: conformance.KindExtended, Status: status, Seed: campaignSeed,
		Covered: covered, Limits: limits}
	if status == conformance.StatusFail {
		r.Failure = &conformance.Failure{Check: r.ID, Code: "projection-assertion-failed", Rule: "a rule", Expected: "e", Actual: "a"}
		r.Rerun = []string{"conform --check projection --seed 0x00005eed0fca4a19 --shard " + strings.Join([]string{string(rune('0' + i)), string(rune('0' + n))}, "/")}
	}
	checks := []string{conformance.CheckProjection}
	rep := conformance.RunReport{Version: conformance.RunReportVersion, ContractVersion: "runtime-adapter-v1", KitVersion: "0.2.0",
		FactoryName: "a", Passed: status != conformance.StatusFail, Checks: []conformance.Result{r}, Instances: 3,
		Campaign: &conformance.Campaign{Seed: campaignSeed, Shard: i, Shards: n, Checks: checks, Histories: 8}}
	return rep
}

func TestMergeReportsJudgesTheWholeCampaign(t *testing.T) {
	pass := conformance.StatusPass
	refusedMR := conformance.Limit{Family: gen.FamilyMultiResult, Count: 2, Reason: "refused: two results"}
	cases := []struct {
		name    string
		reports []conformance.RunReport
		passed  bool
		want    string // in the merged projection's failure or the problems
	}{
		{"every shard passed", []conformance.RunReport{
			shard(1, 2, pass, map[string]int{"histories": 4, "long": 1}), shard(2, 2, pass, map[string]int{"histories": 4, "long": 1})}, true, ""},
		{"a family refused in one shard and projected in another", []conformance.RunReport{
			shard(1, 2, pass, map[string]int{"histories": 4, "refused": 2}, refusedMR),
			shard(2, 2, pass, map[string]int{"histories": 4, "projected:multi-result": 1})}, false, "projected 1 histories holding it faithfully in shard 2/2"},
		{"more than half refused over the campaign", []conformance.RunReport{
			shard(1, 2, pass, map[string]int{"histories": 4, "refused": 4}, refusedMR),
			shard(2, 2, pass, map[string]int{"histories": 4, "refused": 1}, refusedMR)}, false, "5 refused over the campaign's 2 shards"},
		{"a failing shard", []conformance.RunReport{
			shard(1, 2, pass, map[string]int{"histories": 4}), shard(2, 2, conformance.StatusFail, map[string]int{"histories": 4})}, false, "shard 2/2: a"},
		{"a shard missing", []conformance.RunReport{shard(1, 3, pass, nil), shard(3, 3, pass, nil)}, false, "shard 2/3 is missing"},
		{"a shard twice", []conformance.RunReport{shard(1, 2, pass, nil), shard(2, 2, pass, nil), shard(2, 2, pass, nil)}, false, "shard 2/2 is given twice (reports 2 and 3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := conformance.MergeReports(c.reports)
			if err != nil {
				t.Fatal(err)
			}
			if m.Passed != c.passed {
				t.Fatalf("passed %t, want %t: %+v %q", m.Passed, c.passed, m.Checks, m.Problems)
			}
			text := strings.Join(m.Problems, "\n")
			if f := m.Checks[0].Failure; f != nil {
				text += "\n" + f.Actual
			}
			if !strings.Contains(text, c.want) {
				t.Fatalf("%q does not say %q", text, c.want)
			}
			if m.Campaign.Shard != 0 || m.Campaign.Shards != c.reports[0].Campaign.Shards {
				t.Fatalf("merged campaign %+v", m.Campaign)
			}
		})
	}
	// Every failing shard's rerun command is kept, each naming its shard.
	m, _ := conformance.MergeReports([]conformance.RunReport{shard(1, 2, conformance.StatusFail, nil), shard(2, 2, conformance.StatusFail, nil)})
	if r := m.Checks[0].Rerun; len(r) != 2 || !strings.HasSuffix(r[0], "--shard 1/2") || !strings.HasSuffix(r[1], "--shard 2/2") {
		t.Fatalf("rerun %q", r)
	}
	// A merged report is no shard: merging it again is refused.
	if _, err := conformance.MergeReports([]conformance.RunReport{m}); !errors.Is(err, conformance.ErrNotOneCampaign) {
		t.Fatalf("merging a merged report: %v", err)
	}
}

func TestMergeReportsRefusesReportsOfAnotherCampaign(t *testing.T) {
	pass := conformance.StatusPass
	for name, edit := range map[string]func(*conformance.RunReport){
		"kit version":   func(r *conformance.RunReport) { r.KitVersion = "0.3.0" },
		"adapter":       func(r *conformance.RunReport) { r.FactoryName = "b" },
		"campaign seed": func(r *conformance.RunReport) { r.Campaign.Seed++ },
		"model steps":   func(r *conformance.RunReport) { r.Campaign.ModelSteps = 7 },
		"shards":        func(r *conformance.RunReport) { r.Campaign.Shards = 3 },
		"not a shard":   func(r *conformance.RunReport) { r.Campaign = nil },
		"no seed":       func(r *conformance.RunReport) { r.Campaign.Seed = 0 },
	} {
		a, b := shard(1, 2, pass, nil), shard(2, 2, pass, nil)
		edit(&b)
		if _, err := conformance.MergeReports([]conformance.RunReport{a, b}); !errors.Is(err, conformance.ErrNotOneCampaign) {
			t.Errorf("%s: %v, want ErrNotOneCampaign", name, err)
		}
	}
}

func checkIDs(rep conformance.RunReport) []string {
	var ids []string
	for _, c := range rep.Checks {
		ids = append(ids, c.ID)
	}
	return ids
}

func resultOf(t *testing.T, rep conformance.RunReport, id string) conformance.Result {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no result of %s in %q", id, checkIDs(rep))
	return conformance.Result{}
}
