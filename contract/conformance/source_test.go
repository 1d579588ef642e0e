package conformance_test

import (
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/reference"
)

// newChecks are the source, aliasing and cancellation checks.
var newChecks = []string{conformance.CheckSourceAppend, conformance.CheckSourceRevision, conformance.CheckSourceCorrupt,
	conformance.CheckSnapshotAliasing, conformance.CheckPayloadUnmodified, conformance.CheckCancellation}

func TestNewChecksPassReferenceAndExample(t *testing.T) {
	for name, f := range map[string]conformance.Factory{
		"reference": reference.NewConformanceFactory(),
		"example":   memadapter.ConformanceFactory(false),
	} {
		for _, id := range newChecks {
			c, ok := conformance.CheckByID(id)
			if !ok {
				t.Fatalf("no check %s", id)
			}
			r := c.Run(ctx, f)
			if r.Status != conformance.StatusPass {
				t.Errorf("%s: %s %s: %+v %s", name, id, r.Status, r.Failure, r.SkipReason)
			}
			t.Logf("%s %s: %s in %s", name, id, r.Status, r.Duration)
		}
	}
}
