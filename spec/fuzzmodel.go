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
// of package conformance.
func FuzzModel(f *testing.F, factory conformance.Factory, opts ...conformance.Option) {
	f.Helper()
	boundMinimization()
	cfg := newConfig(factory, opts, "")
	run, err := conformance.NewProjectionRun(context.Background(), cfg.factory, append([]conformance.Option{conformance.WithTB(f)}, cfg.checkOpts...)...)
	if err != nil {
		f.Fatal(err)
	}
	checkOpts := append(slices.Clone(cfg.checkOpts), conformance.WithoutFamilies(run.LeftOut()...))
	for i := range 8 {
		r := rand.New(rand.NewPCG(uint64(i), 0x6d6f64656c))
		seed := make([]byte, 256)
		for j := range seed {
			seed[j] = byte(r.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		err := conformance.CheckModelInput(context.Background(), cfg.factory, input, checkOpts...)
		var fail *conformance.Failure
		switch {
		case err == nil:
		case errors.As(err, &fail):
			t.Fatalf("%s\nrule:     %s\nexpected: %s\nactual:   %s", fail.Code, fail.Rule, fail.Expected, fail.Actual)
		default:
			t.Fatalf("%s", conformance.Redact(err.Error()))
		}
	})
}
