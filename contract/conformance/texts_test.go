package conformance_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
)

// The failures of the fallback checks put the right article before a
// fallback code or a blank form ("an invalid-request", "an empty
// provider"), as every failure text of the catalogue must.
func TestFallbackFailuresReadRight(t *testing.T) {
	wrong := regexp.MustCompile(`\ba (?:[aeiou]|ASCII|NBSP)`)
	seen := 0
	checks := []string{conformance.CheckFallbacks, conformance.CheckInvalidRequests, conformance.CheckClosedFirst, conformance.CheckRecordedDiagnostics}
	for _, m := range mutants.Catalogue() {
		name := m.Name
		for _, id := range m.Fails {
			if !slices.Contains(checks, id) {
				continue
			}
			c, _ := conformance.CheckByID(id)
			r := c.Run(context.Background(), m.Factory(reference.NewConformanceFactory()))
			if r.Failure == nil {
				t.Fatalf("%s: %s did not fail", name, id)
			}
			seen++
			for _, text := range []string{r.Failure.Rule, r.Failure.Expected, r.Failure.Actual} {
				if w := wrong.FindString(text); w != "" {
					t.Errorf("%s, %s: %q reads %q", name, id, text, w)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no failure seen")
	}
}
