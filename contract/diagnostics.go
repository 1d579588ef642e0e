package contract

// Diagnostic codes the contract requires an adapter to record (SPEC §9 and
// §11). An adapter may record codes of its own besides these; the
// conformance checks look for exactly these.
const (
	// DiagnosticCompletionRequestInvalid (warning): a completion request
	// named a blank provider or model and fell back with invalid-request.
	DiagnosticCompletionRequestInvalid = "completion-request-invalid"
	// DiagnosticPrivacyEnforcementFailed (error): sanitisation failed and
	// the completion fell back without reaching the transport.
	DiagnosticPrivacyEnforcementFailed = "privacy-enforcement-failed"
	// DiagnosticCompletionTransportFailed (warning): the transport returned
	// an error and the completion fell back with transport-failed.
	DiagnosticCompletionTransportFailed = "completion-transport-failed"
	// DiagnosticAdapterClosed (info): the adapter shut down; recorded once.
	DiagnosticAdapterClosed = "adapter-closed"
	// DiagnosticLocalKVReplayFailed (warning, capability local-kv-reuse):
	// the local KV path failed and the completion was retried with the full
	// sanitised payload through the ordinary transport.
	DiagnosticLocalKVReplayFailed = "local-kv-replay-failed"
	// DiagnosticLocalKVShutdownFailed (warning, capability local-kv-reuse):
	// the local KV runtime port's shutdown failed while the adapter shut
	// down.
	DiagnosticLocalKVShutdownFailed = "local-kv-shutdown-failed"
)
