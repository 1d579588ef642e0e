// Package bridgesuite_test runs the whole Ginkgo conformance suite over
// the bridge, against the reference adapter in a child process. It lives
// apart from package bridge because Ginkgo runs a suite once per process:
// there it would forbid go test -count.
package bridgesuite_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/testgc"
	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec"
)

// childEnv makes the test binary serve the reference adapter when it is
// re-executed as the adapter process.
const childEnv = "BRIDGESUITE_SERVE_REFERENCE"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := bridge.Serve(context.Background(), reference.NewConformanceFactory(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testgc.Run(m))
}

// sampleModelSteps is how many operations the model spec runs in the
// default form of TestSuiteOverAProcess: one short sequence, on two
// instances side by side, on a seed of its own each run. The first long
// sequence of a run opens by crossing the bounds, and with the default
// steps the model is most of the suite's cost; ADAPTERKIT_STRESS=1 runs
// the default steps.
const sampleModelSteps = 12

// The seven cases each on a fresh instance, the extended checks and the
// property check pass for the reference adapter in a child process. By
// default the model spec runs sampleModelSteps operations; under
// ADAPTERKIT_STRESS=1 it takes its default steps, its opening across the
// bounds included.
func TestSuiteOverAProcess(t *testing.T) {
	var opts []conformance.Option
	if os.Getenv("ADAPTERKIT_STRESS") != "1" {
		opts = append(opts, conformance.WithModelSteps(sampleModelSteps))
	}
	spec.Run(t, bridge.NewFactory(bridge.ExecConfig{
		Path: os.Args[0],
		Args: []string{"-test.run=^$"},
		// GORACE: a race-enabled child would otherwise sleep a second at exit.
		Env:    append(os.Environ(), childEnv+"=1", "GORACE=atexit_sleep_ms=0"),
		Stderr: os.Stderr,
		// A generous call timeout: a loaded machine must not make a
		// working child time out.
		Options: bridge.Options{CallTimeout: time.Minute},
	}), opts...)
}
