package contract

import (
	"fmt"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// CapabilityDeclaration is an adapter's statement about one capability. A
// supported capability needs a version; an unsupported one needs a reason.
type CapabilityDeclaration struct {
	ID        CapabilityID `json:"id"`
	Supported bool         `json:"supported"`
	Version   string       `json:"version,omitempty"`
	Reason    string       `json:"reason,omitempty"`
}

// CapabilityRequest asks for a capability; Required makes a refusal a warning
// rather than information.
type CapabilityRequest struct {
	ID       CapabilityID `json:"id"`
	Required bool         `json:"required,omitempty"`
}

// CapabilityStatus is the negotiated state of one registry capability.
type CapabilityStatus struct {
	ID        CapabilityID `json:"id"`
	Supported bool         `json:"supported"`
	Requested bool         `json:"requested"`
	Required  bool         `json:"required"`
	Enabled   bool         `json:"enabled"`
	Version   string       `json:"version,omitempty"`
	Reason    string       `json:"reason,omitempty"`
}

// Negotiation is the outcome of NegotiateCapabilities. Enabled and Disabled
// list capability ids in registry order; Disabled holds the requested
// capabilities that were not enabled.
type Negotiation struct {
	ContractVersion string             `json:"contractVersion"`
	Statuses        []CapabilityStatus `json:"statuses"`
	Enabled         []CapabilityID     `json:"enabled"`
	Disabled        []CapabilityID     `json:"disabled"`
	Diagnostics     []Diagnostic       `json:"diagnostics"`
}

// Severity grades a diagnostic.
type Severity string

// The three diagnostic severities.
const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Diagnostic is a metadata-only record of something an adapter observed. It
// never carries prompts, history text, credentials, payloads, cache handles
// or provider output.
type Diagnostic struct {
	Code       string       `json:"code"`
	Severity   Severity     `json:"severity"`
	Message    string       `json:"message"`
	Capability CapabilityID `json:"capability,omitempty"`
}

// Negotiation diagnostic codes.
const (
	CodeCapabilityDeclarationInvalid = "capability-declaration-invalid"
	CodeCapabilityUnsupported        = "capability-unsupported"
)

// Reasons given for capabilities that are not supported.
const (
	ReasonDuplicateDeclaration = "runtime adapter declared this capability more than once"
	ReasonInvalidVersion       = "supported capability has a missing or invalid version"
	ReasonMissingReason        = "unsupported capability is missing a reason"
	ReasonNotDeclared          = "runtime adapter did not declare this capability"
)

// maxReasonLength is the length, in UTF-16 code units, a declared reason is cut to.
const maxReasonLength = 240

// validCapabilityVersion reports whether v, trimmed, is a valid capability
// version: 1–64 characters of [a-z0-9._-] (ASCII letters of either case),
// starting with a letter or digit.
func validCapabilityVersion(v string) bool {
	v = jsstring.Trim(v)
	if len(v) == 0 || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i] | 0x20 // ASCII lower case; maps digits and '.', '_', '-' onto themselves or out of range
		isAlnum := (c >= 'a' && c <= 'z') || (v[i] >= '0' && v[i] <= '9')
		if i == 0 {
			if !isAlnum {
				return false
			}
			continue
		}
		if !isAlnum && v[i] != '.' && v[i] != '_' && v[i] != '-' {
			return false
		}
	}
	return true
}

// normalizeReason collapses whitespace runs to one space, trims, and cuts the
// result to maxReasonLength UTF-16 code units. A blank reason becomes "".
func normalizeReason(reason string) string {
	return jsstring.Truncate(jsstring.Trim(jsstring.CollapseSpace(reason)), maxReasonLength)
}

// NegotiateCapabilities decides, for every registry capability in registry
// order, whether it is enabled, given an adapter's declarations and a
// caller's requests. Each capability is judged on its own: a malformed or
// unsupported declaration disables only that capability. Ids outside the
// registry are ignored.
func NegotiateCapabilities(declarations []CapabilityDeclaration, requests []CapabilityRequest) Negotiation {
	ids := CapabilityIDs()
	n := Negotiation{
		ContractVersion: ContractVersion,
		Statuses:        make([]CapabilityStatus, 0, len(ids)),
		Enabled:         []CapabilityID{},
		Disabled:        []CapabilityID{},
		Diagnostics:     []Diagnostic{},
	}
	for _, id := range ids {
		var decl *CapabilityDeclaration
		duplicate := false
		for i := range declarations {
			if declarations[i].ID != id {
				continue
			}
			if decl == nil {
				decl = &declarations[i]
			} else {
				duplicate = true
			}
		}
		requested, required := false, false
		for _, r := range requests {
			if r.ID == id {
				requested = true
				required = required || r.Required
			}
		}
		st := CapabilityStatus{ID: id, Requested: requested, Required: required}
		reason := ""
		malformed := duplicate
		if decl != nil {
			if validCapabilityVersion(decl.Version) {
				st.Version = jsstring.Trim(decl.Version)
			}
			reason = normalizeReason(decl.Reason)
			if decl.Supported && st.Version == "" {
				malformed = true
			}
			if !decl.Supported && reason == "" {
				malformed = true
			}
			st.Supported = decl.Supported && !malformed
		}
		switch {
		case st.Supported:
			st.Reason = reason
		case duplicate:
			st.Reason = ReasonDuplicateDeclaration
		case decl != nil && decl.Supported && st.Version == "":
			st.Reason = ReasonInvalidVersion
		case decl != nil && !decl.Supported && reason == "":
			st.Reason = ReasonMissingReason
		case reason != "":
			st.Reason = reason
		default:
			st.Reason = ReasonNotDeclared
		}
		st.Enabled = requested && st.Supported
		n.Statuses = append(n.Statuses, st)
		if st.Enabled {
			n.Enabled = append(n.Enabled, id)
			continue
		}
		if !requested {
			continue
		}
		n.Disabled = append(n.Disabled, id)
		d := Diagnostic{Code: CodeCapabilityUnsupported, Severity: SeverityInfo, Capability: id}
		if malformed {
			d.Code = CodeCapabilityDeclarationInvalid
		}
		kind := "Optional"
		if required {
			d.Severity = SeverityWarning
			kind = "Required"
		}
		d.Message = fmt.Sprintf("%s runtime capability %s is disabled: %s", kind, id, st.Reason)
		n.Diagnostics = append(n.Diagnostics, d)
	}
	return n
}
