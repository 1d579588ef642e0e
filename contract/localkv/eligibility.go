package localkv

import (
	"crypto/sha256"
	"encoding/json"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// MaxSafeInteger is 2^53−1, the largest integer a JSON number carries
// exactly across implementations. Token counts may not exceed it, and every
// diagnostics counter saturates at it.
const MaxSafeInteger = 1<<53 - 1

// Identifier length limits, in UTF-16 code units.
const (
	// MaxIdentifierLength bounds provider, model, model revision, runtime
	// identity, runtime revision and privacy policy version.
	MaxIdentifierLength = 256
	// MaxCapabilityVersionLength bounds the capability version.
	MaxCapabilityVersionLength = 64
)

// LocalDestination is the only destination eligible for local KV reuse.
const LocalDestination = "local"

// EligibilityInput is everything eligibility depends on. It carries no cache
// handle: the key derived from it is metadata only.
//
// SystemOptions and ToolOptions hold plain JSON values (see the package
// documentation for the accepted Go types). A nil interface means the option
// is absent and is omitted from the options hash; JSON null is written
// JSONNull{} or json.RawMessage("null") and hashes differently from absent.
type EligibilityInput struct {
	// Enabled is the configuration switch; false gives ReasonDisabled.
	Enabled bool
	// CapabilityEnabled reports that the runtime supports local KV reuse.
	CapabilityEnabled bool
	// CapabilityVersion is the runtime port's capability version (at most
	// 64 UTF-16 code units).
	CapabilityVersion string
	// Destination is the sanitised payload's destination; only "local" is
	// eligible.
	Destination string
	// RuntimeID identifies the runtime that owns the KV state.
	RuntimeID string
	// RuntimeRevision identifies the runtime build.
	RuntimeRevision string
	// Provider and Model name the model the payload is sent to.
	Provider string
	Model    string
	// ModelRevision pins the model's weights.
	ModelRevision string
	// PrivacyPolicyVersion identifies the privacy policy that sanitised the
	// payload.
	PrivacyPolicyVersion string
	// PromptPrefix is the reusable prefix. A string prefix is given as
	// []byte(s): its UTF-8 bytes are what the contract hashes. It must not be
	// empty.
	PromptPrefix []byte
	// SystemOptions and ToolOptions are the options that shape the prefix's
	// KV state; nil means absent.
	SystemOptions any
	ToolOptions   any
	// PrefixTokenCount and ContextTokenCount are token counts, integers in
	// [0, 2^53−1] with PrefixTokenCount ≤ ContextTokenCount.
	PrefixTokenCount  int64
	ContextTokenCount int64
}

// Reason says why a request is not eligible for local KV reuse.
type Reason string

// The ineligibility reasons, in the order eligibility checks them: the first
// failing check is the reason.
const (
	ReasonDisabled                    Reason = "disabled"
	ReasonCapabilityUnsupported       Reason = "capability-unsupported"
	ReasonNonLocalDestination         Reason = "non-local-destination"
	ReasonInvalidProvider             Reason = "invalid-provider"
	ReasonInvalidModel                Reason = "invalid-model"
	ReasonInvalidModelRevision        Reason = "invalid-model-revision"
	ReasonInvalidRuntimeIdentity      Reason = "invalid-runtime-identity"
	ReasonInvalidRuntimeRevision      Reason = "invalid-runtime-revision"
	ReasonInvalidCapabilityVersion    Reason = "invalid-capability-version"
	ReasonInvalidPrivacyPolicyVersion Reason = "invalid-privacy-policy-version"
	ReasonInvalidPromptPrefix         Reason = "invalid-prompt-prefix"
	ReasonInvalidTokenCount           Reason = "invalid-token-count"
	ReasonInvalidOptions              Reason = "invalid-options"
)

// Reasons returns every ineligibility reason in check order. The slice is a
// fresh copy.
func Reasons() []Reason {
	return []Reason{
		ReasonDisabled, ReasonCapabilityUnsupported, ReasonNonLocalDestination,
		ReasonInvalidProvider, ReasonInvalidModel, ReasonInvalidModelRevision,
		ReasonInvalidRuntimeIdentity, ReasonInvalidRuntimeRevision,
		ReasonInvalidCapabilityVersion, ReasonInvalidPrivacyPolicyVersion,
		ReasonInvalidPromptPrefix, ReasonInvalidTokenCount, ReasonInvalidOptions,
	}
}

// Key is the eligibility key of a request: lowercase hex SHA-256 digests of
// the prefix and of each group of inputs, and a fingerprint over all of them.
// It is metadata only; the runtime maps it to whatever KV state it keeps.
type Key struct {
	// Version is local-kv-eligibility-v1.
	Version string `json:"version"`
	// Fingerprint hashes the version and the five hashes below: equal
	// fingerprints mean the same prefix under the same model, options,
	// privacy policy and runtime.
	Fingerprint string `json:"fingerprint"`
	// PrefixHash hashes the prompt prefix bytes.
	PrefixHash string `json:"prefixHash"`
	// ProviderModelHash hashes provider, model and model revision.
	ProviderModelHash string `json:"providerModelHash"`
	// OptionsHash hashes the system and tool options.
	OptionsHash string `json:"optionsHash"`
	// PrivacyHash hashes the destination and privacy policy version.
	PrivacyHash string `json:"privacyHash"`
	// RuntimeHash hashes the runtime identity, its revision and the
	// capability version.
	RuntimeHash string `json:"runtimeHash"`
}

// Eligibility is the result of DeriveEligibility. When Eligible is false only
// Reason is set; when it is true Key and the token counts are set and Reason
// is empty.
type Eligibility struct {
	// Eligible reports whether the request may use the local KV path.
	Eligible bool
	// Reason is the first failed check of an ineligible request.
	Reason Reason
	// Key names the request's reusable state.
	Key Key
	// PrefixTokenCount and ContextTokenCount repeat the input's counts.
	PrefixTokenCount  int64
	ContextTokenCount int64
}

// MarshalJSON writes the wire shape: {"eligible":false,"reason":…} or
// {"eligible":true,"key":…,"prefixTokenCount":…,"contextTokenCount":…}.
func (e Eligibility) MarshalJSON() ([]byte, error) {
	if !e.Eligible {
		return json.Marshal(struct {
			Eligible bool   `json:"eligible"`
			Reason   Reason `json:"reason"`
		}{false, e.Reason})
	}
	return json.Marshal(struct {
		Eligible          bool  `json:"eligible"`
		Key               Key   `json:"key"`
		PrefixTokenCount  int64 `json:"prefixTokenCount"`
		ContextTokenCount int64 `json:"contextTokenCount"`
	}{true, e.Key, e.PrefixTokenCount, e.ContextTokenCount})
}

// DeriveEligibility checks in against the local KV rules, in order, and
// returns the first failure as the reason, or the request's key. It never
// calls a runtime and is safe for concurrent use.
func DeriveEligibility(in EligibilityInput) Eligibility {
	reason, opts := check(&in)
	if reason != "" {
		return Eligibility{Reason: reason}
	}
	return Eligibility{
		Eligible:          true,
		Key:               deriveKey(&in, opts),
		PrefixTokenCount:  in.PrefixTokenCount,
		ContextTokenCount: in.ContextTokenCount,
	}
}

// check runs the checks in contract order. On success it also returns the
// options object as a JSON value, since converting the options is how they
// are validated.
func check(in *EligibilityInput) (Reason, jsonw.Value) {
	switch {
	case !in.Enabled:
		return ReasonDisabled, jsonw.Value{}
	case !in.CapabilityEnabled:
		return ReasonCapabilityUnsupported, jsonw.Value{}
	case in.Destination != LocalDestination:
		return ReasonNonLocalDestination, jsonw.Value{}
	case !validIdentifier(in.Provider, MaxIdentifierLength):
		return ReasonInvalidProvider, jsonw.Value{}
	case !validIdentifier(in.Model, MaxIdentifierLength):
		return ReasonInvalidModel, jsonw.Value{}
	case !validIdentifier(in.ModelRevision, MaxIdentifierLength):
		return ReasonInvalidModelRevision, jsonw.Value{}
	case !validIdentifier(in.RuntimeID, MaxIdentifierLength):
		return ReasonInvalidRuntimeIdentity, jsonw.Value{}
	case !validIdentifier(in.RuntimeRevision, MaxIdentifierLength):
		return ReasonInvalidRuntimeRevision, jsonw.Value{}
	case !validIdentifier(in.CapabilityVersion, MaxCapabilityVersionLength):
		return ReasonInvalidCapabilityVersion, jsonw.Value{}
	case !validIdentifier(in.PrivacyPolicyVersion, MaxIdentifierLength):
		return ReasonInvalidPrivacyPolicyVersion, jsonw.Value{}
	case len(in.PromptPrefix) == 0:
		return ReasonInvalidPromptPrefix, jsonw.Value{}
	case !validTokenCounts(in.PrefixTokenCount, in.ContextTokenCount):
		return ReasonInvalidTokenCount, jsonw.Value{}
	}
	opts := jsonw.Value{Kind: jsonw.Object, Members: make([]jsonw.Member, 0, 2)}
	for _, o := range [...]struct {
		name  string
		value any
	}{{"systemOptions", in.SystemOptions}, {"toolOptions", in.ToolOptions}} {
		if o.value == nil {
			continue // absent: omitted, as JSON.stringify omits undefined
		}
		v, err := plainJSON(o.value)
		if err != nil {
			return ReasonInvalidOptions, jsonw.Value{}
		}
		opts.Members = append(opts.Members, jsonw.Member{Name: o.name, Value: v})
	}
	return "", opts
}

func validTokenCounts(prefix, context int64) bool {
	return prefix >= 0 && context >= 0 && prefix <= MaxSafeInteger && context <= MaxSafeInteger && prefix <= context
}

// validIdentifier reports whether s is 1–max UTF-16 code units long, equal to
// itself trimmed as JavaScript trims, and free of control characters
// U+0000–U+001F and U+007F. A string that is not valid UTF-8 has no UTF-16
// form and is never valid.
func validIdentifier(s string, max int) bool {
	if s == "" || len(s) > 4*max { // each rune is at most 4 bytes and at least 1 unit
		return false
	}
	units := 0
	first, last := rune(-1), rune(-1)
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			r = rune(c)
			i++
			units++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
			units += jsstring.Units(r)
		}
		if first < 0 {
			first = r
		}
		last = r
	}
	return units <= max && !jsstring.IsSpace(first) && !jsstring.IsSpace(last)
}

// deriveKey computes the key of a checked input.
func deriveKey(in *EligibilityInput, opts jsonw.Value) Key {
	k := Key{Version: contract.LocalKVEligibilityVersion}
	h := hasher{buf: make([]byte, 0, 512)}
	k.PrefixHash = hexDigest(sha256.Sum256(in.PromptPrefix))
	k.ProviderModelHash = h.hash(object(
		"provider", in.Provider, "model", in.Model, "modelRevision", in.ModelRevision))
	k.OptionsHash = h.hash(opts)
	k.PrivacyHash = h.hash(object(
		"destination", in.Destination, "privacyPolicyVersion", in.PrivacyPolicyVersion))
	k.RuntimeHash = h.hash(object(
		"runtimeId", in.RuntimeID, "runtimeRevision", in.RuntimeRevision, "capabilityVersion", in.CapabilityVersion))
	k.Fingerprint = h.hash(object(
		"version", k.Version, "prefixHash", k.PrefixHash, "providerModelHash", k.ProviderModelHash,
		"optionsHash", k.OptionsHash, "privacyHash", k.PrivacyHash, "runtimeHash", k.RuntimeHash))
	return k
}
