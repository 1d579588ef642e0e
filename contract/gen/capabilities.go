package gen

import (
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// UnknownCapabilityIDs are ids outside the capability registry that the
// capability generators mix in; negotiation must ignore them.
var UnknownCapabilityIDs = []string{"", "Compaction", "compaction ", "streaming", "local-kv-reuse-v2"}

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
// after trimming).
var ValidVersions = []string{"1", "v1", "local-kv-runtime-port-v1", "EMBEDDING-PORT-V1", " 2.0_rc-1\n", "\u00a0v3\ufeff", "a" + strings.Repeat("b", 63)}

// InvalidVersions are capability versions negotiation rejects: empty,
// blank, a bad first character, a character outside [a-z0-9._-], non-ASCII
// and one character too long.
var InvalidVersions = []string{"", " ", "-1", ".v1", "v 1", "v1/2", "vé", "\u0085v1", "a" + strings.Repeat("b", 64)}

// Reasons are declared reasons: blank ones (which count as absent), ones
// with whitespace runs to collapse, and one longer than the 240 UTF-16 code units a reason is cut to.
var Reasons = []string{"", " \t\n", "not available", "  needs\n\n a   local model ", "é\u2028x", strings.Repeat("long reason ", 25)}

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
