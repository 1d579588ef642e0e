package adapterkit_test

import (
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

// The conformance suite, run against the kit's own adapter.
var _ = spec.Describe(memadapter.ConformanceFactory(true))

func TestAdapterKit(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "adapterkit")
}
