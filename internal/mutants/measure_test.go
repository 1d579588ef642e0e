package mutants_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// measureEnv, set to 1, makes TestMeasurePendingAndLegal run the whole
// catalogue of checks, with default options, on every mutant of Pending,
// every mutant of their families in Catalogue and every legal variant, for
// seeds 1 to 5, and log which checks fail each
// and for how many seeds: the table that shows what the kit sees of them.
const measureEnv = "ADAPTERKIT_MUTANTS_MEASURE"

func TestMeasurePendingAndLegal(t *testing.T) {
	if os.Getenv(measureEnv) != "1" {
		t.Skip("runs the catalogue 5 times per pending mutant and legal variant; set " + measureEnv + "=1")
	}
	const seeds = 5
	names := []string{}
	if only := os.Getenv(measureEnv + "_ONLY"); only != "" {
		names = strings.Split(only, ",")
	}
	type row struct {
		m      mutants.Mutant
		legal  bool
		caught map[string]int
		seeds  int // seeds for which some check failed it
	}
	var rows []*row
	for _, m := range mutants.Catalogue() {
		if m.Family != "" {
			rows = append(rows, &row{m: m, caught: map[string]int{}})
		}
	}
	for _, m := range mutants.Pending() {
		rows = append(rows, &row{m: m, caught: map[string]int{}})
	}
	for _, m := range mutants.LegalVariants() {
		rows = append(rows, &row{m: m, legal: true, caught: map[string]int{}})
	}
	rows = slices.DeleteFunc(rows, func(r *row) bool { return len(names) > 0 && !slices.Contains(names, r.m.Name) })
	var mu sync.Mutex
	todo := make(chan *row)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for r := range todo {
				for s := uint64(1); s <= seeds; s++ {
					rep := conformance.RunChecks(context.Background(), r.m.Factory(base()), conformance.WithSeed(s))
					mu.Lock()
					if !rep.Passed {
						r.seeds++
					}
					for _, c := range rep.Checks {
						if !c.Passed() {
							r.caught[c.ID]++
							if c.Failure != nil && r.caught[c.ID] == 1 {
								t.Logf("%s seed %d: %s: %s — expected %s, actual %s", r.m.Name, s, c.ID, c.Failure.Rule, c.Failure.Expected, c.Failure.Actual)
							}
						}
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, r := range rows {
		todo <- r
	}
	close(todo)
	wg.Wait()
	var b strings.Builder
	b.WriteString("\n| mutant | family | kind | caught by (checks: seeds of 5) | seeds caught |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		kind := "mutant"
		if r.legal {
			kind = "legal variant"
		}
		var by []string
		for _, id := range slices.Sorted(maps.Keys(r.caught)) {
			by = append(by, fmt.Sprintf("`%s`: %d", id, r.caught[id]))
		}
		caught := "none"
		if len(by) > 0 {
			caught = strings.Join(by, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %d |\n", r.m.Name, r.m.Family, kind, caught, r.seeds)
	}
	t.Log(b.String())
}
