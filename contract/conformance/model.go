package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
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

// checkRevision checks a snapshot's revision against every earlier one.
func (m *model) checkRevision(method, rev string) error {
	key := contentKey(m.msgs)
	if was, ok := m.revisions[rev]; ok && was != key {
		return broken("the revision tracks the canonical content: one revision never names two different contents",
			"a revision not seen with other content", method+" returned revision "+q(rev)+", seen before with other content")
	}
	if m.stable != "" && rev != m.stable {
		return broken("the revision of an unchanged canonical history is the same in every snapshot and rebuild",
			"revision "+q(m.stable)+" (the source was not written since)", method+" returned revision "+q(rev))
	}
	m.revisions[rev] = key
	m.stable = rev
	return nil
}

// record is a diagnostic SPEC makes the adapter record.
func (m *model) record(code string, sev contract.Severity) { m.recordFor(code, sev, "") }

// recordFor is a diagnostic SPEC makes the adapter record for a capability.
func (m *model) recordFor(code string, sev contract.Severity, capability contract.CapabilityID) {
	if !m.reference {
		return
	}
	m.diagnostics = append(m.diagnostics, contract.Diagnostic{Code: code, Severity: sev, Message: referenceMessages[code], Capability: capability})
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
	// anyError says the operation records a diagnostic of severity error
	// of a code SPEC leaves to the adapter (a corrupt source: §4 says
	// "error", §12 names the reference adapter's code).
	anyError bool
}

// checkDiagnostics checks the diagnostics an operation left: after, read
// right after it, against before, read right before it.
func (m *model) checkDiagnostics(op string, rule diagnosticsRule, before, after []contract.Diagnostic) error {
	for i, d := range after {
		if d.Severity != contract.SeverityInfo && d.Severity != contract.SeverityWarning && d.Severity != contract.SeverityError {
			return broken("a diagnostic's severity is info, warning or error", "one of the three", fmt.Sprintf("diagnostic #%d (%s) of severity %s", i, q(d.Code), q(string(d.Severity))))
		}
		if want, ok := pinnedSeverities[d.Code]; ok && d.Severity != want {
			return broken("a diagnostic of a code SPEC names has the severity SPEC gives it (§9, §11)", fmt.Sprintf("%s of severity %s", q(d.Code), want),
				fmt.Sprintf("diagnostic #%d of severity %s", i, q(string(d.Severity))))
		}
		if contract.IsBlank(d.Code) {
			return broken("a diagnostic has a code", "a non-blank code", fmt.Sprintf("diagnostic #%d with a blank code", i))
		}
	}
	if m.reference {
		// §12: the reference adapter keeps the newest 100, with the
		// messages §12 gives by code.
		if d := diffDiagnostics(m.diagnostics, after); d != "" {
			return broken("the reference adapter records exactly the diagnostics SPEC §9 and §12 name, with §12's messages, and keeps the newest 100",
				fmt.Sprintf("%d diagnostics ending %s", len(m.diagnostics), qs(diagnosticCodes(lastN(m.diagnostics, 3)))), op+": "+d)
		}
		return nil
	}
	if rule.none && !reflect.DeepEqual(nonNilDiags(before), nonNilDiags(after)) {
		return broken("an operation SPEC says records no diagnostic leaves the diagnostics as they were (§9: negotiation, enforcement refused for a closed adapter or a blank provider, a closed adapter's completion)",
			fmt.Sprintf("the %d diagnostics of before", len(before)), fmt.Sprintf("%s: %d diagnostics, codes %s", op, len(after), qs(diagnosticCodes(lastN(after, 3)))))
	}
	// latitude: SPEC says only "bounded" for adapters other than the
	// reference: once the list is full, which entries an adapter drops is
	// its choice. So a recorded code must be there after the operation,
	// and one more of it than before unless the list did not grow.
	for _, want := range rule.records {
		if !hasDiagnostic(after, want.Code, want.Severity) {
			return broken("an operation SPEC says records a diagnostic records it (§9)", fmt.Sprintf("a diagnostic %s (%s)", q(want.Code), want.Severity),
				fmt.Sprintf("%s: codes %s", op, qs(diagnosticCodes(lastN(after, 4)))))
		}
		if want.Capability != "" && !slices.ContainsFunc(after, func(d contract.Diagnostic) bool { return d.Code == want.Code && d.Capability == want.Capability }) {
			return broken("a diagnostic SPEC records for a capability names it (§11)", fmt.Sprintf("a diagnostic %s of capability %s", q(want.Code), want.Capability),
				fmt.Sprintf("%s: none names it", op))
		}
		if countCode(after, want.Code) <= countCode(before, want.Code) && len(after) > len(before) {
			return broken("an operation SPEC says records a diagnostic records it (§9)", fmt.Sprintf("one more %s than the %d before", q(want.Code), countCode(before, want.Code)),
				fmt.Sprintf("%s: still %d, though the list grew to %d", op, countCode(after, want.Code), len(after)))
		}
	}
	if rule.anyError && !slices.ContainsFunc(after, func(d contract.Diagnostic) bool { return d.Severity == contract.SeverityError }) {
		return broken("a history read of a corrupt canonical source records a diagnostic of severity error (§4)", "a diagnostic of severity error",
			fmt.Sprintf("%s: codes %s", op, qs(diagnosticCodes(lastN(after, 4)))))
	}
	return nil
}

func nonNilDiags(ds []contract.Diagnostic) []contract.Diagnostic {
	if ds == nil {
		return []contract.Diagnostic{}
	}
	return ds
}

func lastN(ds []contract.Diagnostic, n int) []contract.Diagnostic { return ds[max(0, len(ds)-n):] }

func countCode(ds []contract.Diagnostic, code string) int {
	n := 0
	for _, d := range ds {
		if d.Code == code {
			n++
		}
	}
	return n
}

func hasDiagnostic(ds []contract.Diagnostic, code string, sev contract.Severity) bool {
	return slices.ContainsFunc(ds, func(d contract.Diagnostic) bool { return d.Code == code && d.Severity == sev })
}

// diffDiagnostics describes the first difference between two diagnostic
// lists, as metadata, or returns "".
func diffDiagnostics(want, got []contract.Diagnostic) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d diagnostics expected, %d got (last codes %s)", len(want), len(got), qs(diagnosticCodes(lastN(got, 3))))
	}
	for i := range want {
		w, g := want[i], got[i]
		switch {
		case w.Code != g.Code:
			return fmt.Sprintf("diagnostic #%d: code %s expected, %s got", i, q(w.Code), q(g.Code))
		case w.Severity != g.Severity:
			return fmt.Sprintf("diagnostic #%d (%s): severity %s expected, %s got", i, q(w.Code), w.Severity, q(string(g.Severity)))
		case w.Message != g.Message:
			return fmt.Sprintf("diagnostic #%d (%s): message of %d bytes expected (SPEC §12), %d bytes got", i, q(w.Code), len(w.Message), len(g.Message))
		case w.Capability != g.Capability:
			return fmt.Sprintf("diagnostic #%d (%s): capability %s expected, %s got", i, q(w.Code), q(string(w.Capability)), q(string(g.Capability)))
		}
	}
	return ""
}

// checkFallback checks a fallback result against SPEC §9's table.
//
// latitude: the reason text is free for adapters other than the
// reference (§9 gives the reference adapter's); it must be non-blank and
// metadata only — never a transport error's text.
func (m *model) checkFallback(op string, r contract.CompletionResult, want contract.FallbackCode, leaks []string) error {
	if r.Status != contract.StatusFallback || r.Code != want {
		return broken("a completion answers with the result SPEC §9 gives its case: checked in the order closed, invalid request, privacy, transport",
			"fallback "+q(string(want)), op+": "+describeModelResult(r))
	}
	if r.Retryable != fallbackRules[want].retryable {
		return broken("only a transport-failed fallback is retryable (§9)", fmt.Sprintf("retryable %t for %s", fallbackRules[want].retryable, want), fmt.Sprintf("%s: retryable %t", op, r.Retryable))
	}
	if contract.IsBlank(r.Reason) {
		return broken("a fallback carries a reason (§9)", "a non-blank reason", op+": a blank reason")
	}
	if m.reference && r.Reason != referenceReasons[want] {
		return broken("the reference adapter's fallback reasons are SPEC §9's", fmt.Sprintf("the reason of %d bytes for %s", len(referenceReasons[want]), want), fmt.Sprintf("%s: a reason of %d bytes", op, len(r.Reason)))
	}
	for _, l := range leaks {
		if l != "" && ContainsAny([]byte(r.Reason), l) {
			return broken("a fallback reason is metadata only: it never quotes a transport error, a payload or a credential", "a reason without them", op+": the reason quotes one")
		}
	}
	return nil
}

// describeModelResult shows a completion result as metadata.
func describeModelResult(r contract.CompletionResult) string {
	if r.Status == contract.StatusCompleted {
		return fmt.Sprintf("completed with %d output bytes, destination %s", len(r.Output), q(string(r.Privacy.Destination)))
	}
	return describeResult(r)
}
