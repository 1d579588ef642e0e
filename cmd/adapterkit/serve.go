package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/reference"
)

// serveReference serves the reference adapter's conformance factory over
// the bridge protocol until stdin ends; with --embeddings every instance
// also has a deterministic local embedding port.
func serveReference(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve-reference", flag.ContinueOnError)
	fs.SetOutput(stderr)
	embeddings := fs.Bool("embeddings", false, "give every instance a deterministic local embedding port")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: adapterkit serve-reference [--embeddings]

Serves the reference adapter over stdin and stdout, speaking
runtime-adapter-bridge-v1 (docs/bridge.md), until stdin ends: one
instance per create, each in a temporary folder of its own. Try the
bridge end to end with
  adapterkit conform --exec "adapterkit serve-reference"

flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitBroken
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adapterkit serve-reference: unexpected arguments %q\n\n", fs.Args())
		fs.Usage()
		return exitBroken
	}
	var opts []reference.FactoryOption
	if *embeddings {
		opts = append(opts, reference.WithEmbeddingPort(reference.DigestEmbeddingPort()))
	}
	err := bridge.Serve(ctx, reference.NewConformanceFactory(opts...), stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "adapterkit serve-reference:", err)
		return exitBroken
	}
	return exitPass
}
