package gen_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/jsstring"
	"github.com/ds4context/adapterkit/internal/race"
)

// reach measures what a run of generated histories exercises.
type reach struct {
	histories, long, maxLen        int
	multiCall, multiCallDisagree   int // groups with two or more tool call ids; those whose byte and UTF-16 sorts differ
	groupOrderDisagree             int // histories whose groups sort differently by bytes and in UTF-16
	clockAscending, clockShuffled  int // histories with createdAt on every message, ascending / not
	blockTypes                     map[contract.BlockType]bool
	extraIn                        map[string]bool
	invalid                        int
	firstInvalid                   []contract.ValidationIssue
	firstInvalidSeed, invalidSizes int
}

func (r *reach) observe(seed int, h []contract.Message) {
	r.histories++
	if len(h) >= 200 {
		r.long++
	}
	r.maxLen = max(r.maxLen, len(h))
	s := contract.HistorySnapshot{
		SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "sess",
		Revision: "1", ProjectRoot: "/p", Messages: h, ToolAtomicGroups: contract.BuildToolAtomicGroups(h),
	}
	if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
		if r.invalid == 0 {
			r.firstInvalid, r.firstInvalidSeed = issues, seed
		}
		r.invalid++
	}
	for _, g := range s.ToolAtomicGroups {
		if len(g.ToolCallIDs) < 2 {
			continue
		}
		r.multiCall++
		if !slices.Equal(slices.Sorted(slices.Values(g.ToolCallIDs)), slices.SortedFunc(slices.Values(g.ToolCallIDs), jsstring.Compare)) {
			r.multiCallDisagree++
		}
	}
	firsts := make([]string, len(s.ToolAtomicGroups))
	for i, g := range s.ToolAtomicGroups {
		firsts[i] = g.MessageIDs[0]
	}
	if !slices.Equal(slices.Sorted(slices.Values(firsts)), slices.SortedFunc(slices.Values(firsts), jsstring.Compare)) {
		r.groupOrderDisagree++
	}
	all, ascending := len(h) > 1, true
	for i := range h {
		m := &h[i]
		if m.CreatedAt == nil {
			all = false
		} else if i > 0 && h[i-1].CreatedAt != nil && *m.CreatedAt < *h[i-1].CreatedAt {
			ascending = false
		}
		if len(m.Extra) > 0 {
			r.extraIn["message"] = true
		}
		if len(m.Provenance.Extra) > 0 {
			r.extraIn["provenance"] = true
		}
		if len(m.Flags.Extra) > 0 {
			r.extraIn["flags"] = true
		}
		for _, b := range m.Blocks {
			r.blockTypes[b.Type()] = true
			if blockHasExtra(b) {
				r.extraIn["block"] = true
			}
		}
	}
	switch {
	case all && ascending:
		r.clockAscending++
	case all:
		r.clockShuffled++
	}
}

// blockHasExtra reports whether a block carries unknown members.
func blockHasExtra(b contract.Block) bool {
	switch b := b.(type) {
	case *contract.TextBlock:
		return len(b.Extra) > 0
	case *contract.ThinkingBlock:
		return len(b.Extra) > 0
	case *contract.ToolCallBlock:
		return len(b.Extra) > 0
	case *contract.ToolResultBlock:
		return len(b.Extra) > 0
	case *contract.ImageBlock:
		return len(b.Extra) > 0
	case *contract.FileReferenceBlock:
		return len(b.Extra) > 0
	case *contract.ArtifactReferenceBlock:
		return len(b.Extra) > 0
	case *contract.SummaryReferenceBlock:
		return len(b.Extra) > 0
	case *contract.OpaqueProviderBlock:
		return len(b.Extra) > 0
	}
	return false
}

var allBlockTypes = []contract.BlockType{
	contract.BlockText, contract.BlockThinking, contract.BlockToolCall, contract.BlockToolResult, contract.BlockImage,
	contract.BlockFileReference, contract.BlockArtifactReference, contract.BlockSummaryReference, contract.BlockOpaqueProvider,
}

// TestHistoriesReach measures what 2,000 default histories exercise: long
// histories, ids whose byte and UTF-16 orders disagree where groups are
// ordered, timestamps on every message in and out of order, every block type
// and unknown members everywhere — and that every one of them is valid.
func TestHistoriesReach(t *testing.T) {
	race.SkipSequential(t)
	r := reach{blockTypes: map[contract.BlockType]bool{}, extraIn: map[string]bool{}}
	g := gen.History("rt", "sess")
	for seed := range 2000 {
		r.observe(seed, g.Example(seed))
	}
	t.Logf("%d histories: %d of >= 200 messages, longest %d; %d of %d multi-call groups sort differently by bytes and UTF-16; "+
		"%d histories order groups differently; createdAt on every message: %d ascending, %d not",
		r.histories, r.long, r.maxLen, r.multiCallDisagree, r.multiCall, r.groupOrderDisagree, r.clockAscending, r.clockShuffled)
	if r.invalid > 0 {
		t.Errorf("%d generated histories are invalid; seed %d: %+v", r.invalid, r.firstInvalidSeed, r.firstInvalid)
	}
	if frac := float64(r.long) / float64(r.histories); frac < 0.02 {
		t.Errorf("%.3f of histories hold 200 messages or more, want at least 0.02", frac)
	}
	if r.maxLen < 1000 {
		t.Errorf("the longest history holds %d messages, want at least 1,000", r.maxLen)
	}
	if r.multiCall == 0 || float64(r.multiCallDisagree)/float64(r.multiCall) < 0.02 {
		t.Errorf("%d of %d multi-call groups sort their tool call ids differently by bytes and UTF-16, want at least 2%%", r.multiCallDisagree, r.multiCall)
	}
	if float64(r.groupOrderDisagree)/float64(r.histories) < 0.02 {
		t.Errorf("%d of %d histories order their groups differently by bytes and UTF-16, want at least 2%%", r.groupOrderDisagree, r.histories)
	}
	if float64(r.clockShuffled)/float64(r.histories) < 0.02 || float64(r.clockAscending)/float64(r.histories) < 0.02 {
		t.Errorf("createdAt on every message: %d ascending, %d out of order of %d histories, want at least 2%% each", r.clockAscending, r.clockShuffled, r.histories)
	}
	for _, b := range allBlockTypes {
		if !r.blockTypes[b] {
			t.Errorf("no generated history holds a %s block", b)
		}
	}
	for _, where := range []string{"message", "provenance", "flags", "block"} {
		if !r.extraIn[where] {
			t.Errorf("no generated history holds an unknown member in a %s", where)
		}
	}
}

// TestLongHistoriesShrink checks that a property failing only on long
// histories shrinks to the shortest failing size.
func TestLongHistoriesShrink(t *testing.T) {
	race.SkipSequential(t)
	var last []contract.Message
	failed, log := checkFails(t, func(h []contract.Message) string {
		last = h
		if len(h) >= 150 {
			return "long history"
		}
		return ""
	})
	if !failed {
		t.Fatal("rapid found no history of 150 messages or more")
	}
	if !strings.Contains(log, "rapid.seed") {
		t.Errorf("the failure report names no seed to reproduce it")
	}
	t.Logf("minimal counterexample: %d messages", len(last))
	if len(last) > 200 {
		t.Errorf("the minimal counterexample holds %d messages, want about 150", len(last))
	}
}
