package spec_test

import (
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

// The suite embedded twice: with and without an embedding port, which also
// shows that Describe can be called more than once.
var (
	_ = spec.Describe(memadapter.ConformanceFactory(true), spec.WithName("memadapter with embeddings"))
	_ = spec.Describe(memadapter.ConformanceFactory(false))
)

func TestSpec(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "spec")
}
