package conformance

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract/gen"
)

// opKind names an operation of the model check.
type opKind uint8

const (
	opSnapshot opKind = iota
	opRebuild
	opAppend
	opRewrite
	opCorrupt
	opEnforce
	opComplete
	opNegotiate
	opDeclarations
	opIdentity
	opRoot
	opModel
	opDiagnostics
	opEmbed
	opLocalKV
	opShutdown
	opBurst
	// opCancelled is a completion of a small payload whose context ends
	// while the transport waits for it: never drawn, it opens every
	// sequence (see cancelledRun).
	opCancelled
	// opFlood records more diagnostics than SPEC's bound in one
	// operation: never drawn, it opens the first sequence of every run
	// (see flood).
	opFlood
	// opBreak damages the source (SourceBreaker); opRepair undoes it.
	opBreak
	opRepair
	// opMixed runs operations of different kinds at once (model_mixed.go).
	opMixed
	// opBounds crosses the size bounds SPEC names: never drawn, it opens
	// the first sequence of every run, after opFlood (bounds).
	opBounds
	// opShutdownCancelled shuts down with a context already cancelled:
	// never drawn, it closes the first sequence of every run (see
	// closingLifecycle).
	opShutdownCancelled
	// opRewriteSameSize rewrites a message in place keeping the size of
	// its entry: never drawn, it opens the first sequence of every run.
	opRewriteSameSize
	// opSplitExchange appends one part of a tool exchange whose call is
	// read before its results (op.shape: 1 the call, 2 and 3 a result):
	// never drawn, it opens the first sequence of every run.
	opSplitExchange
	opKinds
)

var opNames = [opKinds]string{"snapshot", "rebuild", "source-append", "source-rewrite", "source-corrupt", "enforce",
	"complete", "negotiate", "declarations", "identity", "trusted-root", "current-model", "diagnostics", "embed",
	"local-kv-diagnostics", "shutdown", "burst", "cancelled-complete", "flood", "source-break", "source-repair", "mixed-burst", "bounds", "cancelled-shutdown", "same-size-rewrite", "split-exchange"}

// opWeights are how often each operation is drawn (out of their sum).
var opWeights = [opKinds]int{16, 8, 12, 6, 1, 16, 28, 8, 4, 4, 4, 4, 6, 4, 2, 1, 4, 0, 0, 3, 3, 4, 0, 0, 0, 0}

// cancelledRun is how many cancelled completions open every sequence on
// each instance (a fuzzer's short sequences excepted), before any drawn
// operation: a defect that comes back every n-th transport call, for n up
// to it — a context dropped every 16th time — shows in every run, not
// only when the draws happen to cancel the n-th call. They are not drawn,
// so they take none of the run's steps.
const cancelledRun = 32

// modelOp is one drawn operation: its kind, the instance it acts on, the
// seed its values are drawn from when it runs, and its position in the
// drawn sequence (which keeps appended ids unique when shrinking removes
// operations).
type modelOp struct {
	kind opKind
	inst int
	seed int
	n    int
	// shape, when not 0, is the damage shape (1 + an index of
	// damageShapes) a break applies instead of drawing one.
	shape int
}

// modelSeq is one drawn sequence: the instances' fixtures and the
// operations.
type modelSeq struct {
	seed     uint64
	fixtures []Fixture
	ops      []modelOp
	// kv says, per instance, whether its factory is given a local KV port.
	kv []bool
	// small keeps histories and payloads small (a fuzzer's sequences).
	small bool
	// opening is how many operations open the sequence without being
	// drawn (cancelledRun's).
	opening int
	// leave are the families no history, append or rewrite of the
	// sequence draws: those the run leaves out (WithoutFamilies), those
	// the instance declares it cannot hold (Instance.Limits), and those
	// refused earlier in the run.
	leave []gen.Family
}

// withOps returns a copy of s running ops instead of its own (a shrunk
// sequence).
func (s *modelSeq) withOps(ops []modelOp) *modelSeq {
	c := *s
	c.ops = ops
	return &c
}

// Shape of drawn sequences.
const (
	// modelMaxOps is the longest drawn sequence: long enough that per-call
	// counters pass 64 completions.
	modelMaxOps = 400
	// modelMinOps is the shortest drawn sequence (unless fewer steps are
	// left): every sequence starts instances, which over a process bridge
	// costs more than many operations.
	modelMinOps = 40
	// modelFuzzOps is the longest sequence a fuzzer's input draws: short,
	// so that the fuzzer runs many.
	modelFuzzOps = 12
	// modelTwinOdds: one sequence in modelTwinOdds runs two instances side
	// by side.
	modelTwinOdds = 4
	// modelMaxHistory is the longest initial history.
	modelMaxHistory = 2000
)

// byteSource is a rand.Source reading a fuzzer's bytes, then a PCG seeded
// with their length (a source of zeros would make rand's rejection
// sampling loop for ever).
type byteSource struct {
	data []byte
	rest *rand.PCG
}

func newByteSource(data []byte) *byteSource {
	return &byteSource{data: data, rest: rand.NewPCG(uint64(len(data)), 0x6279746573)}
}

func (b *byteSource) Uint64() uint64 {
	if len(b.data) == 0 {
		return b.rest.Uint64()
	}
	var tmp [8]byte
	n := copy(tmp[:], b.data)
	b.data = b.data[n:]
	return binary.LittleEndian.Uint64(tmp[:])
}

// logIntN draws a size in [lo, hi] spread over its orders of magnitude.
func logIntN(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	f := math.Pow(float64(hi)/float64(max(lo, 1)), r.Float64())
	return min(max(int(float64(max(lo, 1))*f), lo), hi)
}

// drawSeq draws a sequence of minOps to maxOps operations from r (fewer
// when maxOps is smaller), on two instances when twins is set and
// otherwise on two in modelTwinOdds draws.
func drawSeq(r *rand.Rand, seed uint64, minOps, maxOps int, twins bool, leave []gen.Family) *modelSeq {
	seq := &modelSeq{seed: seed, small: maxOps <= modelFuzzOps}
	if seq.small {
		leave = append(slices.Clone(leave), gen.FamilyLongHistory)
	}
	seq.leave = slices.Clone(leave)
	// The head — how many instances and drawn operations — comes first
	// (drawSeqHead, model_check.go), so that a shard of a campaign counts
	// a sequence's operations without drawing its histories.
	instances, n := drawSeqHead(r, minOps, maxOps, twins)
	seq.drawFixtures(r, instances)
	if !seq.small {
		for i := range instances {
			for j := range cancelledRun {
				seq.ops = append(seq.ops, modelOp{kind: opCancelled, inst: i, seed: j}) // n only matters to appends
			}
		}
		if twins {
			seq.crossBounds(r)
		}
		seq.opening = len(seq.ops)
	}
	total := 0
	for _, w := range opWeights {
		total += w
	}
	for i := range n {
		k, pick := opKind(0), r.IntN(total)
		for ; pick >= opWeights[k]; k++ {
			pick -= opWeights[k]
		}
		seq.ops = append(seq.ops, modelOp{kind: k, inst: r.IntN(instances), seed: int(r.Int32()), n: i})
	}
	// Every sequence ends by reading what each instance says of itself
	// and holds, so that what one instance did to another shows whatever
	// operations were drawn.
	for i := range instances {
		for _, k := range closingReads {
			seq.ops = append(seq.ops, modelOp{kind: k, inst: i, seed: int(r.Int32()), n: len(seq.ops)})
		}
	}

	// Drawn last, so that the draws above are those of a run without
	// local KV. The first sequence of a run gives its second instance a
	// port, so that no run leaves local KV untried.
	for i := range instances {
		seq.kv = append(seq.kv, r.IntN(modelKVOdds) == 0 || twins && i == 1)
	}
	if twins && !seq.small {
		// And a third instance, holding the conformance fixture, goes
		// through the lifecycle at once: shut down with a cancelled
		// context, used, shut down again — so that no run leaves the
		// lifecycle to the draw of the other two.
		seq.fixtures = append(seq.fixtures, NewFixture())
		seq.kv = append(seq.kv, false)
		lifecycle := make([]modelOp, len(closingLifecycle))
		for i, k := range closingLifecycle {
			lifecycle[i] = modelOp{kind: k, inst: 2, seed: int(r.Int32()), n: len(seq.ops) + i}
		}
		seq.ops = slices.Insert(seq.ops, seq.opening, lifecycle...)
		seq.opening += len(lifecycle)
		// And a fourth holds a history past 10,000 messages, read once:
		// SPEC §6 makes 100,000 ordinary, so a cap of 10,000 is a defect.
		// A history of 100,000 messages is not drawn: one read of it
		// costs seconds of CPU (the reference adapter's own tests cross
		// its bound, configured small).
		long := NewFixture()
		long.Messages = gen.SyntheticHistory{RuntimeID: long.RuntimeID, SessionID: long.SessionID}.Messages(modelLongestHistory)
		seq.fixtures = append(seq.fixtures, long)
		seq.kv = append(seq.kv, false)
		reads := []modelOp{{kind: opSnapshot, inst: 3}}
		seq.ops = slices.Insert(seq.ops, seq.opening, reads...)
		seq.opening += len(reads)
	}
	return seq
}

// modelLongestHistory is the length of the history the first sequence of
// every run reads once: one past 10,000, the shortest length a runtime may
// refuse to hold (MinLongHistoryRefusal).
const modelLongestHistory = MinLongHistoryRefusal + 1

// closingReads are the operations that end every sequence, on each
// instance.
var closingReads = []opKind{opIdentity, opRoot, opModel, opDeclarations, opDiagnostics, opSnapshot}

// closingLifecycle opens the first sequence of every run, on a third
// instance of its own: a shutdown with a cancelled context, the calls a
// closed adapter answers in its own way, a second shutdown and what it
// recorded — so that no run leaves the lifecycle to the draw.
var closingLifecycle = []opKind{opShutdownCancelled, opSnapshot, opRebuild, opComplete, opEnforce, opShutdown, opDiagnostics, opDeclarations}

// describeOps shows operations as metadata: names, instances and what each
// op observed (sizes, codes), never payload or text.
func describeOps(log []string) string {
	const most = 40
	if len(log) > most {
		log = append(append([]string{}, log[:most/2]...), append([]string{fmt.Sprintf("… %d more …", len(log)-most)}, log[len(log)-most/2:]...)...)
	}
	return strings.Join(log, "; ")
}

// crossBounds appends the opening of the first sequence of a run: it
// crosses the diagnostics bound and the size bounds, on an instance still
// open and whole, and breaks its second instance's source in every shape,
// reading it broken and repaired each time.
func (seq *modelSeq) crossBounds(r *rand.Rand) {
	seq.ops = append(seq.ops, modelOp{kind: opFlood, inst: 0, seed: int(r.Int32())},
		modelOp{kind: opBounds, inst: 0, seed: int(r.Int32()), n: len(seq.ops) + 1}, modelOp{kind: opSnapshot, inst: 0})
	// An append first, so that the newest message holds history
	// text (the history probe).
	seq.ops = append(seq.ops, modelOp{kind: opAppend, inst: 1, seed: int(r.Int32()), n: len(seq.ops)}, modelOp{kind: opSnapshot, inst: 1})
	for k := range damageShapes {
		for i, kind := range []opKind{opBreak, opSnapshot, opRebuild, opRepair, opSnapshot} {
			seed := 0x5eed + 5*k + i // a later shape's (damageShapes)
			if k < firstDamageShapes {
				seed = int(r.Int32())
			}
			seq.ops = append(seq.ops, modelOp{kind: kind, inst: 1, seed: seed, n: len(seq.ops), shape: k + 1})
		}
	}
	seq.ops = append(seq.ops, modelOp{kind: opRewriteSameSize, inst: 1, seed: int(r.Int32())}, modelOp{kind: opSnapshot, inst: 1})
	// A tool exchange whose calls are read before their results, each
	// result read on its own: a live call, then a batch half answered,
	// then whole.
	n := len(seq.ops)
	for part := 1; part <= 3; part++ {
		seq.ops = append(seq.ops, modelOp{kind: opSplitExchange, inst: 1, n: n, shape: part}, modelOp{kind: opSnapshot, inst: 1})
	}
	// Then more completions than any window a counter might slip into
	// on the instance given a local KV port (most of them local KV
	// requests), and its counters: §11's count every request since the
	// adapter started.
	for range modelCounterRun {
		seq.ops = append(seq.ops, modelOp{kind: opComplete, inst: 1, seed: int(r.Int32()), n: len(seq.ops)})
	}
	seq.ops = append(seq.ops, modelOp{kind: opLocalKV, inst: 1})
}

// modelCounterRun is how many completions the first sequence of a run
// makes on its instance with a local KV port before reading its counters:
// past 64 (a power of two a counter window might take), with room for the
// completions drawn not to be local KV requests.
const modelCounterRun = 96

// drawFixtures draws the fixture of each of the sequence's instances: the
// conformance fixture with a drawn model, holding a drawn history one time
// in six and (unless the sequence is small) a long synthetic one in twelve.
func (seq *modelSeq) drawFixtures(r *rand.Rand, instances int) {
	for range instances {
		fx := NewFixture()
		fx.Model = gen.ModelDescriptor().Example(int(r.Int32()))
		switch r.IntN(12) {
		case 0, 1:
			fx.Messages = gen.HistoryWithout(fx.RuntimeID, fx.SessionID, seq.leave...).Example(int(r.Int32()))
		case 2:
			if seq.small {
				break
			}
			n := logIntN(r, 10, modelMaxHistory)
			fx.Messages = gen.SyntheticHistory{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, TextBytes: r.IntN(2) * 200}.Messages(n)
		}
		seq.fixtures = append(seq.fixtures, fx)
	}
}
