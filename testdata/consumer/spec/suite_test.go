package spec_test

import (
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"example.com/consumer"

	"github.com/ds4context/adapterkit/spec"
)

var _ = spec.Describe(consumer.Factory())

func TestSpec(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "consumer")
}
