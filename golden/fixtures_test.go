package golden_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/fixtures"
	"github.com/ds4context/adapterkit/golden"
)

// maxListedGroups is the number of groups above which a history's groups
// are pinned by a summary and a digest instead of in full.
const maxListedGroups = 20

// groupSummary pins a long group list: counts, the first and last groups in
// full, and the SHA-256 of the whole list's wire JSON.
type groupSummary struct {
	Count    int                        `json:"count"`
	Complete int                        `json:"complete"`
	SHA256   string                     `json:"sha256"`
	First    []contract.ToolAtomicGroup `json:"first"`
	Last     []contract.ToolAtomicGroup `json:"last"`
}

type historyPin struct {
	Name     string                     `json:"name"`
	Messages int                        `json:"messages"`
	Groups   []contract.ToolAtomicGroup `json:"groups"`
	Issues   []contract.ValidationIssue `json:"issues"`
}

// longHistoryPin is historyPin with the groups summarised.
type longHistoryPin struct {
	Name         string                     `json:"name"`
	Messages     int                        `json:"messages"`
	GroupSummary *groupSummary              `json:"groupSummary"`
	Issues       []contract.ValidationIssue `json:"issues"`
}

func summarise(t *testing.T, groups []contract.ToolAtomicGroup) *groupSummary {
	t.Helper()
	data, err := json.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	s := &groupSummary{Count: len(groups), SHA256: hex.EncodeToString(sum[:]), First: groups[:2], Last: groups[len(groups)-2:]}
	for _, g := range groups {
		if g.Complete {
			s.Complete++
		}
	}
	return s
}

// TestFixtureHistoriesGolden pins the tool groups BuildToolAtomicGroups
// derives for every fixture history, and their (empty) validation.
func TestFixtureHistoriesGolden(t *testing.T) {
	var pins []any
	for _, h := range fixtures.Histories() {
		issues := contract.ValidateHistorySnapshot(&h.Snapshot)
		groups := contract.BuildToolAtomicGroups(h.Messages())
		if len(groups) > maxListedGroups {
			pins = append(pins, longHistoryPin{h.Name, len(h.Messages()), summarise(t, groups), issues})
		} else {
			pins = append(pins, historyPin{h.Name, len(h.Messages()), groups, issues})
		}
	}
	golden.Assert(t, "fixture-histories", pins)
}

type invalidPin struct {
	Name          string                     `json:"name"`
	Base          string                     `json:"base"`
	ExpectedCodes []string                   `json:"expectedCodes"`
	Groups        []contract.ToolAtomicGroup `json:"groups"`
	Issues        []contract.ValidationIssue `json:"issues"`
}

// TestInvalidSnapshotsGolden pins, for every invalid fixture snapshot, the
// groups derived from its messages and the exact issue list validation
// returns (codes, messages, ids, order).
func TestInvalidSnapshotsGolden(t *testing.T) {
	pins := []invalidPin{}
	for _, s := range fixtures.InvalidSnapshots() {
		pins = append(pins, invalidPin{
			Name: s.Name, Base: s.Base, ExpectedCodes: s.ExpectedCodes,
			Groups: contract.BuildToolAtomicGroups(s.Snapshot.Messages),
			Issues: contract.ValidateHistorySnapshot(&s.Snapshot),
		})
	}
	golden.Assert(t, "invalid-snapshots", pins)
}

type eligibilityPin struct {
	Name        string              `json:"name"`
	Eligibility localkv.Eligibility `json:"eligibility"`
}

// TestEligibilityKeysGolden pins the local KV eligibility of every fixture
// input: the reason, or the full key.
func TestEligibilityKeysGolden(t *testing.T) {
	var pins []eligibilityPin
	for _, in := range fixtures.EligibilityInputs() {
		pins = append(pins, eligibilityPin{Name: in.Name, Eligibility: localkv.DeriveEligibility(in.Input)})
	}
	golden.Assert(t, "localkv-eligibility-keys", pins)
}
