package reference

import (
	"context"
	"crypto/sha256"

	"github.com/ds4context/adapterkit/contract"
)

// DigestEmbeddingPort returns a deterministic local embedding port that
// needs no model: each text becomes the first sixteen bytes of its
// SHA-256, scaled into (0, 1]. With WithEmbeddingPort it lets the
// embedding checks run anywhere (adapterkit serve-reference --embeddings
// uses it); it is not a semantic embedding.
func DigestEmbeddingPort() contract.EmbeddingPort { return digestEmbedder{} }

type digestEmbedder struct{}

func (digestEmbedder) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "adapterkit", Model: "sha256-16", Dimensions: 16, Destination: contract.DestinationLocal}
}

func (digestEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(t))
		v := make([]float64, 16)
		for d := range v {
			v[d] = (float64(sum[d]) + 1) / 256
		}
		out[i] = v
	}
	return out, nil
}
