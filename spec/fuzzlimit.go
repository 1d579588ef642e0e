package spec

import "flag"

// fuzzMinimizeLimit is how many runs the fuzzer may spend minimizing each
// input it keeps, unless -fuzzminimizetime says otherwise.
const fuzzMinimizeLimit = "100x"

// boundMinimization bounds how long the fuzzer minimizes each input it
// keeps, when -fuzzminimizetime was left at its default. Go's fuzzer
// minimizes every input that reaches new code for up to a minute, and a
// conformance target reaches new code often (generated histories and
// operation sequences differ in every draw): under the default, a fuzz
// worker spent nearly all its time minimizing, about one run a second. A
// bound of 100 runs keeps inputs small enough and the fuzzer running
// hundreds of inputs a second.
func boundMinimization() {
	f := flag.Lookup("test.fuzzminimizetime")
	if f == nil || f.Value.String() != f.DefValue {
		return
	}
	_ = f.Value.Set(fuzzMinimizeLimit)
}
