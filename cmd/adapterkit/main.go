// Command adapterkit runs the runtime-adapter-v1 conformance suite against an
// adapter and serves the reference adapter over the bridge protocol.
//
// Usage:
//
//	adapterkit conform [flags] [--exec "CMD ARGS" | -- CMD ARGS...]
//	adapterkit serve-reference [--embeddings]
//
// conform runs the seven contract cases on one instance, as
// conformance.Run does, then the extended checks of the Ginkgo suite in
// package spec, then checks that generated canonical histories are
// projected faithfully, and prints a table of results (and, on request, the
// conformance report as JSON and JUnit XML). Without a command it
// runs against the bundled reference adapter in process; with one, it starts
// the command as an adapter process speaking runtime-adapter-bridge-v1 (see
// docs/bridge.md). The exit status is 0 when everything passed, 1 when a
// check failed and 2 when the run itself could not happen.
//
// serve-reference serves the reference adapter over stdin and stdout (with
// --embeddings, with a deterministic local embedding port), so the bridge
// can be tried end to end:
//
//	adapterkit conform --exec "adapterkit serve-reference"
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitPass   = 0
	exitFail   = 1
	exitBroken = 2
)

const usage = `usage:
  adapterkit conform [flags] [--exec "CMD ARGS" | -- CMD ARGS...]
      run the conformance suite against an adapter process, or, without a
      command, against the bundled reference adapter in process
  adapterkit serve-reference [--embeddings]
      serve the reference adapter over stdin/stdout (runtime-adapter-bridge-v1),
      with --embeddings with a deterministic local embedding port

run "adapterkit conform -h" for the conform flags
`

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitBroken
	}
	switch args[0] {
	case "conform":
		return conform(ctx, args[1:], stdout, stderr)
	case "serve-reference":
		return serveReference(ctx, args[1:], stdin, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitPass
	}
	fmt.Fprintf(stderr, "adapterkit: unknown command %q\n\n%s", args[0], usage)
	return exitBroken
}
