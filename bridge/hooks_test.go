package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/reference"
)

// What a factory says beside its adapter crosses the bridge: a history it
// cannot represent (with its family), the limits it declares, the history
// as it holds it, its source hook and its privacy configuration.
func TestFactoryHooksCrossTheBridge(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	base := reference.NewConformanceFactory()
	refusing := conformance.NewFactory("refusing", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if slices.Contains(gen.FamiliesOf(setup.Fixture.Messages), gen.FamilyMultiResult) {
			return conformance.Instance{}, conformance.Unrepresentable(gen.FamilyMultiResult, "tool message with two results")
		}
		for i := range setup.Fixture.Messages {
			setup.Fixture.Messages[i].Provenance.Source = contract.SourcePiSession
		}
		inst, err := base.Create(ctx, setup)
		inst.Limits = []gen.Family{gen.FamilyImage}
		inst.Held = setup.Fixture.Messages
		return inst, err
	})
	rep := conformance.RunChecks(ctx, Pipe(refusing, Options{}), conformance.WithChecks(
		conformance.CaseCanonicalHistory, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckSourceRevision,
		conformance.CheckSourceCorrupt, conformance.CheckPrivacyEngine), conformance.WithSeed(3))
	for _, r := range rep.Checks {
		if r.Status != conformance.StatusPass {
			t.Errorf("%s over the bridge: %s %+v (%s)", r.ID, r.Status, r.Failure, r.SkipReason)
		}
	}
	var names []string
	for _, l := range rep.Limits {
		names = append(names, l.Name()+": "+l.Reason)
	}
	want := []string{"multi-result: refused: tool message with two results", "image: declared by the instance",
		"provenance-source: held: the provenance source is the runtime's own legal one"}
	if !slices.Equal(names, want) {
		t.Errorf("limits over the bridge %q, want %q", names, want)
	}
	// A refusal without a family crosses the bridge as one, and fails.
	freeText := conformance.NewFactory("free text", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if slices.Contains(gen.FamiliesOf(setup.Fixture.Messages), gen.FamilyMultiResult) {
			return conformance.Instance{}, fmt.Errorf("%w: tool message with two results", conformance.ErrUnrepresentable)
		}
		return base.Create(ctx, setup)
	})
	c, _ := conformance.CheckByID(conformance.CheckProjection)
	if r := c.Run(ctx, Pipe(freeText, Options{}), conformance.WithSeed(3)); r.Status != conformance.StatusFail ||
		!strings.Contains(r.Failure.Actual, `a refusal naming no family of gen.Families ("tool message with two results")`) {
		t.Errorf("a free-text refusal over the bridge: %s %+v", r.Status, r.Failure)
	}
}
