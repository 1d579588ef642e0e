package gen

import (
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// UnknownCapabilityIDs are ids outside the capability registry that the
// capability generators mix in; negotiation must ignore them. Some are
// registry ids as a normaliser would take them: other case, whitespace
// either trim removes (U+FEFF only JavaScript's, U+0085 only Go's
// strings.TrimSpace), a Kelvin sign (k to toLowerCase and
// strings.EqualFold), a long s (s to EqualFold), a dotted capital I (i to
// strings.ToLower).
var UnknownCapabilityIDs = []string{"", "Compaction", "compaction ", "streaming", "local-kv-reuse-v2",
	"\ufeffembeddings", "compaction\u0085", "local-\u212av-reuse", "embedding\u017f", "compact\u0130on", "embeddings\r\n"}

// CapabilityID returns a generator of capability ids: mostly registry ids,
// sometimes an id from UnknownCapabilityIDs.
func CapabilityID() *rapid.Generator[contract.CapabilityID] {
	return rapid.Custom(func(t *rapid.T) contract.CapabilityID {
		if rapid.IntRange(0, 4).Draw(t, "unknown") == 0 {
			return rapid.SampledFrom(UnknownCapabilityIDs).Draw(t, "unknownId")
		}
		return rapid.SampledFrom(contract.CapabilityIDs()).Draw(t, "id")
	})
}

// ValidVersions are capability versions negotiation accepts (some only
// after trimming, by JavaScript's trim: U+FEFF, U+2028 and CRLF around
// them, which Go's strings.TrimSpace leaves in part).
var ValidVersions = []string{"1", "v1", "local-kv-runtime-port-v1", "EMBEDDING-PORT-V1", " 2.0_rc-1\n", "\u00a0v3\ufeff", "a" + strings.Repeat("b", 63),
	"\ufeffv1", "\u2028V2.1\r\n"}

// InvalidVersions are capability versions negotiation rejects: empty,
// blank, a bad first character, a character outside [a-z0-9._-], non-ASCII
// and one character too long — among them whitespace JavaScript's trim
// keeps (U+0085, which Go's strings.TrimSpace removes; U+180E and U+200B,
// which neither removes) and the Kelvin sign and long s, which Go's (?i)
// matches to k and s where the contract's ASCII case-insensitivity does
// not.
var InvalidVersions = []string{"", " ", "-1", ".v1", "v 1", "v1/2", "vé", "\u0085v1", "a" + strings.Repeat("b", 64),
	"v1\u0085", "v1\u180e", "\u200bv1", "\u212av-1", "v\u017f1"}

// Reasons are declared reasons: blank ones (which count as absent: U+FEFF
// is blank to JavaScript's trim, not to Go's strings.TrimSpace), one
// blank to TrimSpace only (U+0085, not absent), ones with whitespace runs
// (CRLF among them) to collapse, one longer than the 240 UTF-16 code units
// a reason is cut to, and ones at that cut with a character outside the
// Basic Multilingual Plane: ending at unit 240 in 239 runes (kept whole),
// straddling it (cut before it: a Go string cannot hold half of it) and
// 121 such characters, 242 units in 121 runes (cut to 120).
var Reasons = []string{"", " \t\n", "not available", "  needs\n\n a   local model ", "é\u2028x", strings.Repeat("long reason ", 25),
	"\ufeff", "\u0085", "needs\r\na\rlocal model", strings.Repeat("r", 238) + "\U0001f600",
	strings.Repeat("r", 239) + "\U0001f600 tail", strings.Repeat("\U0001f600", 121)}

// Declaration returns a generator of single capability declarations, well
// formed or malformed: a supported declaration with a valid or invalid
// version, an unsupported one with or without a reason, for a registry or
// an unknown id.
func Declaration() *rapid.Generator[contract.CapabilityDeclaration] {
	return rapid.Custom(func(t *rapid.T) contract.CapabilityDeclaration {
		d := contract.CapabilityDeclaration{
			ID:        CapabilityID().Draw(t, "id"),
			Supported: rapid.Bool().Draw(t, "supported"),
		}
		switch rapid.IntRange(0, 2).Draw(t, "version") {
		case 0:
			d.Version = rapid.SampledFrom(ValidVersions).Draw(t, "validVersion")
		case 1:
			d.Version = rapid.SampledFrom(InvalidVersions).Draw(t, "invalidVersion")
		}
		d.Reason = rapid.SampledFrom(Reasons).Draw(t, "reason")
		return d
	})
}

// Declarations returns a generator of declaration lists of up to eight
// declarations, in which ids repeat (duplicate declarations), unknown ids
// appear, and versions and reasons are valid, invalid or missing.
func Declarations() *rapid.Generator[[]contract.CapabilityDeclaration] {
	return rapid.SliceOfN(Declaration(), 0, 8)
}

// Request returns a generator of single capability requests, optional or
// required, for a registry or an unknown id.
func Request() *rapid.Generator[contract.CapabilityRequest] {
	return rapid.Custom(func(t *rapid.T) contract.CapabilityRequest {
		return contract.CapabilityRequest{ID: CapabilityID().Draw(t, "id"), Required: rapid.Bool().Draw(t, "required")}
	})
}

// Requests returns a generator of request lists of up to eight requests, in
// which ids repeat (with differing Required) and unknown ids appear.
func Requests() *rapid.Generator[[]contract.CapabilityRequest] {
	return rapid.SliceOfN(Request(), 0, 8)
}
