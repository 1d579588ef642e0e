package conformance

import (
	"math/rand/v2"
	"testing"
)

// A shard counts the operations of another shard's sequence from its head
// alone (seqSteps): that count must be what drawing the whole sequence
// gives, for every budget, on one instance or two, short sequences too.
func TestSeqStepsIsWhatDrawSeqDraws(t *testing.T) {
	for k := range 60 {
		s := seqSeed(0xc0ffee, k)
		for _, maxOps := range []int{modelFuzzOps, modelFuzzOps + 1, 90, modelMaxOps} {
			twins := k%3 == 0
			want := seqSteps(rand.New(rand.NewPCG(s, s^0x6d6f64656c)), modelMinOps, maxOps, twins)
			seq := drawSeq(rand.New(rand.NewPCG(s, s^0x6d6f64656c)), s, modelMinOps, maxOps, twins, nil)
			if got := len(seq.ops) - seq.opening; got != want {
				t.Fatalf("sequence %d, at most %d operations, twins %t: drawSeq draws %d steps, seqSteps says %d", k, maxOps, twins, got, want)
			}
		}
	}
}
