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
// The flags are those of adapterkit conform, which conform -h lists: --exec
// runs an adapter process speaking runtime-adapter-bridge-v1 instead of the
// factory, --report writes the run's adapterkit-conformance-run-v1 report,
// --junit JUnit XML, --extended=false runs the contract cases only, and
// every other flag sets one option of package conformance (the table in
// flags.go ties each flag to its option, so a flag means what its option
// means in package spec and in RunChecks). The exit status
// is 0 when every check passed (or was skipped), 1 when one failed, and 2
// when the run could not happen (bad flags — a negative count, a bound
// that is not positive, seed 0, --report and --junit naming one file —, an
// adapter command that does not start, a factory that creates no
// instance, a report that cannot be written); the report and the JUnit
// file agree with it. Both files are
// replaced by an unfinished report (not passed) before any check runs, so
// a factory that exits the process leaves no earlier pass behind, though
// it cannot be reported; --exec runs such an adapter in a process of its
// own, isolated from the run.
package cli
