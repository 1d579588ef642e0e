package conformance

import (
	"context"
	"slices"
)

// ModelDamage runs, on one instance of factory holding the conformance
// fixture, a snapshot, a damage of the given kind through the instance's
// SourceBreaker, a snapshot and a rebuild (which must fail), a repair, and
// a snapshot and a rebuild (which must give the history back), each
// compared with the model as the model check compares it. It returns how
// many operations ran (an operation the source cannot take is skipped).
func ModelDamage(ctx context.Context, factory Factory, kind DamageKind) (int, error) {
	shape := slices.IndexFunc(damageShapes, func(s struct {
		kind   DamageKind
		record string
	}) bool {
		return s.kind == kind
	})
	seq := &modelSeq{fixtures: []Fixture{NewFixture()}, kv: []bool{false}, ops: []modelOp{
		{kind: opSnapshot}, {kind: opBreak, n: 1, shape: shape + 1}, {kind: opSnapshot}, {kind: opRebuild},
		{kind: opRepair}, {kind: opSnapshot}, {kind: opRebuild}, {kind: opDiagnostics}}}
	e := &env{factory: factory, opts: newOptions(nil)}
	log, err := runSeq(ctx, e, seq, newModelCounts())
	if _, f, _ := result(CheckModel, err); f != nil {
		return len(log), f
	}
	return len(log), err
}
