package spec_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec"
)

// libFuzzerF stands in for the F a fuzzing service's build puts in place of
// *testing.F (github.com/AdamKorcz/go-118-fuzz-build/testing): one per
// input, whose Fuzz calls the fuzz function through reflection with a T of
// its own and the input's bytes, and whose Fatal does nothing.
type libFuzzerF struct {
	data []byte
	t    *libFuzzerT
}

func (f *libFuzzerF) Helper()           {}
func (f *libFuzzerF) Add(args ...any)   {}
func (f *libFuzzerF) Fatal(args ...any) {}
func (f *libFuzzerF) Fuzz(ff any) {
	fn := reflect.ValueOf(ff)
	if fn.Type().NumIn() != 2 || fn.Type().In(1) != reflect.TypeOf([]byte(nil)) {
		panic(fmt.Sprintf("a fuzz function %s, want one of a T and []byte", fn.Type()))
	}
	fn.Call([]reflect.Value{reflect.ValueOf(f.t), reflect.ValueOf(f.data)})
}

// libFuzzerT is the T it hands the fuzz function: Fatalf and Skip end the
// input by panicking, as the service's do.
type libFuzzerT struct {
	failure string
	skipped bool
}

var errEndInput = errors.New("the input ends")

func (t *libFuzzerT) Helper() {}
func (t *libFuzzerT) Fatalf(format string, args ...any) {
	t.failure = fmt.Sprintf(format, args...)
	panic(errEndInput)
}
func (t *libFuzzerT) Skip(args ...any) { t.skipped = true; panic(errEndInput) }

// fuzzOnce runs target as a libFuzzer build runs it on one input, and
// returns what its T saw.
func fuzzOnce(target func(spec.FuzzTarget), input []byte) (t *libFuzzerT) {
	t = &libFuzzerT{}
	defer func() {
		if v := recover(); v != nil && v != errEndInput {
			panic(v)
		}
	}()
	target(&libFuzzerF{data: input, t: t})
	return t
}

// Built for libFuzzer, the targets pass a conformant adapter on every input
// and fail a broken one, naming the broken rule as metadata.
func TestFuzzTargetsRunAsLibFuzzerBuildsThem(t *testing.T) {
	conformant := reference.NewConformanceFactory()
	var broken conformance.Factory
	for _, m := range mutants.Catalogue() {
		if m.Name == "drops-a-message" {
			broken = m.Factory(reference.NewConformanceFactory())
		}
	}
	if broken == nil {
		t.Fatal("no mutant drops-a-message")
	}
	targets := map[string]func(conformance.Factory) func(spec.FuzzTarget){
		"Fuzz": func(f conformance.Factory) func(spec.FuzzTarget) { return func(t spec.FuzzTarget) { spec.Fuzz(t, f) } },
		"FuzzModel": func(f conformance.Factory) func(spec.FuzzTarget) {
			return func(t spec.FuzzTarget) { spec.FuzzModel(t, f) }
		},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for name, target := range targets {
		caught := 0
		for i := range 6 {
			input := make([]byte, 64+r.IntN(192))
			for j := range input {
				input[j] = byte(r.Uint32())
			}
			if got := fuzzOnce(target(conformant), input); got.failure != "" {
				t.Fatalf("%s, input %d: the reference adapter failed:\n%s", name, i, got.failure)
			}
			if got := fuzzOnce(target(broken), input); got.failure != "" {
				caught++
				if !strings.Contains(got.failure, "-assertion-failed\nrule:") {
					t.Fatalf("%s: the failure is not a check's:\n%s", name, got.failure)
				}
			}
		}
		if caught == 0 {
			t.Errorf("%s: no input of 6 caught an adapter that drops a message", name)
		}
	}
}
