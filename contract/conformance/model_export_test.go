package conformance

import (
	"context"
	"math/rand/v2"
)

// ModelDamage runs, on one instance of factory holding the conformance
// fixture, a snapshot, a damage of the given kind through the instance's
// SourceBreaker, a snapshot and a rebuild (which must fail), a repair, and
// a snapshot and a rebuild (which must give the history back), each
// compared with the model as the model check compares it. It returns how
// many operations ran (an operation the source cannot take is skipped).
func ModelDamage(ctx context.Context, factory Factory, kind DamageKind) (int, error) {
	seed := 0
	for ; ; seed++ {
		rnd := rand.New(rand.NewPCG(uint64(seed), 0x6d6f64656c))
		if d, _ := drawDamage(NewFixture(), NewFixture().Messages, rnd, 1); d.Kind == kind {
			break
		}
	}
	seq := &modelSeq{fixtures: []Fixture{NewFixture()}, kv: []bool{false}, ops: []modelOp{
		{kind: opSnapshot}, {kind: opBreak, seed: seed, n: 1}, {kind: opSnapshot}, {kind: opRebuild},
		{kind: opRepair}, {kind: opSnapshot}, {kind: opRebuild}, {kind: opDiagnostics}}}
	e := &env{factory: factory, opts: newOptions(nil)}
	log, err := runSeq(ctx, e, seq, newModelCounts())
	if _, f, _ := result(CheckModel, err); f != nil {
		return len(log), f
	}
	return len(log), err
}
