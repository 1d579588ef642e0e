package bridge

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/reference"
)

// What a factory says beside its adapter crosses the bridge: a history it
// cannot represent, its source hook and its privacy configuration.
func TestFactoryHooksCrossTheBridge(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	base := reference.NewConformanceFactory()
	refusing := conformance.NewFactory("refusing", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		for _, f := range gen.FamiliesOf(setup.Fixture.Messages) {
			if f == gen.FamilyMultiResult {
				return conformance.Instance{}, conformance.Unrepresentable("tool message with two results")
			}
		}
		return base.Create(ctx, setup)
	})
	rep := conformance.RunChecks(ctx, Pipe(refusing, Options{}), conformance.WithChecks(
		conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckSourceRevision,
		conformance.CheckSourceCorrupt, conformance.CheckPrivacyEngine))
	for _, r := range rep.Checks {
		if r.Status != conformance.StatusPass {
			t.Errorf("%s over the bridge: %s %+v (%s)", r.ID, r.Status, r.Failure, r.SkipReason)
		}
		if r.ID == conformance.CheckProjection && r.Refusals["tool message with two results"] == 0 {
			t.Errorf("projection over the bridge counted no refusal: %q", r.Note)
		}
	}
}
