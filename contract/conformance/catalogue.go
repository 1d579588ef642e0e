package conformance

import (
	"context"
	"fmt"
	"slices"

	"github.com/ds4context/adapterkit/contract"
)

// The ids of the seven contract cases, in the order Run executes them.
const (
	CaseIdentity         = "identity"
	CaseCapabilities     = "capabilities"
	CaseCanonicalHistory = "canonical-history"
	CaseRebuild          = "rebuild"
	CasePrivacy          = "privacy"
	CaseFallback         = "fallback"
	CaseLifecycle        = "lifecycle"
)

// The ids of the other checks of the catalogue.
const (
	// CheckInOrder runs the seven cases in order on one instance, as Run
	// does, and produces the runtime-adapter-conformance-v1 report.
	CheckInOrder = "in-order"
	// CheckNegotiation compares the adapter's negotiation with the
	// contract's for every request set.
	CheckNegotiation = "negotiation"
	// CheckDiagnosticsPrivacy looks for probes in diagnostics.
	CheckDiagnosticsPrivacy = "diagnostics-privacy"
	// CheckClosed checks every method after shutdown.
	CheckClosed = "closed"
	// CheckBoundedDiagnostics checks diagnostics stay bounded.
	CheckBoundedDiagnostics = "bounded-diagnostics"
	// CheckConcurrency checks concurrent calls.
	CheckConcurrency = "concurrency"
	// CheckProjection hands the factory generated histories.
	CheckProjection = "projection"
	// CheckPrivacyProbes sends generated probes an adapter cannot predict.
	CheckPrivacyProbes = "privacy-probes"
	// CheckPrivacyEngine compares enforcement with privacy.Engine under the
	// declared configuration.
	CheckPrivacyEngine = "privacy-engine"
	// CheckEmbeddingPort checks a declared embedding port.
	CheckEmbeddingPort = "embedding-port"
	// The local KV checks (capability local-kv-reuse).
	CheckLocalKVHit           = "local-kv-hit"
	CheckLocalKVChangedPrefix = "local-kv-changed-prefix"
	CheckLocalKVIneligible    = "local-kv-ineligible"
	CheckLocalKVNonHit        = "local-kv-non-hit"
	CheckLocalKVReplayFailure = "local-kv-replay-failure"
	CheckLocalKVRemote        = "local-kv-remote"
	CheckLocalKVMetadataOnly  = "local-kv-metadata-only"
)

// The ids of the aliasing and cancellation checks.
const (
	// CheckSnapshotAliasing edits returned snapshots.
	CheckSnapshotAliasing = "snapshot-aliasing"
	// CheckPayloadUnmodified checks the caller's payload after privacy
	// enforcement and completion.
	CheckPayloadUnmodified = "payload-unmodified"
	// CheckCancellation calls the adapter with cancelled and expiring
	// contexts.
	CheckCancellation = "cancellation"
)

// The ids of the checks of the fallback and diagnostics table (SPEC §9).
const (
	// CheckFallbacks checks each of the four fallbacks: code, retryable,
	// and the diagnostic it records with its severity.
	CheckFallbacks = "fallbacks"
	// CheckInvalidRequests sends a completion with every blank form of
	// provider and model.
	CheckInvalidRequests = "invalid-requests"
	// CheckClosedFirst checks that a closed adapter answers closed before
	// it looks at the request.
	CheckClosedFirst = "closed-first"
	// CheckRecordedDiagnostics checks which calls record a diagnostic and
	// which do not.
	CheckRecordedDiagnostics = "recorded-diagnostics"
)

// The ids of the lifecycle checks.
const (
	// CheckShutdownOnce shuts an adapter down several times and counts its
	// adapter-closed diagnostics.
	CheckShutdownOnce = "shutdown-once"
	// CheckConcurrentShutdown shuts an adapter down from many goroutines
	// at once.
	CheckConcurrentShutdown = "concurrent-shutdown"
	// CheckLocalKVShutdownOnce counts the shutdowns of the local KV port
	// (capability local-kv-reuse).
	CheckLocalKVShutdownOnce = "local-kv-shutdown-once"
)

// The ids of the source checks, which change the canonical history behind
// the adapter through the instance's Source and are skipped without one.
const (
	// CheckSourceAppend appends a message to the canonical source and
	// rebuilds.
	CheckSourceAppend = "source-append"
	// CheckSourceRevision checks the revision follows the source's content.
	CheckSourceRevision = "source-revision"
	// CheckSourceCorrupt corrupts the canonical source.
	CheckSourceCorrupt = "source-corrupt"
)

// CheckModel is the id of the model check: random sequences of operations
// compared, output by output, with an executable model of the contract.
const CheckModel = "model"

// contractCase is one of the seven cases: a check of one Session, which Run
// runs on a shared instance and the catalogue on a fresh one.
type contractCase struct {
	id, summary, rule string
	check             func(ctx context.Context, s *Session) error
}

func contractCases() []contractCase {
	return []contractCase{
		{CaseIdentity, "the adapter names the contract, the fixture's runtime, itself, the trusted project root and the fixture's model",
			"an adapter reports the contract version, the runtime id it was given, a non-blank name and version, the canonical trusted root and the selected model", checkIdentity},
		{CaseCapabilities, "negotiating all four capabilities reports each one, with a version when supported and a reason and diagnostic when not",
			"negotiation reports every registry capability; a supported one carries a version, an unsupported one a reason and a diagnostic", checkCapabilities},
		{CaseCanonicalHistory, "the snapshot holds the fixture's history in order, validates, and keeps the tool exchange in one complete atomic group",
			"a snapshot is the faithful, valid projection of the canonical history, with exactly the derived tool atomic groups", checkCanonicalHistory},
		{CaseRebuild, "rebuilding derived state reproduces the snapshot: same revision, session, root, messages and groups",
			"rebuilding derived state re-reads the canonical source and reproduces a fresh snapshot", checkRebuild},
		{CasePrivacy, "privacy is enforced before transport: probes never reach a remote provider, and an uninspectable payload fails closed without a transport call",
			"privacy is enforced immediately before transport and fails closed", checkPrivacy},
		{CaseFallback, "a transport failure becomes a retryable transport-failed fallback with a diagnostic",
			"a transport failure is a retryable transport-failed fallback and records completion-transport-failed", checkFallback},
		{CaseLifecycle, "shutdown is idempotent; afterwards completions fall back with adapter-closed and history reads fail",
			"shutdown is idempotent; a closed adapter falls back with adapter-closed and refuses history reads", checkLifecycle},
	}
}

// runCase runs the case on s, recovering a panic, and classifies the result.
func (c contractCase) runCase(ctx context.Context, s *Session) caseResult {
	status, f, _ := result(c.id, guard(func() error { return c.check(ctx, s) }))
	r := caseResult{ID: c.id, Passed: status == StatusPass, Failure: f}
	if f != nil {
		r.FailureCode = f.Code
	}
	return r
}

// caseResult is the outcome of one contract case in a run of all seven.
// Failure explains a failed case and is nil when it passed; the Report keeps
// only ID, Passed and FailureCode.
type caseResult struct {
	ID          string
	Passed      bool
	FailureCode string
	Failure     *Failure
}

// CaseIDs returns the seven case ids in run order.
func CaseIDs() []string {
	cs := contractCases()
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids
}

// catalogue is every check, in the order RunChecks runs them.
var catalogue = buildCatalogue()

func buildCatalogue() []Check {
	var out []Check
	for _, c := range contractCases() {
		check := c.check
		out = append(out, Check{ID: c.id, Kind: KindContract, Summary: c.summary, Rule: c.rule,
			run: func(ctx context.Context, e *env) error {
				s, err := e.start(ctx)
				if err != nil {
					return err
				}
				return check(ctx, s)
			}})
	}
	out = append(out, Check{ID: CheckInOrder, Kind: KindContract,
		Summary: "all seven cases in order on one instance, as conformance.Run runs them",
		Rule:    "the seven contract cases pass in order on one instance, and the runner's final shutdown and cleanup succeed",
		run:     checkInOrder})
	out = append(out, extendedChecks()...)
	out = append(out, privacyChecks()...)
	out = append(out, localKVChecks()...)
	out = append(out, slices.Concat(sourceChecks(), aliasingChecks())...)
	out = append(out, slices.Concat(fallbackChecks(), lifecycleChecks())...)
	out = append(out, modelChecks()...)
	return out
}

// Checks returns the catalogue: every check, in the order RunChecks runs
// them. The slice is a fresh copy.
func Checks() []Check { return slices.Clone(catalogue) }

// CheckByID returns the check with the given id.
func CheckByID(id string) (Check, bool) {
	for _, c := range catalogue {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// checkInOrder runs Run and keeps its report for RunChecks.
func checkInOrder(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	results := s.runCases(ctx)
	e.forget(s)
	if err := s.Close(ctx); err != nil {
		return failed("the runner's final shutdown and cleanup must succeed", err)
	}
	rep := newReport(e.opts.nameOf(e.factory), results)
	e.report = &rep
	var failedIDs []string
	for _, r := range results {
		if !r.Passed {
			failedIDs = append(failedIDs, r.ID+" ("+r.FailureCode+")")
		}
	}
	if len(failedIDs) > 0 {
		return broken("all seven cases pass in order on one instance", "7 passed cases",
			fmt.Sprintf("%d failed: %s", len(failedIDs), qs(failedIDs)))
	}
	return nil
}

// capabilityDeclared reports whether the adapter's own declarations make id
// a supported capability.
func capabilityDeclared(a contract.Adapter, id contract.CapabilityID) bool {
	n := contract.NegotiateCapabilities(a.CapabilityDeclarations(), []contract.CapabilityRequest{{ID: id}})
	for _, st := range n.Statuses {
		if st.ID == id {
			return st.Supported
		}
	}
	return false
}
