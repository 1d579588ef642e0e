// Package mutants is a catalogue of deliberately broken adapters: each one
// wraps a correct adapter and breaks exactly one rule of runtime-adapter-v1.
// Its tests prove the conformance runner and the Ginkgo suite catch every
// one of them, in exactly the cases and specs that check the broken rule —
// a conformance suite that cannot fail proves nothing.
package mutants
