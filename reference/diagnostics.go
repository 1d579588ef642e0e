package reference

import (
	"strconv"
	"sync"

	"github.com/ds4context/adapterkit/contract"
)

// Diagnostic codes the adapter records besides the contract's own
// (contract.Diagnostic*): the outcomes of reading its JSONL history.
const (
	CodeHistoryReadFailed       = "canonical-history-read-failed"
	CodeHistoryIdentityMismatch = "canonical-history-identity-mismatch"
	CodeHistoryInvalid          = "canonical-history-invalid"
	CodeDerivedStateRebuilt     = "derived-state-rebuilt"
)

// MaxDiagnostics is how many diagnostics the adapter keeps (the newest).
const MaxDiagnostics = 100

var diagnosticMessages = map[string]string{
	CodeHistoryReadFailed:                        "Canonical JSONL history is missing, corrupt, truncated, or outside configured bounds",
	CodeHistoryIdentityMismatch:                  "Canonical history identity does not match the trusted adapter configuration",
	CodeDerivedStateRebuilt:                      "Disposable adapter state was rebuilt from canonical JSONL history",
	contract.DiagnosticPrivacyEnforcementFailed:  "Privacy enforcement failed closed before completion transport",
	contract.DiagnosticCompletionRequestInvalid:  "Completion request is missing provider or model identity",
	contract.DiagnosticCompletionTransportFailed: "Completion transport failed; native runtime fallback remains available",
	contract.DiagnosticLocalKVReplayFailed:       "Local KV transport failed; completion retried with a full prompt through native transport",
	contract.DiagnosticLocalKVShutdownFailed:     "Runtime KV shutdown failed after adapter closure",
	contract.DiagnosticAdapterClosed:             "Reference adapter lifecycle closed cleanly",
}

var diagnosticSeverities = map[string]contract.Severity{
	CodeHistoryReadFailed:                        contract.SeverityError,
	CodeHistoryIdentityMismatch:                  contract.SeverityError,
	CodeHistoryInvalid:                           contract.SeverityError,
	CodeDerivedStateRebuilt:                      contract.SeverityInfo,
	contract.DiagnosticPrivacyEnforcementFailed:  contract.SeverityError,
	contract.DiagnosticCompletionRequestInvalid:  contract.SeverityWarning,
	contract.DiagnosticCompletionTransportFailed: contract.SeverityWarning,
	contract.DiagnosticLocalKVReplayFailed:       contract.SeverityWarning,
	contract.DiagnosticLocalKVShutdownFailed:     contract.SeverityWarning,
	contract.DiagnosticAdapterClosed:             contract.SeverityInfo,
}

func invalidHistoryMessage(n int) string {
	return "Canonical history validation failed with " + strconv.Itoa(n) + " issue(s)"
}

// ring keeps the newest MaxDiagnostics diagnostics.
type ring struct {
	mu    sync.Mutex
	buf   [MaxDiagnostics]contract.Diagnostic
	start int
	n     int
}

func (r *ring) record(d contract.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = d
		r.n++
		return
	}
	r.buf[r.start] = d
	r.start = (r.start + 1) % len(r.buf)
}

func (r *ring) add(code string) {
	r.record(contract.Diagnostic{Code: code, Severity: diagnosticSeverities[code], Message: diagnosticMessages[code]})
}

func (r *ring) list() []contract.Diagnostic {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]contract.Diagnostic, r.n)
	for i := range out {
		out[i] = r.buf[(r.start+i)%len(r.buf)]
	}
	return out
}
