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

// BenchmarkRunCase measures one case on a fresh session, as the Ginkgo
// suite runs each case.
func BenchmarkRunCase(b *testing.B) {
	f := correct()
	b.ReportAllocs()
	for b.Loop() {
		s, err := conformance.Start(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		if r := s.RunCase(ctx, conformance.CasePrivacy); !r.Passed {
			b.Fatal(r.Failure)
		}
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
