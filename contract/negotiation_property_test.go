package contract_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// validlySupported reports whether declarations hold exactly one
// declaration of id, declared supported with a valid version.
func validlySupported(decls []contract.CapabilityDeclaration, id string) bool {
	n, ok := 0, false
	for _, d := range decls {
		if d.ID == id {
			n++
			ok = d.Supported && contract.ValidCapabilityVersion(d.Version)
		}
	}
	return n == 1 && ok
}

// malformed reports whether id is declared more than once, or declared
// supported without a valid version, or unsupported without a reason.
func malformed(decls []contract.CapabilityDeclaration, id string) bool {
	var first *contract.CapabilityDeclaration
	for i := range decls {
		if decls[i].ID != id {
			continue
		}
		if first != nil {
			return true
		}
		first = &decls[i]
	}
	if first == nil {
		return false
	}
	if first.Supported {
		return !contract.ValidCapabilityVersion(first.Version)
	}
	return contract.NormalizeReason(first.Reason) == ""
}

// firstVersion returns the trimmed version of id's first declaration when
// it is valid.
func firstVersion(decls []contract.CapabilityDeclaration, id string) string {
	for _, d := range decls {
		if d.ID == id {
			if contract.ValidCapabilityVersion(d.Version) {
				return contract.TrimJS(d.Version)
			}
			return ""
		}
	}
	return ""
}

func requested(reqs []contract.CapabilityRequest, id string) (requested, required bool) {
	for _, r := range reqs {
		if r.ID == id {
			requested = true
			required = required || r.Required
		}
	}
	return requested, required
}

func statusOf(n contract.Negotiation, id string) contract.CapabilityStatus {
	for _, s := range n.Statuses {
		if s.ID == id {
			return s
		}
	}
	return contract.CapabilityStatus{}
}

func TestPropertyNegotiationStatusesFollowTheRegistry(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		decls := gen.Declarations().Draw(t, "declarations")
		reqs := gen.Requests().Draw(t, "requests")
		n := contract.NegotiateCapabilities(decls, reqs)
		if n.ContractVersion != contract.ContractVersion {
			t.Fatalf("contract version %q", n.ContractVersion)
		}
		var ids []string
		for _, s := range n.Statuses {
			ids = append(ids, s.ID)
		}
		if !slices.Equal(ids, contract.CapabilityIDs()) {
			t.Fatalf("statuses list %v, want the registry %v", ids, contract.CapabilityIDs())
		}
	})
}

func TestPropertyNegotiationEnablesExactlyRequestedValidSupport(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		decls := gen.Declarations().Draw(t, "declarations")
		reqs := gen.Requests().Draw(t, "requests")
		n := contract.NegotiateCapabilities(decls, reqs)
		var wantEnabled, wantDisabled []string
		diagnosed := map[string]contract.Diagnostic{}
		for _, d := range n.Diagnostics {
			if _, dup := diagnosed[d.Capability]; dup {
				t.Fatalf("two diagnostics for %s", d.Capability)
			}
			diagnosed[d.Capability] = d
		}
		for _, id := range contract.CapabilityIDs() {
			st := statusOf(n, id)
			req, required := requested(reqs, id)
			supported := validlySupported(decls, id)
			if st.Requested != req || st.Required != required {
				t.Fatalf("%s: requested/required %v/%v, want %v/%v", id, st.Requested, st.Required, req, required)
			}
			if st.Supported != supported {
				t.Fatalf("%s: supported %v, want %v", id, st.Supported, supported)
			}
			if v := firstVersion(decls, id); st.Version != v {
				t.Fatalf("%s: version %q, want %q", id, st.Version, v)
			}
			if st.Enabled != (req && supported) {
				t.Fatalf("%s: enabled %v, want requested %v and validly supported %v", id, st.Enabled, req, supported)
			}
			if st.Enabled {
				wantEnabled = append(wantEnabled, id)
			} else if req {
				wantDisabled = append(wantDisabled, id)
			}
			d, has := diagnosed[id]
			if has != (req && !st.Enabled) {
				t.Fatalf("%s: diagnostic %v, want one exactly when requested and disabled", id, has)
			}
			if !has {
				continue
			}
			wantSeverity := contract.SeverityInfo
			if required {
				wantSeverity = contract.SeverityWarning
			}
			if d.Severity != wantSeverity {
				t.Fatalf("%s: severity %s, want %s (required %v)", id, d.Severity, wantSeverity, required)
			}
			wantCode := contract.CodeCapabilityUnsupported
			if malformed(decls, id) {
				wantCode = contract.CodeCapabilityDeclarationInvalid
			}
			if d.Code != wantCode {
				t.Fatalf("%s: diagnostic %s, want %s", id, d.Code, wantCode)
			}
		}
		if !slices.Equal(n.Enabled, nonNil(wantEnabled)) || !slices.Equal(n.Disabled, nonNil(wantDisabled)) {
			t.Fatalf("enabled %v disabled %v, want %v and %v", n.Enabled, n.Disabled, wantEnabled, wantDisabled)
		}
		if n.Enabled == nil || n.Disabled == nil || n.Diagnostics == nil {
			t.Fatal("negotiation lists must be empty, not nil")
		}
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestPropertyNegotiationJudgesEachCapabilityAlone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		decls := gen.Declarations().Draw(t, "declarations")
		reqs := gen.Requests().Draw(t, "requests")
		id := rapid.SampledFrom(contract.CapabilityIDs()).Draw(t, "changed")
		// Replace every declaration of id by other declarations of id.
		var changed []contract.CapabilityDeclaration
		for _, d := range decls {
			if d.ID != id {
				changed = append(changed, d)
			}
		}
		for _, d := range rapid.SliceOfN(gen.Declaration(), 0, 3).Draw(t, "replacements") {
			d.ID = id
			at := rapid.IntRange(0, len(changed)).Draw(t, "at")
			changed = slices.Insert(changed, at, d)
		}
		before := contract.NegotiateCapabilities(decls, reqs)
		after := contract.NegotiateCapabilities(changed, reqs)
		for _, other := range contract.CapabilityIDs() {
			if other != id && statusOf(before, other) != statusOf(after, other) {
				t.Fatalf("changing %s's declarations changed %s: %+v → %+v", id, other, statusOf(before, other), statusOf(after, other))
			}
		}
	})
}

func TestPropertyNegotiationIgnoresRequestOrderAndRepetition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		decls := gen.Declarations().Draw(t, "declarations")
		reqs := gen.Requests().Draw(t, "requests")
		shuffled := rapid.Permutation(reqs).Draw(t, "shuffled")
		if len(reqs) > 0 {
			// Repeat some requests, always as optional: a repeated optional
			// request never changes whether an id is required.
			for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(reqs)-1), 0, 4).Draw(t, "repeat") {
				shuffled = append(shuffled, contract.CapabilityRequest{ID: reqs[i].ID})
			}
		}
		want := contract.NegotiateCapabilities(decls, reqs)
		if got := contract.NegotiateCapabilities(decls, shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("reordered and repeated requests changed the negotiation:\n got %+v\nwant %+v", got, want)
		}
	})
}

func TestPropertyDuplicateDeclarationDisablesOnlyThatCapability(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		decls := gen.Declarations().Draw(t, "declarations")
		reqs := gen.Requests().Draw(t, "requests")
		dup := gen.Declaration().Draw(t, "duplicate")
		id := rapid.SampledFrom(contract.CapabilityIDs()).Draw(t, "id")
		dup.ID = id
		first := slices.IndexFunc(decls, func(d contract.CapabilityDeclaration) bool { return d.ID == id })
		with := slices.Clone(decls)
		if first < 0 {
			with = append(with, dup, dup)
		} else {
			with = slices.Insert(with, rapid.IntRange(first+1, len(with)).Draw(t, "at"), dup)
		}
		before := contract.NegotiateCapabilities(decls, reqs)
		after := contract.NegotiateCapabilities(with, reqs)
		st := statusOf(after, id)
		if st.Supported || st.Enabled || st.Reason != contract.ReasonDuplicateDeclaration {
			t.Fatalf("duplicated %s: %+v", id, st)
		}
		for _, d := range after.Diagnostics {
			if d.Capability == id && d.Code != contract.CodeCapabilityDeclarationInvalid {
				t.Fatalf("duplicated %s diagnosed as %s", id, d.Code)
			}
		}
		for _, other := range contract.CapabilityIDs() {
			if other != id && statusOf(before, other) != statusOf(after, other) {
				t.Fatalf("duplicating %s changed %s", id, other)
			}
		}
	})
}
