package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract/gen"
)

// DefaultModelSteps is how many operations the model check runs by
// default, over as many sequences as they fill.
const DefaultModelSteps = 1000

// Bounds of the model check's shrinking of a failing sequence: how many
// shorter sequences it tries, and how many operations those tries may run
// in all (about five default runs). Both count work, not time, so that a
// failure shrinks to the same sequence on a busy machine as on an idle
// one.
const (
	modelShrinkTries = 400
	modelShrinkOps   = 5 * DefaultModelSteps
)

func modelChecks() []Check {
	return []Check{{ID: CheckModel, Kind: KindExtended, run: checkModel, seeded: true, split: true,
		Summary: "random sequences of every operation (local KV through a recording port included), on one instance or two side by side, answer output by output as an executable model of the contract says; every returned value is a copy",
		Rule:    "an adapter answers any sequence of operations as the contract says, output by output, wherever SPEC pins the answer"}}
}

// seqSeed is the seed of the i-th sequence of a run seeded with seed.
func seqSeed(seed uint64, i int) uint64 {
	x := seed + uint64(i+1)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	return x
}

func checkModel(ctx context.Context, e *env) error {
	steps := e.opts.ModelSteps
	if steps <= 0 {
		return skip("no model steps were asked for (WithModelSteps(0))")
	}
	seed := e.seed()
	// No sequence draws a family the run leaves out or the instance
	// declares it cannot hold. A family refused in one sequence is left
	// out of that sequence's later appends and rewrites only: each
	// sequence is drawn from its own seed alone, so that any part of a
	// run draws what the whole run draws.
	leave, err := modelLeave(ctx, e)
	if err != nil {
		return err
	}
	counts := newModelCounts()
	counts.limits = &e.limits
	// ops counts the operations of every sequence of the campaign, which
	// decides how many there are; ran and run those of the sequences this
	// run owns (all of them unless it is a shard).
	ops, seqs, ran, run := 0, 0, 0, 0
	replay := fmt.Sprintf("--seed %d --model-steps %d", seed, steps)
	if e.opts.sharded() {
		replay += fmt.Sprintf(" --shard %d/%d", e.opts.Shard, e.opts.Shards)
	}
	for ops < steps {
		k := seqs
		s := seqSeed(seed, k)
		maxOps := min(modelMaxOps, steps-ops)
		seqs++
		// The first sequence of every run puts two instances side by
		// side, so that no run leaves their independence untried.
		twins := k == 0
		want := seqSteps(rand.New(rand.NewPCG(s, s^0x6d6f64656c)), modelMinOps, maxOps, twins)
		ops += want
		if !e.opts.owns(k) {
			// Another shard's sequence: its head alone says how many
			// operations it takes.
			continue
		}
		seq := drawSeq(rand.New(rand.NewPCG(s, s^0x6d6f64656c)), s, modelMinOps, maxOps, twins, leave)
		if got := len(seq.ops) - seq.opening; got != want {
			return fmt.Errorf("conformance: sequence %d of seed %s draws %d operations, its head %d: the shards of a campaign would not add up", k+1, seedText(seed), got, want)
		}
		ran++
		run += want
		if _, ranOps, err := runSeqAt(ctx, e, seq, counts); err != nil {
			e.cover("sequences", ran)
			e.cover("operations", run)
			where := fmt.Sprintf("sequence %d of seed %s (replay: %s)", seqs, seedText(seed), replay)
			switch {
			case errors.As(err, new(errBeforeOps)):
				// Starting the instances failed: no operation ran, so
				// there is nothing to shrink.
				return withNote(err, where+", before its first operation, starting "+instanceCount(len(seq.fixtures)))
			case errors.As(err, new(*skipped)) || errors.As(err, new(*callTimeout)):
				// A call that never returned is not shrunk: every try
				// would wait out the bound again.
				return withNote(err, where)
			}
			return shrinkModel(ctx, e, seq, ranOps, err, where)
		}
	}
	e.cover("sequences", ran)
	e.cover("operations", run)
	e.note = fmt.Sprintf("%d sequences, %d operations, seed %s", ran, run, seedText(seed))
	if e.opts.sharded() {
		e.note += fmt.Sprintf(" (%s: %d of the campaign's %d sequences, %d operations)", e.opts.shardText(), ran, seqs, ops)
	}
	e.note += counts.summary()
	return nil
}

// summary is what the note of a passing model check adds to its counts of
// sequences and operations: refusals by family, local KV completions by
// outcome and skipped operations by reason.
func (c *modelCounts) summary() string {
	var note string
	if len(c.refused) > 0 {
		var parts []string
		for _, f := range gen.Families() {
			if n := c.refused[f]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, f))
			}
		}
		note += "; refused: " + strings.Join(parts, ", ")
	}
	var kv, parts []string
	for _, outcome := range slices.Sorted(maps.Keys(c.kv)) {
		kv = append(kv, fmt.Sprintf("%d %s", c.kv[outcome], outcome))
	}
	for _, reason := range slices.Sorted(maps.Keys(c.skipped)) {
		parts = append(parts, fmt.Sprintf("%d skipped: %s", c.skipped[reason], reason))
	}
	if len(kv) > 0 {
		note += "; local KV completions: " + strings.Join(kv, ", ")
	}
	if len(parts) > 0 {
		note += "; " + strings.Join(parts, "; ")
	}
	return note
}

// drawSeqHead draws what a sequence's seed draws first (drawSeq): how many
// instances it runs — two when twins is set, and otherwise two in
// modelTwinOdds draws — and how many operations it draws, minOps to maxOps
// (fewer when maxOps is smaller), spread over their orders of magnitude.
func drawSeqHead(r *rand.Rand, minOps, maxOps int, twins bool) (instances, n int) {
	instances = 1
	if r.IntN(modelTwinOdds) == 0 || twins {
		instances = 2
	}
	return instances, logIntN(r, min(minOps, max(maxOps, 1)), max(maxOps, 1))
}

// seqSteps returns how many of the run's steps the sequence drawn from r
// takes, from its head alone (without drawing its histories): its drawn
// operations and the reads that close it on each of its drawn instances —
// every operation of the sequence but the opening ones. checkModel checks
// drawSeq agrees.
func seqSteps(r *rand.Rand, minOps, maxOps int, twins bool) int {
	instances, n := drawSeqHead(r, minOps, maxOps, twins)
	return n + instances*len(closingReads)
}

// modelLeave returns the families no sequence of the run draws: those the
// options leave out and those an instance holding the conformance fixture
// declares it cannot hold (each a limit of the run).
func modelLeave(ctx context.Context, e *env) ([]gen.Family, error) {
	leave := slices.Clone(e.opts.LeftOut)
	declared, err := declaredLimits(ctx, e)
	if err != nil {
		return nil, err
	}
	for _, f := range declared {
		if !slices.Contains(leave, f) {
			e.limits.add(Limit{Family: f, Reason: "declared by the instance"})
			leave = append(leave, f)
		}
	}
	return leave, nil
}

// instanceCount is "1 instance" or "n instances".
func instanceCount(n int) string {
	if n == 1 {
		return "1 instance"
	}
	return fmt.Sprintf("%d instances", n)
}

// shrinkModel shrinks a failing sequence, whose first ran operations ran,
// to a shorter one that still fails — first cutting the operations after
// the one that failed, which never ran, then
// removing runs of operations, halving their length each round, within a
// try and an operation budget — and returns the failure of the shortest,
// its operations shown as metadata.
func shrinkModel(ctx context.Context, e *env, seq *modelSeq, ran int, err error, where string) error {
	if e.opts.NoShrink {
		return withNote(err, where)
	}
	tries, spent := 0, 0
	fails := func(cand []modelOp) (int, error) {
		tries++
		_, ran, err := runSeqAt(ctx, e, seq.withOps(cand), newModelCounts())
		spent += ran
		if errors.As(err, new(*skipped)) || errors.As(err, new(*callTimeout)) || errors.As(err, new(errBeforeOps)) {
			return ran, nil // a different failure: keep the longer sequence
		}
		return ran, err
	}
	ops := slices.Clone(seq.ops[:ran])
	for size := max(len(ops)/2, 1); size >= 1; size /= 2 {
		for start := 0; start < len(ops) && tries < modelShrinkTries && spent < modelShrinkOps; {
			cand := slices.Concat(ops[:start], ops[min(start+size, len(ops)):])
			if ran, ferr := fails(cand); ferr != nil {
				ops, err = cand[:ran], ferr
				continue
			}
			start += size
		}
		if size == 1 {
			break
		}
	}
	log, _ := runSeq(ctx, e, seq.withOps(ops), newModelCounts())
	return withNote(err, fmt.Sprintf("%s, %d instance(s), shrunk from %d to %d operations: %s",
		where, len(seq.fixtures), len(seq.ops), len(ops), describeOps(log)))
}

// CheckModelInput runs the model check on one sequence of operations drawn
// from input (the bytes a fuzzer mutates: they choose the instances, the
// operations and the seeds of their values) on fresh instances created by
// factory. It returns nil when every output equals the model's, and
// otherwise a *Failure (or an error of the factory or a shutdown), whose
// text is metadata only. Package spec's FuzzModel is its fuzz target.
func CheckModelInput(ctx context.Context, factory Factory, input []byte, opts ...Option) error {
	o := newOptions(opts)
	e := &env{factory: factory, opts: o}
	seq := drawSeq(rand.New(newByteSource(input)), 0, 1, modelFuzzOps, false, o.LeftOut)
	seq.fixtures, seq.kv = seq.fixtures[:1], seq.kv[:1] // one instance: the fuzzer's runs stay short
	for i := range seq.ops {
		seq.ops[i].inst = 0
	}
	log, err := runSeq(ctx, e, seq, newModelCounts())
	err = errors.Join(err, e.closeAll(ctx))
	if err == nil {
		return nil
	}
	err = withNote(err, fmt.Sprintf("%d instance(s), %d operations: %s", len(seq.fixtures), len(seq.ops), describeOps(log)))
	status, f, _ := result(CheckModel, err)
	if status == StatusSkip {
		return nil
	}
	return f
}
