package build

import (
	"fmt"
	"slices"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/fixtures"
)

// invalidBases are the valid histories mutations are applied to, in order
// of preference: each mutation breaks the first one it applies to. The
// first has two groups of two messages each, so every mutation of the
// catalogue finds a target in it.
var invalidBases = []string{
	fixtures.HistoryInterleaved,
	fixtures.HistoryIncompleteLiveCall,
	fixtures.HistorySharedResultMessage,
	fixtures.HistorySingleExchange,
}

// distinctCodes returns the distinct codes of issues in first-seen order.
func distinctCodes(issues []contract.ValidationIssue) []string {
	var out []string
	for _, is := range issues {
		if !slices.Contains(out, is.Code) {
			out = append(out, is.Code)
		}
	}
	return out
}

// invalidFiles applies every mutation of contract/gen's catalogue to a valid
// base history and checks that validation reports exactly the mutation's
// codes before writing the result.
func invalidFiles() ([]File, error) {
	var out []File
	for _, m := range gen.Mutations {
		applied := false
		for _, base := range invalidBases {
			h, ok := historyByName(base)
			if !ok {
				return nil, fmt.Errorf("build: no history %s", base)
			}
			s := snapshotOf(h.messages())
			if !m.Apply(&s) {
				continue
			}
			got := distinctCodes(contract.ValidateHistorySnapshot(&s))
			want := slices.Clone(m.Codes)
			if !sameSet(got, want) {
				return nil, fmt.Errorf("build: mutation %s on %s yields %q, its label says %q", m.Name, base, got, want)
			}
			snap, err := snapshotJSON(&s)
			if err != nil {
				return nil, fmt.Errorf("build: mutation %s: %w", m.Name, err)
			}
			data := envelope(fixtures.KindInvalidSnapshot,
				member{"name", str(m.Name)},
				member{"base", str(base)},
				member{"mutation", str(m.Name)},
				member{"expectedCodes", strs(want)},
				member{"snapshot", snap},
			)
			out = append(out, File{Path: "invalid/" + m.Name + ".json", Kind: fixtures.KindInvalidSnapshot, Data: layout(data, 3)})
			applied = true
			break
		}
		if !applied {
			return nil, fmt.Errorf("build: mutation %s applies to no base history", m.Name)
		}
	}
	return out, nil
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
