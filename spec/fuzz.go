package spec

import (
	"context"
	"errors"
	"fmt"
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
func Fuzz(f *testing.F, factory conformance.Factory, opts ...conformance.Option) {
	f.Helper()
	boundMinimization()
	cfg := newConfig(factory, opts, "")
	// Seeds: pseudo-random inputs long enough for the generator to draw
	// whole histories from.
	for i := range 4 {
		r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
		seed := make([]byte, 8<<10)
		for j := range seed {
			seed[j] = byte(r.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(rapid.MakeFuzz(projectionFuzzer(f, cfg)))
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
}
