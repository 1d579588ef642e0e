package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The seven case ids, in the order a run executes them.
const (
	CaseIdentity         = "identity"
	CaseCapabilities     = "capabilities"
	CaseCanonicalHistory = "canonical-history"
	CaseRebuild          = "rebuild"
	CasePrivacy          = "privacy"
	CaseFallback         = "fallback"
	CaseLifecycle        = "lifecycle"
)

// Failure code suffixes: a case fails with "<id>-assertion-failed" when the
// adapter broke a rule, and "<id>-threw" when an adapter method failed
// unexpectedly or panicked.
const (
	codeAssertionFailed = "-assertion-failed"
	codeThrew           = "-threw"
)

// Case describes one conformance case.
type Case struct {
	// ID is the case id used in reports, labels and failure codes.
	ID string
	// Summary says, in one sentence, what the case checks.
	Summary string
	check   func(ctx context.Context, s *Session) error
}

// CaseResult is the outcome of one case. Failure explains a failed case and
// is nil when it passed; Report keeps only ID, Passed and FailureCode.
type CaseResult struct {
	ID          string
	Passed      bool
	FailureCode string
	Failure     *Failure
}

// Failure explains why a case failed: the contract rule that broke, what
// was expected and what the adapter did. It holds metadata only — ids,
// codes, counts, statuses and adapter error text scrubbed of probes — never
// a probe or a payload.
type Failure struct {
	// Case is the case id, Code the failure code.
	Case, Code string
	// Rule states the broken rule.
	Rule string
	// Expected and Actual describe the expected and the observed behaviour.
	Expected, Actual string
}

// Error formats the failure on one line per field.
func (f *Failure) Error() string {
	return fmt.Sprintf("conformance case %s failed (%s)\n  rule:     %s\n  expected: %s\n  actual:   %s",
		f.Case, f.Code, f.Rule, f.Expected, f.Actual)
}

// Is makes a Failure match ErrCaseFailed.
func (f *Failure) Is(target error) bool { return target == ErrCaseFailed }

// Cases returns the seven cases in run order.
func Cases() []Case { return append([]Case(nil), cases...) }

// CaseIDs returns the seven case ids in run order.
func CaseIDs() []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.ID
	}
	return ids
}

// Summary returns the summary of the case with the given id, or "".
func Summary(id string) string {
	for _, c := range cases {
		if c.ID == id {
			return c.Summary
		}
	}
	return ""
}

// brokenRule is a check that found the adapter breaking a rule.
type brokenRule struct{ rule, expected, actual string }

func (b *brokenRule) Error() string { return b.rule }

// adapterError is an adapter method failing where the contract says it
// must succeed.
type adapterError struct {
	rule string
	err  error
}

func (a *adapterError) Error() string { return a.rule }

// broken returns a brokenRule. Callers quote adapter values with q or qs,
// which scrub each one; the probes are redacted from actual once more.
func broken(rule, expected, actual string) error {
	return &brokenRule{rule: rule, expected: expected, actual: redactProbes(actual)}
}

// failed wraps an unexpected adapter error for rule.
func failed(rule string, err error) error { return &adapterError{rule: rule, err: err} }

// run executes the case on s, recovering a panic, and classifies the result.
func (c Case) run(ctx context.Context, s *Session) (res CaseResult) {
	res.ID = c.ID
	defer func() {
		if v := recover(); v != nil {
			res = c.result(&adapterError{rule: "adapter methods must not panic", err: fmt.Errorf("panic: %v", v)})
		}
	}()
	return c.result(c.check(ctx, s))
}

func (c Case) result(err error) CaseResult {
	if err == nil {
		return CaseResult{ID: c.ID, Passed: true}
	}
	f := &Failure{Case: c.ID}
	var br *brokenRule
	var ae *adapterError
	switch {
	case errors.As(err, &br):
		f.Code = c.ID + codeAssertionFailed
		f.Rule, f.Expected, f.Actual = br.rule, br.expected, br.actual
	case errors.As(err, &ae):
		f.Code = c.ID + codeThrew
		f.Rule, f.Expected, f.Actual = ae.rule, "no error", "error: "+scrub(ae.err.Error())
	default:
		f.Code = c.ID + codeThrew
		f.Rule, f.Expected, f.Actual = "the case must complete", "no error", "error: "+scrub(err.Error())
	}
	if strings.HasPrefix(f.Actual, "error: panic: ") {
		f.Actual = strings.TrimPrefix(f.Actual, "error: ")
	}
	return CaseResult{ID: c.ID, FailureCode: f.Code, Failure: f}
}
