package adapterkit_test

import (
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec"
)

// The conformance suite, run against the reference adapter as it ships, and
// once more with an embedding port configured so that the embedding checks
// run rather than skip.
var (
	_ = spec.Describe(reference.NewConformanceFactory())
	_ = spec.Describe(reference.NewConformanceFactory(reference.WithEmbeddingPort(reference.DigestEmbeddingPort())))
)

func TestAdapterKit(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "adapterkit")
}
