package conformance

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ds4context/adapterkit/contract"
)

// Errors a run or an assertion wraps; test them with errors.Is.
var (
	// ErrFactory: the factory failed to create an instance.
	ErrFactory = errors.New("conformance: factory failed")
	// ErrShutdown: the adapter's final shutdown failed.
	ErrShutdown = errors.New("conformance: final shutdown failed")
	// ErrCleanup: the instance's cleanup failed.
	ErrCleanup = errors.New("conformance: instance cleanup failed")
	// ErrCaseFailed: a conformance case failed.
	ErrCaseFailed = errors.New("conformance: case failed")
	// ErrReportInvalid: a report is not a complete runtime-adapter-conformance-v1 report.
	ErrReportInvalid = errors.New("conformance: report is invalid")
)

// Report is the metadata-only outcome of Run, in the conformance report wire
// format. It holds case ids, booleans and fixed failure codes only.
type Report struct {
	Version         string       `json:"version"`
	ContractVersion string       `json:"contractVersion"`
	FactoryName     string       `json:"factoryName"`
	Passed          bool         `json:"passed"`
	Cases           []CaseReport `json:"cases"`
}

// Failed lists the ids of the cases that failed, in the report's order:
// what a test of an adapter names when the report did not pass.
func (r Report) Failed() []string {
	var ids []string
	for _, c := range r.Cases {
		if !c.Passed {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// CaseReport is one case's line in a Report. FailureCode is
// "<id>-assertion-failed" or "<id>-threw", and empty when the case passed.
type CaseReport struct {
	ID          string `json:"id"`
	Passed      bool   `json:"passed"`
	FailureCode string `json:"failureCode,omitempty"`
}

// newReport builds the report of a run of factoryName from case results. It
// passes when it holds the seven cases, in order, all passed.
func newReport(factoryName string, results []caseResult) Report {
	r := Report{
		Version:         contract.ConformanceVersion,
		ContractVersion: contract.ContractVersion,
		FactoryName:     scrub(factoryName),
		Cases:           make([]CaseReport, len(results)),
	}
	ids := make([]string, len(results))
	r.Passed = true
	for i, res := range results {
		r.Cases[i] = CaseReport{ID: res.ID, Passed: res.Passed, FailureCode: res.FailureCode}
		ids[i] = res.ID
		r.Passed = r.Passed && res.Passed
	}
	r.Passed = r.Passed && slices.Equal(ids, CaseIDs())
	return r
}

// Assert returns nil when report records a passing run of all seven cases,
// and otherwise an error joining one ErrCaseFailed error per failed case
// (naming the case and its failure code), or an ErrReportInvalid error when
// the report itself is not a complete conformance report.
func Assert(report Report) error {
	var errs []error
	if report.Version != contract.ConformanceVersion {
		errs = append(errs, fmt.Errorf("%w: version %q, want %q", ErrReportInvalid, scrub(report.Version), contract.ConformanceVersion))
	}
	if report.ContractVersion != contract.ContractVersion {
		errs = append(errs, fmt.Errorf("%w: contract version %q, want %q", ErrReportInvalid, scrub(report.ContractVersion), contract.ContractVersion))
	}
	ids := make([]string, len(report.Cases))
	for i, c := range report.Cases {
		ids[i] = c.ID
		if !c.Passed {
			code := c.FailureCode
			if code == "" {
				code = "no failure code"
			}
			errs = append(errs, fmt.Errorf("%w: %s (%s)", ErrCaseFailed, scrub(c.ID), scrub(code)))
		}
	}
	if !slices.Equal(ids, CaseIDs()) {
		errs = append(errs, fmt.Errorf("%w: cases %q, want %q", ErrReportInvalid, scrubAll(ids), CaseIDs()))
	}
	if len(errs) == 0 && !report.Passed {
		errs = append(errs, fmt.Errorf("%w: every case passed but the report is marked failed", ErrReportInvalid))
	}
	return errors.Join(errs...)
}

func scrubAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = scrub(s)
	}
	return out
}
