// Package spec is the runtime-adapter-v1 conformance suite for Ginkgo: an
// adapter repository plugs its conformance.Factory in and gets one spec per
// contract case, each on a fresh adapter instance, plus extended checks and
// a property-based check of history projection.
//
// Registration is deferred: the package defines no containers and no suite
// hooks of its own. Describe builds the specs when called, so a suite may
// call it several times with different factories or options. Describe, Run,
// Fuzz and FuzzModel (the model check as a fuzz target) take the options
// of package conformance, which every face of the catalogue shares:
//
//	var _ = spec.Describe(myadapter.ConformanceFactory())
//
// A package without a Ginkgo suite of its own can run everything from one
// plain test with Run:
//
//	func TestConformance(t *testing.T) { spec.Run(t, myadapter.ConformanceFactory()) }
//
// Fuzz and FuzzModel take a FuzzTarget: a *testing.F, or the F that
// ClusterFuzzLite and OSS-Fuzz put in its place when they build the target
// for libFuzzer (docs/campaigns.md). Under conformance.WithShard the suite
// runs one shard of a campaign: the model and property specs run the
// shard's part, every other spec runs in shard 1 and skips elsewhere.
//
// Every spec carries labels to select it: LabelConformance on the seven
// contract cases and on the spec running them in order on one instance (as
// conformance.Run does), LabelExtended on every other check, LabelProperty
// on the property check, "feature:<capability>" on the checks that only
// apply when the adapter declares a capability, and on every spec the id
// of its check (conformance.Checks lists them), so --label-filter can
// select exactly one. A capability-gated check is skipped, with a message
// saying so, when the adapter does not declare the capability (or fails,
// under conformance.WithRequiredCapabilities).
//
// The local KV checks (label "feature:local-kv-reuse") hand the factory a
// conformance.RecordingKVPort as Setup.LocalKVPort. A factory whose adapter
// supports local KV reuse configures the adapter with that port, enabled,
// and finds the reusable prefix of a payload with
// conformance.ReadLocalKVPrompt; the checks complete with provider
// conformance.LocalKVProvider, which the adapter must treat as local.
//
// The concurrency check compares what 8 goroutines see with serial
// answers; run the suite with -race to have the race detector catch the
// data races that do not show in results.
//
// A failure names the rule the adapter broke, shows what was expected and
// what came back, and prints how to rerun just that spec. Failure text is
// metadata only: it never shows a probe, a payload or history text.
//
// The property check draws canonical histories with pgregory.net/rapid and
// hands each to the factory as the fixture's history. It runs 20 checks by
// default, to stay fast; for more, set ADAPTERKIT_PROPERTY_CHECKS=N, use
// conformance.WithHistories, or give rapid's own flag to the test binary
// (go test ./pkg -rapid.checks=N, or go tool ginkgo ./pkg -- -rapid.checks=N),
// which wins over both. A failure prints the shrunk history's shape (roles
// and block kinds, never text), the broken rule, and a rerun command
// carrying rapid's seed (RAPID_SEED) or fail file (RAPID_FAILFILE).
// Shrinking a failure creates many instances; rapid spends up to 30 s on
// it, which RAPID_SHRINKTIME (or -rapid.shrinktime) lowers.
package spec
