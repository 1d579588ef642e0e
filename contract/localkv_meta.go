package contract

// LocalKVMode says how a local KV completion was served.
type LocalKVMode string

// The two local KV completion modes.
const (
	LocalKVHit        LocalKVMode = "hit"
	LocalKVFullReplay LocalKVMode = "full-replay"
)

// LocalKVMetadata describes a completion served through the local KV path. It
// carries counts and timings only: never a prefix, payload or cache handle.
type LocalKVMetadata struct {
	Mode                LocalKVMode `json:"mode"`
	PrefixTokens        int64       `json:"prefixTokens"`
	ContextTokens       int64       `json:"contextTokens"`
	SavedPrefillTokens  int64       `json:"savedPrefillTokens"`
	ReplayPrefillTokens int64       `json:"replayPrefillTokens"`
	PrefillLatencyMs    float64     `json:"prefillLatencyMs"`
}
