// Package plain_test is the broken adapter's conformance suite in a
// package without a Ginkgo suite of its own, run by spec.Run. The spec
// package's tests run it in a child process and paste the rerun commands
// its failures print; it is not part of go test ./... .
package plain_test

import (
	"os"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/spec"
	"github.com/ds4context/adapterkit/spec/testdata/rerun/broken"
)

// TestOther is a test of the package besides the suite: the rerun
// commands must not run it.
func TestOther(t *testing.T) {}

func TestConformance(t *testing.T) {
	if os.Getenv(broken.ChildEnv) == "" {
		t.Skip("runs as a child process of the spec package's rerun test")
	}
	defer broken.Release()
	spec.Run(t, broken.Factory(), conformance.WithCallTimeout(300*time.Millisecond), conformance.WithHistories(5))
}
