// Package rerun_test is a broken adapter's conformance suite, nested in a
// labelled container of its own as an adapter repository might nest it.
// The spec package's tests run it in a child process and paste the rerun
// commands its failures print; it is not part of go test ./... .
package rerun_test

import (
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/spec"
	"github.com/ds4context/adapterkit/spec/testdata/rerun/broken"
)

var _ = ginkgo.Describe("my adapter", ginkgo.Label("my-adapter"), func() {
	spec.Describe(broken.Factory(), conformance.WithCallTimeout(300*time.Millisecond), conformance.WithHistories(5))
})

func TestRerunSuite(t *testing.T) {
	if os.Getenv(broken.ChildEnv) == "" {
		t.Skip("runs as a child process of the spec package's rerun test")
	}
	defer broken.Release()
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "rerun")
}

// FuzzBroken runs the projection fuzz target on the broken adapter.
func FuzzBroken(f *testing.F) {
	if os.Getenv(broken.ChildEnv) == "" {
		f.Skip("runs as a child process of the spec package's fuzz test")
	}
	spec.Fuzz(f, broken.Factory(), conformance.WithCallTimeout(300*time.Millisecond))
}
