// Package bridge certifies runtime adapters written in any language. It
// speaks runtime-adapter-bridge-v1: newline-delimited JSON requests and
// responses over an adapter process's stdin and stdout (stderr stays free
// for the adapter's logs), in both directions. The harness calls the
// adapter's methods; the adapter calls back "transport", so the completion
// transport — with its recording and failure injection — stays in the
// harness.
//
// The client side turns an adapter process into a conformance.Factory:
// Command and NewFactory start one child process per instance, and every
// instance implements contract.Adapter over it, with a timeout on every
// call, a bound on every line, on the bytes of the answers and requests
// held at once and on the child's requests in flight, and
// the child and every process it started killed and reaped when the
// instance is cleaned up or the child misbehaves. The
// server side, Serve and Server, exposes any Go conformance.Factory over a
// pair of streams, so a Go adapter can be driven through the same protocol
// and Pipe can run one in process.
//
// docs/bridge.md describes the protocol for adapter authors.
package bridge
