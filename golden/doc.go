// Package golden pins stable outputs of the kit in golden files: the 0.2
// compatibility registry, the capability negotiation table, the tool groups
// and validation issues of every fixture, the reference adapter's
// conformance report, how the reference adapter reads every reference JSONL
// fixture, and local KV eligibility keys. Its tests hold the pins; the
// package itself exports the small helper they use, Assert, which adapter
// repositories can use for their own goldens from plain tests or from
// Ginkgo (with GinkgoTB()).
//
// A golden file is the value's indented JSON (two spaces, no HTML escaping,
// a final newline) stored as <dir>/<name>.golden, dir being "testdata"
// relative to the test's package unless Dir says otherwise. Names are
// explicit: a golden never takes its name from the test that asserts it.
//
// # Updating
//
// There is one way to rewrite golden files: run the tests with the
// environment variable ADAPTERKIT_UPDATE_GOLDEN=1, for example
//
//	ADAPTERKIT_UPDATE_GOLDEN=1 go test ./golden/...
//
// (or ./... for the goldens of every package), and review the diff before
// committing it. Assert writes every golden it
// checks through goldie's Update, then compares as usual. goldie's own
// -update flag and GOLDIE_UPDATE variable are ignored by Assert, so that no
// test flag has to be passed to every package of "go test ./...". goldie
// registers its -update, -template and -clean flags on the default flag set
// when it is imported; a test binary importing this package must not
// register flags of those names itself.
//
// The registry golden is special: the values it pins are frozen for the 0.2
// line, so a mismatch there means a new contract version, never an update.
package golden
