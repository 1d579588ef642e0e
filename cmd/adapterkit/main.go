// Command adapterkit runs the runtime-adapter-v1 conformance suite against an
// adapter and serves the reference adapter over the bridge protocol.
//
// Usage:
//
//	adapterkit conform [flags] [--exec "CMD ARGS" | -- CMD ARGS...]
//	adapterkit merge-reports [--report FILE] [--junit FILE] SHARD.json...
//	adapterkit serve-reference [--embeddings]
//	adapterkit verify-release VERSION
//
// conform runs every check of the conformance catalogue (package
// conformance): the seven contract cases, each on a fresh instance and all
// in order on one, the extended and capability-gated checks, and the
// projection of generated canonical histories; it prints a table of results
// and, on request, the run's report as JSON and JUnit XML. Without a command
// it runs against the bundled reference adapter in process; with one, it
// starts the command as an adapter process speaking
// runtime-adapter-bridge-v1 (see docs/bridge.md). The exit status is 0 when
// everything passed, 1 when a check failed and 2 when the run itself could
// not happen. A Go adapter gets the same command for its own factory from
// package cli.
//
// With --seed S --shard i/n, conform runs shard i of the campaign of n
// shards seed S names, and merge-reports combines the shards' reports into
// the campaign's verdict, table, report and JUnit XML (docs/campaigns.md).
//
// serve-reference serves the reference adapter over stdin and stdout (with
// --embeddings, with a deterministic local embedding port), so the bridge
// can be tried end to end:
//
//	adapterkit conform --exec "adapterkit serve-reference"
//
// verify-release fetches github.com/ds4context/adapterkit@VERSION through
// the configured GOPROXY and judges it with this build: its 0.2 registry
// pin, every exported constant of contract, contract/privacy and
// contract/localkv as each first-class platform compiles them (type-checked
// from source, not run), the answers of their registry functions, every
// package-level declaration those packages compile (none may differ between
// platforms), the go.mod requirements of the modules the generators and
// checks run, and this build's whole catalogue of checks run over the
// bridge on the release's serve-reference, with and without --embeddings.
// It exits 0 when the boundary holds, 1 when something differs and 2 when
// the release cannot be fetched, built or run to a verdict.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/ds4context/adapterkit/cli"
	"github.com/ds4context/adapterkit/reference"
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
  adapterkit merge-reports [--report FILE] [--junit FILE] SHARD.json...
      combine the reports of a campaign's shards (conform --seed S
      --shard i/n --report SHARD.json) into the campaign's verdict
  adapterkit serve-reference [--embeddings]
      serve the reference adapter over stdin/stdout (runtime-adapter-bridge-v1),
      with --embeddings with a deterministic local embedding port
  adapterkit verify-release VERSION
      check a published release against this build's compatibility boundary

run "adapterkit COMMAND -h" for the flags of a command
`

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitBroken
	}
	switch args[0] {
	case "conform":
		return cli.Run(ctx, args[1:], reference.NewConformanceFactory(), stdout, stderr)
	case "merge-reports":
		return cli.Merge(args[1:], stdout, stderr)
	case "serve-reference":
		return serveReference(ctx, args[1:], stdin, stdout, stderr)
	case "verify-release":
		return verifyRelease(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitPass
	}
	fmt.Fprintf(stderr, "adapterkit: unknown command %q\n\n%s", args[0], usage)
	return exitBroken
}
