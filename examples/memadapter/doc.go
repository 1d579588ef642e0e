// Package memadapter is a small, complete runtime-adapter-v1 adapter over an
// in-memory history, written the way an adapter repository would write its
// own: an Adapter type, a constructor, and a conformance factory the kit's
// suite runs against (see memadapter_test.go for the few lines that plug it
// into the Ginkgo suite and the framework-free runner).
//
// It enforces privacy with the kit's privacy engine under the default
// policy, failing closed on any payload the engine cannot inspect.
package memadapter
