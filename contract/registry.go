package contract

// Versions of the runtime-adapter-v1 contract. They are frozen for the 0.2
// release line: changing any of them is a new contract version, never an edit.
const (
	// ContractVersion names the adapter contract implemented by this module.
	ContractVersion = "runtime-adapter-v1"
	// HistorySchemaVersion is the schema version of a HistorySnapshot.
	HistorySchemaVersion = "runtime-history-v1"
	// ConformanceVersion is the version of the conformance report format.
	ConformanceVersion = "runtime-adapter-conformance-v1"
	// LocalKVEligibilityVersion versions local KV eligibility keys.
	LocalKVEligibilityVersion = "local-kv-eligibility-v1"
	// LocalKVRuntimePortVersion is the default version of the local KV runtime port capability.
	LocalKVRuntimePortVersion = "local-kv-runtime-port-v1"
	// LocalKVDiagnosticsVersion versions aggregate local KV diagnostics.
	LocalKVDiagnosticsVersion = "local-kv-diagnostics-v1"
)

// CapabilityID identifies an optional runtime capability.
type CapabilityID = string

// The capability registry of runtime-adapter-v1.
const (
	CapabilityCompaction           CapabilityID = "compaction"
	CapabilityProviderContinuation CapabilityID = "provider-continuation"
	CapabilityEmbeddings           CapabilityID = "embeddings"
	CapabilityLocalKVReuse         CapabilityID = "local-kv-reuse"
)

// CapabilityIDs returns the capability registry in its significant order:
// negotiation lists statuses in this order. The slice is a fresh copy.
func CapabilityIDs() []CapabilityID {
	return []CapabilityID{CapabilityCompaction, CapabilityProviderContinuation, CapabilityEmbeddings, CapabilityLocalKVReuse}
}

// IsRegisteredCapability reports whether id is in the registry.
func IsRegisteredCapability(id string) bool {
	switch id {
	case CapabilityCompaction, CapabilityProviderContinuation, CapabilityEmbeddings, CapabilityLocalKVReuse:
		return true
	}
	return false
}
