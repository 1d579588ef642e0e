// Package mutants is a catalogue of deliberately broken adapters: each one
// wraps a correct adapter and breaks exactly one rule of runtime-adapter-v1.
// Its tests prove the conformance runner catches every one of them in
// exactly the cases that check the broken rule, and that each check a
// mutant lists fails it; and the CLI in exactly those checks and the
// Ginkgo suite in exactly those specs, on samples of them (on every one
// with ADAPTERKIT_MUTANTS_EVERY_FACE=1, which the CI script sets) — a
// conformance suite that cannot fail proves nothing.
//
// Pending holds the broken adapters no check catches yet, each naming the
// checks it awaits, and LegalVariants the adapters that differ from the
// reference adapter only where SPEC allows, which every check must pass.
package mutants
