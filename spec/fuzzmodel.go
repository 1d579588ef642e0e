package spec

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// FuzzModel runs the model check as a coverage-guided fuzz target: the
// fuzzer's bytes choose the instances (one or two), their histories and
// model descriptors, a short sequence of operations and the seeds of their
// values (conformance.CheckModelInput), and every output is compared with
// the model of the contract. Like Fuzz, it first creates one instance
// holding the conformance fixture to read the families it declares it
// cannot hold (conformance.Instance.Limits), and draws none of them. An
// adapter repository writes
//
//	func FuzzModel(f *testing.F) { spec.FuzzModel(f, myFactory()) }
//
// and runs it with go test -fuzz FuzzModel; plain go test runs the seed
// corpus (testdata/fuzz/FuzzModel and the seeds FuzzModel adds). A failure
// is metadata only: operation names, sizes and codes. It takes the options
// of package conformance. Built for libFuzzer by a fuzzing service (f is
// not a *testing.F), every input reads the declared limits again and draws
// from its bytes what go test -fuzz draws from them.
func FuzzModel(f FuzzTarget, factory conformance.Factory, opts ...conformance.Option) {
	f.Helper()
	cfg := newConfig(factory, opts, "")
	tf, ok := f.(*testing.F)
	if !ok {
		f.Fuzz(func(t libFuzzerT, input []byte) {
			run, err := conformance.NewProjectionRun(context.Background(), cfg.factory, cfg.checkOpts...)
			if err != nil {
				t.Fatalf("%s", conformance.Redact(err.Error()))
			}
			checkModelInput(t, cfg, append(slices.Clone(cfg.checkOpts), conformance.WithoutFamilies(run.LeftOut()...)), input)
		})
		return
	}
	boundMinimization()
	run, err := conformance.NewProjectionRun(context.Background(), cfg.factory, append([]conformance.Option{conformance.WithTB(tf)}, cfg.checkOpts...)...)
	if err != nil {
		tf.Fatal(err)
	}
	checkOpts := append(slices.Clone(cfg.checkOpts), conformance.WithoutFamilies(run.LeftOut()...))
	for i := range 8 {
		r := rand.New(rand.NewPCG(uint64(i), 0x6d6f64656c))
		seed := make([]byte, 256)
		for j := range seed {
			seed[j] = byte(r.Uint32())
		}
		tf.Add(seed)
	}
	tf.Fuzz(func(t *testing.T, input []byte) { checkModelInput(t, cfg, checkOpts, input) })
}

// checkModelInput runs the model check on one fuzzer's input and fails
// (metadata only) when an output is not the model's.
func checkModelInput(t libFuzzerT, cfg *config, checkOpts []conformance.Option, input []byte) {
	t.Helper()
	err := conformance.CheckModelInput(context.Background(), cfg.factory, input, checkOpts...)
	var fail *conformance.Failure
	switch {
	case err == nil:
	case errors.As(err, &fail):
		t.Fatalf("%s\nrule:     %s\nexpected: %s\nactual:   %s", fail.Code, fail.Rule, fail.Expected, fail.Actual)
	default:
		t.Fatalf("%s", conformance.Redact(err.Error()))
	}
}
