// Package memadapter is a small, complete runtime-adapter-v1 adapter over an
// in-memory history, written the way an adapter repository would write its
// own: an Adapter type, a constructor, and a conformance factory the kit's
// suite runs against (see memadapter_test.go for the few lines that plug it
// into the Ginkgo suite and the framework-free runner).
//
// Its privacy enforcement is deliberately small: for a remote provider it
// excludes [ds4:local-only] and [ds4:sensitive] segments and redacts
// credential-shaped tokens in every JSON string of the payload, and it
// fails closed on a payload it cannot encode. A production adapter would
// use the full privacy engine instead.
package memadapter
