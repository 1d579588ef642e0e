package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/reference"
)

// serveReference serves the reference adapter's conformance factory over
// the bridge protocol until stdin ends; with --embeddings every instance
// also has a deterministic local embedding port.
func serveReference(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve-reference", flag.ContinueOnError)
	fs.SetOutput(stderr)
	embeddings := fs.Bool("embeddings", false, "give every instance a deterministic local embedding port")
	if err := fs.Parse(args); err != nil {
		return exitBroken
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "adapterkit serve-reference: unexpected arguments")
		return exitBroken
	}
	var opts []reference.FactoryOption
	if *embeddings {
		opts = append(opts, reference.WithEmbeddingPort(digestEmbedder{}))
	}
	err := bridge.Serve(ctx, reference.NewConformanceFactory(opts...), stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "adapterkit serve-reference:", err)
		return exitBroken
	}
	return exitPass
}

// digestEmbedder is a deterministic local embedding port: each text becomes
// the first sixteen bytes of its SHA-256, scaled into (0, 1]. It needs no
// model, so the embedding checks can run anywhere.
type digestEmbedder struct{}

func (digestEmbedder) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "adapterkit", Model: "sha256-16", Dimensions: 16, Destination: contract.DestinationLocal}
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
