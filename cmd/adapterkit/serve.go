package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/reference"
)

// serveReference serves the reference adapter's conformance factory over
// the bridge protocol until stdin ends.
func serveReference(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	err := bridge.Serve(ctx, reference.NewConformanceFactory(), stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "adapterkit serve-reference:", err)
		return exitBroken
	}
	return exitPass
}
