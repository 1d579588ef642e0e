package spec

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// drawnHistory is a generated history that rapid's logs show by its size
// only, never its text.
type drawnHistory []contract.Message

// GoString is what rapid logs for a drawn history.
func (h drawnHistory) GoString() string { return fmt.Sprintf("(a history of %d messages)", len(h)) }

// FuzzTarget is the fuzz target Fuzz and FuzzModel drive: a *testing.F
// under go test, or the F that ClusterFuzzLite and OSS-Fuzz put in its
// place when they build a native Go fuzz target for libFuzzer
// (compile_native_go_fuzzer, with the F of
// github.com/AdamKorcz/go-118-fuzz-build/testing; docs/campaigns.md). Its
// methods are those both have; each gets a fuzz function of its own kind.
type FuzzTarget interface {
	Helper()
	Add(args ...any)
	Fuzz(ff any)
}

// libFuzzerT is what a fuzz function built for libFuzzer is handed in
// place of a *testing.T: a failure ends the input (and the process, which
// libFuzzer reports with the input), a skip ends the input alone.
type libFuzzerT interface {
	Helper()
	Fatalf(format string, args ...any)
	Skip(args ...any)
}

// Fuzz runs the projection check as a coverage-guided fuzz target: the
// fuzzer's bytes drive the history generator (gen.History, without the
// families conformance.WithoutFamilies leaves out),
// and every history is handed to factory and its snapshot checked, as the
// property spec does. An adapter repository writes
//
//	func FuzzProjection(f *testing.F) { spec.Fuzz(f, myFactory()) }
//
// and runs it with go test -fuzz FuzzProjection; plain go test runs the seed
// corpus (testdata/fuzz/FuzzProjection and the seeds Fuzz adds). It first
// creates one instance holding the conformance fixture to read the
// families it declares it cannot hold (conformance.Instance.Limits), and
// draws none of them, as the projection check does. A history
// the factory refuses by the rules one history shows (for a family it
// holds; see conformance.ErrUnrepresentable) is skipped, and a refusal
// breaking them fails; the rules across a series of histories are the
// property spec's and the projection check's. It takes the options
// of package conformance; the number of histories is the fuzzer's to choose.
// Unless -fuzzminimizetime is given, the fuzzer minimizes each input it
// keeps for at most 100 runs (see boundMinimization).
//
// Built for libFuzzer by a fuzzing service (f is not a *testing.F), every
// input reads the declared limits again, and draws its history from the
// seed its bytes hash to: the generator reads bytes only through Go's own
// fuzzer.
func Fuzz(f FuzzTarget, factory conformance.Factory, opts ...conformance.Option) {
	f.Helper()
	cfg := newConfig(factory, opts, "")
	tf, ok := f.(*testing.F)
	if !ok {
		f.Fuzz(func(t libFuzzerT, input []byte) {
			run, err := conformance.NewProjectionRun(context.Background(), cfg.factory, cfg.checkOpts...)
			if err != nil {
				t.Fatalf("%s", conformance.Redact(err.Error()))
			}
			fx := conformance.NewFixture()
			h := fnv.New64a()
			h.Write(input)
			msgs := gen.HistoryWithout(fx.RuntimeID, fx.SessionID, run.LeftOut()...).Example(int(h.Sum64() >> 1))
			checkFuzzedHistory(t, cfg, msgs)
		})
		return
	}
	boundMinimization()
	// Seeds: pseudo-random inputs long enough for the generator to draw
	// whole histories from.
	for i := range 4 {
		r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
		seed := make([]byte, 8<<10)
		for j := range seed {
			seed[j] = byte(r.Uint32())
		}
		tf.Add(seed)
	}
	tf.Fuzz(rapid.MakeFuzz(projectionFuzzer(tf, cfg)))
}

// projectionFuzzer returns the property Fuzz checks for each input: it
// reads the limits an instance declares once, then draws histories without
// them and checks each one's projection.
func projectionFuzzer(tb testing.TB, cfg *config) func(*rapid.T) {
	run, err := conformance.NewProjectionRun(context.Background(), cfg.factory, append([]conformance.Option{conformance.WithTB(tb)}, cfg.checkOpts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	fx := conformance.NewFixture()
	histories := gen.HistoryWithout(fx.RuntimeID, fx.SessionID, run.LeftOut()...)
	return func(t *rapid.T) {
		msgs := rapid.Map(histories, func(ms []contract.Message) drawnHistory { return ms }).Draw(t, "history")
		checkFuzzedHistory(t, cfg, msgs)
	}
}

// checkFuzzedHistory checks one history a fuzzer drew: skipped when the
// factory refuses it by the rules one history shows, failed (metadata
// only) when its projection breaks a rule.
func checkFuzzedHistory(t libFuzzerT, cfg *config, msgs []contract.Message) {
	t.Helper()
	err := conformance.CheckHistory(context.Background(), cfg.factory, msgs, cfg.checkOpts...)
	var fail *conformance.Failure
	switch {
	case err == nil:
	case errors.Is(err, conformance.ErrUnrepresentable):
		t.Skip("refused as unrepresentable")
	case errors.As(err, &fail):
		t.Fatalf("%s\nrule:     %s\nexpected: %s\nactual:   %s", fail.Code, fail.Rule, fail.Expected, fail.Actual)
	default:
		t.Fatalf("%s", conformance.Redact(err.Error()))
	}
}
