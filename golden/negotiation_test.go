package golden_test

import (
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/golden"
)

// negotiationCase is one row of the pinned negotiation table.
type negotiationCase struct {
	Name         string                           `json:"name"`
	Declarations []contract.CapabilityDeclaration `json:"declarations"`
	Requests     []contract.CapabilityRequest     `json:"requests"`
	Negotiation  contract.Negotiation             `json:"negotiation"`
}

// declarationStates are the states one capability's declaration can be in.
var declarationStates = []struct {
	name  string
	decls func(id string) []contract.CapabilityDeclaration
}{
	{"absent", func(string) []contract.CapabilityDeclaration { return nil }},
	{"supported-valid-version", func(id string) []contract.CapabilityDeclaration {
		return []contract.CapabilityDeclaration{{ID: id, Supported: true, Version: "v1"}}
	}},
	{"supported-invalid-version", func(id string) []contract.CapabilityDeclaration {
		return []contract.CapabilityDeclaration{{ID: id, Supported: true, Version: "-v1"}}
	}},
	{"unsupported-with-reason", func(id string) []contract.CapabilityDeclaration {
		return []contract.CapabilityDeclaration{{ID: id, Reason: "  not\tavailable \n here "}}
	}},
	{"unsupported-no-reason", func(id string) []contract.CapabilityDeclaration {
		return []contract.CapabilityDeclaration{{ID: id, Reason: " \u00a0 "}}
	}},
	{"duplicate", func(id string) []contract.CapabilityDeclaration {
		return []contract.CapabilityDeclaration{{ID: id, Supported: true, Version: "v1"}, {ID: id, Reason: "declared again"}}
	}},
}

// requestStates are the ways one capability can be requested.
var requestStates = []struct {
	name string
	reqs func(id string) []contract.CapabilityRequest
}{
	{"not-requested", func(string) []contract.CapabilityRequest { return nil }},
	{"optional", func(id string) []contract.CapabilityRequest { return []contract.CapabilityRequest{{ID: id}} }},
	{"required", func(id string) []contract.CapabilityRequest {
		return []contract.CapabilityRequest{{ID: id, Required: true}}
	}},
}

// negotiationMatrix builds the table: every capability in every
// declaration state under every request, the other three declared
// supported and requested optionally (their statuses must never change),
// then cases for the finer rules.
func negotiationMatrix() []negotiationCase {
	var cases []negotiationCase
	add := func(name string, decls []contract.CapabilityDeclaration, reqs []contract.CapabilityRequest) {
		if decls == nil {
			decls = []contract.CapabilityDeclaration{}
		}
		if reqs == nil {
			reqs = []contract.CapabilityRequest{}
		}
		cases = append(cases, negotiationCase{name, decls, reqs, contract.NegotiateCapabilities(decls, reqs)})
	}
	for _, id := range contract.CapabilityIDs() {
		for _, ds := range declarationStates {
			for _, rs := range requestStates {
				var decls []contract.CapabilityDeclaration
				var reqs []contract.CapabilityRequest
				for _, other := range contract.CapabilityIDs() {
					if other == id {
						decls = append(decls, ds.decls(id)...)
						reqs = append(reqs, rs.reqs(id)...)
						continue
					}
					decls = append(decls, contract.CapabilityDeclaration{ID: other, Supported: true, Version: "background-1"})
					reqs = append(reqs, contract.CapabilityRequest{ID: other})
				}
				add(id+"/"+ds.name+"/"+rs.name, decls, reqs)
			}
		}
	}

	all := func(required bool) []contract.CapabilityRequest {
		var reqs []contract.CapabilityRequest
		for _, id := range contract.CapabilityIDs() {
			reqs = append(reqs, contract.CapabilityRequest{ID: id, Required: required})
		}
		return reqs
	}
	add("rules/nothing-declared-all-required", nil, all(true))
	add("rules/nothing-declared-nothing-requested", nil, nil)
	add("rules/version-trimmed-upper-case-with-reason", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityEmbeddings, Supported: true, Version: "  Embedding-Port_V1.2 ", Reason: " configured\r\nport "},
	}, all(false))
	add("rules/version-64-characters", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityCompaction, Supported: true, Version: "v" + strings.Repeat("1", 63)},
	}, all(false))
	add("rules/version-65-characters", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityCompaction, Supported: true, Version: "v" + strings.Repeat("1", 64)},
	}, all(false))
	add("rules/version-kept-on-unsupported", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityLocalKVReuse, Version: "local-kv-runtime-port-v1", Reason: "not configured"},
	}, all(false))
	add("rules/reason-cut-at-240-utf16-units", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityProviderContinuation, Reason: strings.Repeat("ab ", 79) + "\U0001F600\U0001F600 tail"},
	}, all(true))
	add("rules/unregistered-ids-ignored", []contract.CapabilityDeclaration{
		{ID: "streaming", Supported: true, Version: "v1"}, {ID: "Compaction", Supported: true, Version: "v1"},
	}, []contract.CapabilityRequest{{ID: "streaming", Required: true}, {ID: "Compaction"}})
	add("rules/requests-merged-required-wins", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityEmbeddings, Reason: "no port"},
	}, []contract.CapabilityRequest{{ID: contract.CapabilityEmbeddings}, {ID: contract.CapabilityEmbeddings, Required: true}, {ID: contract.CapabilityEmbeddings}})
	add("rules/duplicate-first-unsupported", []contract.CapabilityDeclaration{
		{ID: contract.CapabilityCompaction, Reason: "no hook"}, {ID: contract.CapabilityCompaction, Supported: true, Version: "v1"},
	}, all(false))
	return cases
}

func TestNegotiationMatrixGolden(t *testing.T) {
	cases := negotiationMatrix()
	if want := len(contract.CapabilityIDs())*len(declarationStates)*len(requestStates) + 10; len(cases) != want {
		t.Fatalf("%d cases, want %d", len(cases), want)
	}
	golden.Assert(t, "negotiation-matrix", cases)
}

// TestNegotiationMatrixIsolation checks, independently of the golden, that a
// capability's state never changes another capability's status.
func TestNegotiationMatrixIsolation(t *testing.T) {
	for _, c := range negotiationMatrix() {
		varied, _, ok := strings.Cut(c.Name, "/")
		if !ok || varied == "rules" {
			continue
		}
		for _, st := range c.Negotiation.Statuses {
			if st.ID == varied {
				continue
			}
			want := contract.CapabilityStatus{ID: st.ID, Supported: true, Requested: true, Enabled: true, Version: "background-1"}
			if st != want {
				t.Errorf("%s: status of %s is %+v, want %+v", c.Name, st.ID, st, want)
			}
		}
	}
}
