package conformance

import (
	"slices"
	"testing"
)

func TestReportFailedListsTheFailedCasesInOrder(t *testing.T) {
	r := newReport("f", []caseResult{
		{ID: CaseIdentity, Passed: true},
		{ID: CaseCapabilities, FailureCode: CaseCapabilities + "-assertion-failed"},
		{ID: CaseCanonicalHistory, Passed: true},
		{ID: CaseRebuild, FailureCode: CaseRebuild + "-threw"},
	})
	if got, want := r.Failed(), []string{CaseCapabilities, CaseRebuild}; !slices.Equal(got, want) {
		t.Errorf("Failed() = %q, want %q", got, want)
	}
	if r.Passed {
		t.Error("a report with failed cases passed")
	}
	if got := (Report{Cases: []CaseReport{{ID: CaseIdentity, Passed: true}}}).Failed(); got != nil {
		t.Errorf("Failed() of a report without failures = %q, want nil", got)
	}
}
