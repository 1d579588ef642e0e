package localkv

// PortProvider is implemented by adapters that may expose the local KV
// runtime port they were configured with. LocalKVPort returns nil when none
// is configured.
type PortProvider interface {
	LocalKVPort() RuntimePort
}

// DiagnosticsProvider is implemented by adapters that may keep aggregate
// local KV diagnostics. LocalKVDiagnostics reports false, with zero
// Diagnostics, when the adapter has no local KV path configured.
type DiagnosticsProvider interface {
	LocalKVDiagnostics() (Diagnostics, bool)
}
