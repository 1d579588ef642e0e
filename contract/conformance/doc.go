// Package conformance is the framework-free conformance runner for
// runtime-adapter-v1 adapters, in the manner of testing/fstest.TestFS: it
// imports no test framework (only package testing's interfaces, so that a
// factory may use the running test, Setup.TB).
//
// An adapter repository implements a Factory (or calls NewFactory): given
// the versioned Fixture and a completion transport, it creates one adapter
// holding the fixture's history, says which project root the adapter must
// trust, and how to clean up.
//
// Run creates one instance with a RecordingTransport and runs the seven
// cases on it, in order:
//
//	identity           contract version, runtime id, adapter name and version, trusted root, model
//	capabilities       negotiating all four capabilities: versions, reasons, diagnostics
//	canonical-history  the snapshot holds the fixture's history and its one complete tool group
//	rebuild            rebuilding derived state reproduces the snapshot
//	privacy            probes never reach a remote provider; an uninspectable payload fails closed
//	fallback           a transport failure is a retryable transport-failed fallback with a diagnostic
//	lifecycle          shutdown is idempotent; afterwards completions fall back and reads fail
//
// A case fails with "<id>-assertion-failed" when the adapter breaks a rule,
// and with "<id>-threw" when an adapter method fails where it must succeed
// or panics (the panic is recovered). Afterwards Run shuts the adapter down
// once more and runs the instance's cleanup, which always runs. If the
// factory, the final shutdown or the cleanup fails, Run returns that error
// (ErrFactory, ErrShutdown, ErrCleanup) and no report.
//
// The Report holds case ids, booleans and fixed failure codes only; Assert
// turns a failed report into an error joining one ErrCaseFailed error per
// failed case. Verify runs like Run and returns the explanations instead:
// each failed case's *Failure names the broken rule and shows what was
// expected and what the adapter did.
//
// The seven cases are the first entries of the catalogue, which Checks
// lists: every check with its id, kind, summary and rule. RunChecks runs
// them all, each on instances of its own; Check.Run runs one; Start and
// StartWith create one instance, a Session, for checks of the caller's own.
// The Ginkgo suite in package spec and the adapterkit conform command run
// the same entries.
//
// Only the local KV checks hand the factory a local KV port, a
// RecordingKVPort as Setup.LocalKVPort, and they send payloads of the shape
// LocalKVPayload writes and ReadLocalKVPrompt reads.
//
// A factory's runtime may be unable to hold some generated histories: it
// refuses one with Unrepresentable(family), declares families up front in
// Instance.Limits, or reports the history it holds in its own form in
// Instance.Held, whose differences from the given one must be
// HoldingDifferences. Each is a Limit of the run, shown in Result.Limits
// and RunReport.Limits and checked: a refused family is refused wherever
// it appears (ProjectionRun keeps the rules across a series of histories),
// and WithRequiredFamilies makes a limit fail. An adapter whose privacy
// enforcement leaves out the one rule of the Go kit's engine SPEC §8 marks
// "Go kit only", as the TypeScript kit's engine does, passes the privacy
// checks with the limit LimitMemberNameFloor, unless WithStrictPrivacy
// demands the rule.
//
// Beyond the seven cases, Checks lists the catalogue RunChecks runs. Its
// model check (CheckModel) drives fresh instances with random sequences of
// every operation and compares every output with an executable model of
// the contract written from SPEC, accepting whatever SPEC leaves open;
// WithModelSteps sizes it, WithSeed replays a failure, and
// CheckModelInput runs one sequence drawn from a fuzzer's bytes. A Source
// that also implements SourceRewriter lets it change messages in place.
// Some of its instances get a RecordingKVPort (Setup.LocalKVPort): for an
// adapter that then declares local-kv-reuse, the model follows local KV
// completions through the port too.
//
// Nothing this package writes — reports, errors, failure explanations —
// holds the probes the privacy case sends (ProbePrivateValue,
// ProbeCredential) or the payloads the cases send: adapter-provided text is
// passed through Redact before it is shown.
package conformance
