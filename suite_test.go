package adapterkit_test

import (
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec"
)

// The conformance suite, run against the reference adapter.
var _ = spec.Describe(reference.NewConformanceFactory())

func TestAdapterKit(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "adapterkit")
}
