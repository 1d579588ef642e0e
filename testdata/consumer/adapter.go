// Package consumer is an adapter repository in miniature, as the release
// smoke test consumes a published adapterkit: its adapter is the published
// reference adapter under a name of its own, checked by spec.Run in a plain
// test and by spec.Describe in the Ginkgo suite of ./spec.
package consumer

import (
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// Name is the factory name the consumer's reports carry.
const Name = "consumer-reference"

// Factory returns the consumer's conformance factory: the reference
// adapter's, under Name.
func Factory() conformance.Factory {
	return conformance.NewFactory(Name, reference.NewConformanceFactory().Create)
}
