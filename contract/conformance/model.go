package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// This file is the executable model of runtime-adapter-v1 the model check
// compares an adapter with: written from SPEC, not from any adapter. For
// each operation it says what the adapter must answer. Where SPEC leaves
// latitude, the model accepts every allowed answer, and the comment at the
// rule says which latitude and where SPEC gives it ("latitude:").

// referenceAdapterName is the adapterName SPEC §12 pins for the reference
// adapter: only an adapter naming itself so is held to §12's own rules.
const referenceAdapterName = "ds4-context-reference-adapter-go"

// referenceDiagnosticsKept is how many diagnostics SPEC §12 makes the
// reference adapter keep (the newest).
const referenceDiagnosticsKept = 100

// referenceMessages are the diagnostic messages of SPEC §12, by code.
var referenceMessages = map[string]string{
	"canonical-history-read-failed":              "Canonical JSONL history is missing, corrupt, truncated, or outside configured bounds",
	"derived-state-rebuilt":                      "Disposable adapter state was rebuilt from canonical JSONL history",
	contract.DiagnosticPrivacyEnforcementFailed:  "Privacy enforcement failed closed before completion transport",
	contract.DiagnosticCompletionRequestInvalid:  "Completion request is missing provider or model identity",
	contract.DiagnosticCompletionTransportFailed: "Completion transport failed; native runtime fallback remains available",
	contract.DiagnosticAdapterClosed:             "Reference adapter lifecycle closed cleanly",
	contract.DiagnosticLocalKVReplayFailed:       "Local KV transport failed; completion retried with a full prompt through native transport",
	"canonical-history-identity-mismatch":        "Canonical history identity does not match the trusted adapter configuration",
}

// referenceReasons are the fallback reasons of SPEC §9, by code.
var referenceReasons = map[contract.FallbackCode]string{
	contract.FallbackAdapterClosed:          "reference adapter is closed",
	contract.FallbackInvalidRequest:         "completion request is invalid",
	contract.FallbackPrivacyEnforcementFail: "privacy enforcement failed closed",
	contract.FallbackTransportFailed:        "completion transport failed",
}

// fallbackRules are SPEC §9's table: whether each fallback is retryable,
// and the diagnostic (code and severity) it records ("" for none).
var fallbackRules = map[contract.FallbackCode]struct {
	retryable bool
	code      string
	severity  contract.Severity
}{
	contract.FallbackAdapterClosed:          {false, "", ""},
	contract.FallbackInvalidRequest:         {false, contract.DiagnosticCompletionRequestInvalid, contract.SeverityWarning},
	contract.FallbackPrivacyEnforcementFail: {false, contract.DiagnosticPrivacyEnforcementFailed, contract.SeverityError},
	contract.FallbackTransportFailed:        {true, contract.DiagnosticCompletionTransportFailed, contract.SeverityWarning},
}

// pinnedSeverities are the severities SPEC §9 and §11 give the codes every
// adapter records: a diagnostic with one of these codes has that severity.
var pinnedSeverities = map[string]contract.Severity{
	contract.DiagnosticCompletionRequestInvalid:  contract.SeverityWarning,
	contract.DiagnosticPrivacyEnforcementFailed:  contract.SeverityError,
	contract.DiagnosticCompletionTransportFailed: contract.SeverityWarning,
	contract.DiagnosticAdapterClosed:             contract.SeverityInfo,
	contract.DiagnosticLocalKVReplayFailed:       contract.SeverityWarning,
	contract.DiagnosticLocalKVShutdownFailed:     contract.SeverityWarning,
}

// model is what the model knows of one adapter instance: the canonical
// history behind it, its lifecycle, and what it answered before that it
// must keep answering.
type model struct {
	fixture Fixture
	root    string
	msgs    []contract.Message
	corrupt bool
	closed  bool
	// damage is the damage of the source (SourceBreaker) in effect, nil
	// when there is none.
	damage *Damage
	// engine enforces the privacy configuration the factory declared; nil
	// when it declared none (then enforcement is compared with the
	// adapter's own EnforcePrivacy, see predictPrivacy).
	engine *privacy.Engine
	// reference is set for an adapter naming itself as the reference
	// adapter: SPEC §12's rules apply to it too.
	reference bool
	// identity and declarations are the first answers; later ones must
	// equal them (nothing in SPEC lets them change during a run).
	identity *contract.Identity
	decls    []contract.CapabilityDeclaration
	// revisions maps every revision a snapshot carried to the content it
	// carried it with; stable is the revision of the content since the
	// source was last written ("" when none was seen since).
	revisions map[string]string
	stable    string
	// diagnostics are, for the reference adapter, the diagnostics SPEC §12
	// makes it record, oldest first.
	diagnostics []contract.Diagnostic
}

// contentKey names the canonical content: the wire JSON of every message,
// in order.
func contentKey(msgs []contract.Message) string {
	h := sha256.New()
	for i := range msgs {
		b, _ := contract.AppendMessageJSON(nil, &msgs[i])
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sourceWritten tells the model the canonical history was written.
//
// latitude: SPEC names no revision format (§7: a non-blank string; §12's
// SHA-256 of the file is the reference adapter's). The model demands only
// what "the revision tracks the content" means: one revision never names
// two contents, and without a write the revision stays. A write that
// leaves the content as it was may or may not give a new revision, and
// content that returns to an earlier state may or may not get its earlier
// revision back.
func (m *model) sourceWritten() { m.stable = "" }

// record is a diagnostic SPEC makes the adapter record.
func (m *model) record(code string, sev contract.Severity) { m.recordFor(code, sev, "") }

// recordFor is a diagnostic SPEC makes the adapter record for a capability.
func (m *model) recordFor(code string, sev contract.Severity, capability contract.CapabilityID) {
	m.recordDiagnostic(contract.Diagnostic{Code: code, Severity: sev, Message: referenceMessages[code], Capability: capability})
}

// recordDiagnostic is a diagnostic §12 makes the reference adapter record;
// other adapters' diagnostics are not predicted one by one.
func (m *model) recordDiagnostic(d contract.Diagnostic) {
	if !m.reference {
		return
	}
	m.diagnostics = append(m.diagnostics, d)
	if n := len(m.diagnostics) - referenceDiagnosticsKept; n > 0 {
		m.diagnostics = slices.Delete(m.diagnostics, 0, n)
	}
}

// diagnosticsRule is what one operation does to the diagnostics.
type diagnosticsRule struct {
	// records lists the codes (with severities) SPEC makes the operation
	// record.
	records []contract.Diagnostic
	// none says SPEC makes the operation record nothing.
	none bool
	// many says the operation records many diagnostics, of which records
	// holds the last: only that one must be there after it.
	many bool
}

// readAnswer is what SPEC makes a snapshot or a rebuild answer: an error,
// or the history the model holds, as the instance holds it (compared
// message by message), with a revision that tracks it (checkRevision).
type readAnswer struct {
	// fails is the rule a read breaks by not failing; "" when it must
	// project the history.
	fails string
	// rule is what the read does to the diagnostics.
	rule diagnosticsRule
	// desc names the case that fails ("closed", "corrupt").
	desc string
}

// read is what method (SnapshotHistory, or with rebuild
// RebuildDerivedState) answers, and advances the model past it.
//
// latitude: SPEC §4 makes a read of a corrupt, invalid or
// identity-mismatched source an error; only §12 says what the reference
// adapter records then (by parse failure, identity, validation). Other
// adapters may record what they like.
func (m *model) read(method string, rebuild bool) readAnswer {
	switch {
	case m.closed:
		return readAnswer{fails: "after shutdown, " + method + " returns an error (§4)", desc: "closed"}
	case m.corrupt:
		m.record("canonical-history-read-failed", contract.SeverityError)
		return readAnswer{fails: method + " of a corrupt canonical source fails: it never yields an empty, stale or invented history", desc: "corrupt"}
	case m.damage != nil:
		m.recordDiagnostic(m.damageDiagnostic())
		return readAnswer{fails: method + " of a source SPEC rejects fails (§4, §7: " + string(m.damage.Kind) + "): it never yields an empty, stale or invented history",
			desc: "damaged: " + string(m.damage.Kind)}
	}
	if rebuild {
		// §12: the reference adapter records derived-state-rebuilt.
		// latitude: other adapters may record what they like here.
		m.record("derived-state-rebuilt", contract.SeverityInfo)
	}
	return readAnswer{}
}

// enforceRefused says EnforcePrivacy for provider returns an error
// without recording a diagnostic (§9): the adapter is closed or the
// provider blank.
func (m *model) enforceRefused(provider string) bool { return m.closed || contract.IsBlank(provider) }

// enforceFailedClosed advances the model past an enforcement that fails
// closed on a payload that cannot be fully inspected (§8), and returns
// what it does to the diagnostics.
func (m *model) enforceFailedClosed() diagnosticsRule {
	m.record(contract.DiagnosticPrivacyEnforcementFailed, contract.SeverityError)
	return diagnosticsRule{records: []contract.Diagnostic{{Code: contract.DiagnosticPrivacyEnforcementFailed, Severity: contract.SeverityError}}}
}

// validCompletion says the model enforces c's payload: the adapter is open
// and the request names a provider and a model.
func (m *model) validCompletion(c completionCall) bool {
	return !m.closed && !contract.IsBlank(c.provider) && !contract.IsBlank(c.model)
}

// completionAnswer is what SPEC makes a completion answer.
type completionAnswer struct {
	// fallback is the fallback of a call that never reaches the transport
	// (§9, checked in this order: closed, invalid request, privacy failed
	// closed); "" for one that reaches it.
	fallback contract.FallbackCode
	// mayGiveUp allows a transport-failed fallback without a transport
	// call instead.
	//
	// latitude: a call whose context had ended by the time it returned may
	// have seen it end before looking at the request (SPEC §9 orders the
	// checks of a call that runs) or before the transport was reached; it
	// then falls back as a failed transport, the only fallback of §9 that
	// fits, and calls no transport. Judged by the state of the call's
	// context, never by how fast the machine was.
	mayGiveUp bool
	// send is the request the transport receives: the provider and model
	// as given, the destination enforcement decided and the sanitised
	// payload (§9).
	send contract.TransportRequest
	// fails says the transport's answer makes the call fall back as
	// transport-failed: an error, partial output, or a context that ended.
	fails bool
	// output is a completed call's output: the transport's, unchanged.
	output json.RawMessage
	// summary is a completed call's privacy summary.
	summary contract.PrivacySummary
}

// completion is what the completion c answers when the enforcement of its
// payload gives want, or fails with werr (neither is read for a call that
// is not valid), and ended says its context had ended when it returned.
func (m *model) completion(c completionCall, want contract.PrivacyResult, werr error, ended bool) completionAnswer {
	a := completionAnswer{
		send:    contract.TransportRequest{Provider: c.provider, Model: c.model, Destination: want.Destination, Payload: want.Payload},
		fails:   c.mode == answerError || c.mode == answerPartial || c.mode == answerBlock || c.ctx != ctxNever,
		output:  outputFor(c.mode, want.Payload),
		summary: want.Summary(),
	}
	switch {
	case m.closed:
		a.fallback = contract.FallbackAdapterClosed
	case !m.validCompletion(c):
		a.fallback = contract.FallbackInvalidRequest
	case werr != nil:
		a.fallback = contract.FallbackPrivacyEnforcementFail
	}
	a.mayGiveUp = ended && a.fallback != contract.FallbackAdapterClosed
	return a
}

// fellBack advances the model past a completion that fell back with code,
// after the diagnostics kvRecords a failed local KV path recorded, and
// returns what the completion does to the diagnostics (§9's table).
func (m *model) fellBack(code contract.FallbackCode, kvRecords []contract.Diagnostic) diagnosticsRule {
	f := fallbackRules[code]
	if f.code == "" {
		return diagnosticsRule{none: true}
	}
	m.record(f.code, f.severity)
	return diagnosticsRule{records: append(slices.Clone(kvRecords), contract.Diagnostic{Code: f.code, Severity: f.severity})}
}

// shutdown advances the model past a shutdown and returns what it does to
// the diagnostics: the first records adapter-closed (§9), later ones
// nothing.
func (m *model) shutdown() diagnosticsRule {
	rule := diagnosticsRule{none: true}
	if !m.closed {
		m.record(contract.DiagnosticAdapterClosed, contract.SeverityInfo)
		rule = diagnosticsRule{records: []contract.Diagnostic{{Code: contract.DiagnosticAdapterClosed, Severity: contract.SeverityInfo}}}
	}
	m.closed = true
	return rule
}

// damageDiagnostic is the diagnostic §12 makes the reference adapter record
// for a read of its damaged source: a parse failure, a header that names
// another runtime or root, or a history that does not validate, with the
// number of its issues.
func (m *model) damageDiagnostic() contract.Diagnostic {
	code := "canonical-history-read-failed"
	switch m.damage.Kind {
	case DamageIdentity, DamageRoot:
		code = "canonical-history-identity-mismatch"
	case DamageRecord:
		msgs := append(slices.Clone(m.msgs), *m.damage.Message)
		s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: m.fixture.RuntimeID, SessionID: m.fixture.SessionID,
			Revision: "r", ProjectRoot: m.root, Messages: msgs, ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs)}
		return contract.Diagnostic{Code: "canonical-history-invalid", Severity: contract.SeverityError, Message: invalidMessage(len(contract.ValidateHistorySnapshot(&s)))}
	}
	return contract.Diagnostic{Code: code, Severity: contract.SeverityError, Message: referenceMessages[code]}
}
