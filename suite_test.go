package adapterkit_test

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec"
)

// The conformance suite, run against the reference adapter as it ships, and
// once more with an embedding port configured so that the embedding checks
// run rather than skip.
var (
	_ = spec.Describe(reference.NewConformanceFactory())
	_ = spec.Describe(reference.NewConformanceFactory(reference.WithEmbeddingPort(digestEmbedder{})))
)

func TestAdapterKit(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "adapterkit")
}

// digestEmbedder is a deterministic local embedding port: each text becomes
// the first sixteen bytes of its SHA-256, scaled into (0, 1].
type digestEmbedder struct{}

func (digestEmbedder) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "suite", Model: "sha256-16", Dimensions: 16, Destination: contract.DestinationLocal}
}

func (digestEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		sum := sha256.Sum256([]byte(t))
		v := make([]float64, 16)
		for d := range v {
			v[d] = (float64(sum[d]) + 1) / 256
		}
		out[i] = v
	}
	return out, nil
}
