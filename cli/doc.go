// Package cli is the adapterkit conform command as a library: it runs the
// conformance catalogue (package conformance) against an adapter and
// prints one row per check, optionally writing a JSON report and JUnit XML.
//
// A Go adapter repository gets the command for its own factory, in process
// (no bridge, no child process), from a three-line main:
//
//	package main
//
//	import "github.com/ds4context/adapterkit/cli"
//
//	func main() { cli.Main(myadapter.ConformanceFactory()) }
//
// The flags are those of adapterkit conform: --exec runs an adapter
// process speaking runtime-adapter-bridge-v1 instead of the factory,
// --report writes the run's adapterkit-conformance-run-v1 report, --junit
// JUnit XML, --timeout bounds every adapter call, --check runs only some
// checks, --require makes a capability's checks required, --histories sets
// how many generated histories the projection check draws. The exit status
// is 0 when every check passed (or was skipped), 1 when one failed, and 2
// when the run could not happen (bad flags, an adapter command that does
// not start, a factory that creates no instance, a report that cannot be
// written).
package cli
