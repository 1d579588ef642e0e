package mutants_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
)

func TestZZSurvey(t *testing.T) {
	if os.Getenv("SURVEY") == "" {
		t.Skip()
	}
	c, _ := conformance.CheckByID(conformance.CheckModel)
	var mu sync.Mutex
	var lines []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, m := range mutants.Catalogue() {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := c.Run(context.Background(), m.Factory(base()), conformance.WithSeed(seed))
			line := fmt.Sprintf("%s\t%s\t%v", m.Name, r.Status, r.Duration)
			if r.Failure != nil {
				line += "\t" + strings.ReplaceAll(r.Failure.Rule, "\n", " ")
			}
			mu.Lock()
			lines = append(lines, line)
			mu.Unlock()
		})
	}
	wg.Wait()
	os.WriteFile("/tmp/survey.txt", []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
