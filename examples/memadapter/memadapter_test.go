package memadapter_test

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

// TestConformance is all an adapter repository needs to run the whole
// conformance suite against its adapter from go test: the seven contract
// cases (each on a fresh instance), the in-order run, the extended checks
// and the property check. Select specs with Ginkgo's flags, for example
//
//	go test ./examples/memadapter -ginkgo.v -ginkgo.label-filter=privacy
//
// A repository that already has a Ginkgo suite writes instead, at package
// level: var _ = spec.Describe(memadapter.ConformanceFactory(true))
func TestConformance(t *testing.T) {
	spec.Run(t, memadapter.ConformanceFactory(true))
}

// TestConformanceReport runs the seven cases with the framework-free runner
// and asserts its report: what a repository without Ginkgo writes.
func TestConformanceReport(t *testing.T) {
	report, err := conformance.Run(context.Background(), memadapter.ConformanceFactory(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Assert(report); err != nil {
		t.Fatal(err)
	}
}

// FuzzProjection fuzzes the projection of generated histories through the
// adapter: go test ./examples/memadapter -run '^$' -fuzz FuzzProjection.
func FuzzProjection(f *testing.F) {
	spec.Fuzz(f, memadapter.ConformanceFactory(false))
}
