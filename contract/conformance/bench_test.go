package conformance_test

import (
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// BenchmarkRun measures a whole run of the seven cases, factory and
// cleanup included, against the in-memory example adapter.
func BenchmarkRun(b *testing.B) {
	f := correct()
	b.ReportAllocs()
	for b.Loop() {
		if r, err := conformance.Run(ctx, f); err != nil || !r.Passed {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck measures one check on a fresh instance, as the Ginkgo
// suite runs each check.
func BenchmarkCheck(b *testing.B) {
	f := correct()
	c, _ := conformance.CheckByID(conformance.CasePrivacy)
	b.ReportAllocs()
	for b.Loop() {
		if r := c.Run(ctx, f); r.Status != conformance.StatusPass {
			b.Fatal(r.Failure)
		}
	}
}
