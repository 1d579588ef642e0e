package golden_test

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/golden"
	"github.com/ds4context/adapterkit/reference"
)

// TestReferenceConformanceReportGolden pins the reference adapter's
// conformance report: seven passing cases, in order, under the report
// format version.
func TestReferenceConformanceReportGolden(t *testing.T) {
	report, err := conformance.Run(context.Background(), reference.NewConformanceFactory())
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "conformance-report-reference", report)
	if err := conformance.Assert(report); err != nil {
		t.Error(err)
	}
}
