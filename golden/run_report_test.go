package golden_test

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/golden"
	"github.com/ds4context/adapterkit/reference"
)

// TestReferenceRunReportGolden pins the format of the run report
// (adapterkit-conformance-run-v1) on the reference adapter: every check of
// the catalogue with its kind, capability, status and note, the skip reason
// of the embedding check (the plain factory has no port), and the
// seven-case report embedded unchanged. A new check changes this file; a
// changed field name or status word is a new report version.
func TestReferenceRunReportGolden(t *testing.T) {
	// A fixed seed: the model check's note names its seed and counts.
	rep := conformance.RunChecks(context.Background(), reference.NewConformanceFactory(), conformance.WithSeed(1))
	if !rep.Passed || rep.Conformance == nil {
		t.Fatalf("the reference adapter's run did not pass: %+v", rep)
	}
	golden.Assert(t, "run-report-reference", rep,
		golden.Hint("a renamed field or status is a new "+conformance.RunReportVersion+" version; a new check only adds a row"))
}
