package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

// Kind classifies the checks of the catalogue.
type Kind string

const (
	// KindContract marks the seven contract cases of conformance.Run (each
	// on a fresh instance) and the in-order run of all seven on one
	// instance.
	KindContract Kind = "contract"
	// KindExtended marks checks of rules the seven cases do not reach.
	KindExtended Kind = "extended"
	// KindFeature marks checks that apply only when the adapter declares
	// the check's capability as supported; otherwise they are skipped.
	KindFeature Kind = "feature"
)

// Check is one entry of the catalogue: a rule of the contract and the code
// that checks an adapter keeps it. Checks need no test framework; package
// spec gives each one a Ginkgo spec, package cli a row of its table.
type Check struct {
	// ID names the check in reports, labels and failure codes.
	ID string
	// Kind says whether the check is a contract case, an extended check or
	// a capability-gated one.
	Kind Kind
	// Capability is the capability a feature check needs ("" otherwise).
	Capability contract.CapabilityID
	// Summary says in one sentence what the check does.
	Summary string
	// Rule states the rule of the contract the check enforces, as the rule
	// table of docs/conformance.md words it.
	Rule string
	run  func(ctx context.Context, e *env) error
	// seeded marks a check that draws random input, from the run's seed
	// (env.seed, the only source of randomness a check may use).
	seeded bool
	// split marks a check whose input a campaign's shards split among
	// them (WithShard); every other check runs in shard 1 alone.
	split bool
}

// Seeded reports whether the check draws random input: it draws it from
// the run's seed (WithSeed, or a fresh one), which its Result carries, so
// that WithSeed with it replays the run.
func (c Check) Seeded() bool { return c.seeded }

// Status is the outcome of a check.
type Status string

const (
	// StatusPass: the adapter kept the rule.
	StatusPass Status = "pass"
	// StatusFail: the adapter broke the rule.
	StatusFail Status = "fail"
	// StatusSkip: the check does not apply (the adapter does not declare
	// its capability); SkipReason says why.
	StatusSkip Status = "skip"
	// StatusError: the check could not finish because an adapter method or
	// the factory failed where it must succeed, panicked, or did not return
	// within the call bound.
	StatusError Status = "error"
)

// Result is the outcome of one check. It holds metadata only.
type Result struct {
	ID         string                `json:"id"`
	Kind       Kind                  `json:"kind"`
	Capability contract.CapabilityID `json:"capability,omitempty"`
	Status     Status                `json:"status"`
	// Failure explains a fail or an error; nil otherwise.
	Failure *Failure `json:"failure,omitempty"`
	// SkipReason says why a skipped check did not apply.
	SkipReason string `json:"skipReason,omitempty"`
	// Note adds what a check measured (for example how many generated
	// histories it projected).
	Note string `json:"note,omitempty"`
	// Limits lists the limits the check found: families the factory
	// refused or declared (projection), holding differences of the
	// histories its instances hold (canonical-history, in-order,
	// projection).
	Limits []Limit `json:"limits,omitempty"`
	// Seed is, for a check that draws random input (Check.Seeded), the
	// seed it drew from: WithSeed (--seed) with it replays the run, and so
	// reproduces a failure. It is 0 for the other checks, and for a
	// seeded check that drew nothing (skipped before it drew).
	Seed uint64 `json:"seed,omitempty"`
	// Covered counts what a check that splits a campaign's input among
	// shards (model, projection) drew and ran: "sequences" and
	// "operations" of the model check; "histories" (the generated ones),
	// "long", "refused" and "isolation" histories of the projection
	// check, and in a shard "projected:<family>", how many generated
	// histories holding a family were projected faithfully. The
	// "sequences", "operations" and "histories" of a campaign's shards add
	// up to the campaign's; every shard adds the long and isolation
	// histories of its own part.
	Covered map[string]int `json:"covered,omitempty"`
	// Rerun lists the commands that rerun a failed check that drew random
	// input alone, with its seed (and its shard): set by the faces that
	// know their command line (package cli); a merged campaign keeps those
	// of every failing shard.
	Rerun []string `json:"rerun,omitempty"`
	// Duration is how long the check took.
	Duration time.Duration `json:"-"`
}

// Passed reports whether the check passed or was skipped.
func (r Result) Passed() bool { return r.Status == StatusPass || r.Status == StatusSkip }

// Failure explains why a check failed: the contract rule that broke, what
// was expected and what the adapter did. It holds metadata only — ids,
// codes, counts, statuses and adapter error text scrubbed of probes — never
// a probe or a payload.
type Failure struct {
	// Check is the check id, Code the failure code: "<id>-assertion-failed"
	// when the adapter broke the rule, "<id>-threw" when a method failed,
	// panicked or did not return.
	Check string `json:"check"`
	Code  string `json:"code"`
	// Rule states the broken rule.
	Rule string `json:"rule"`
	// Expected and Actual describe the expected and the observed behaviour.
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// Error formats the failure on one line per field.
func (f *Failure) Error() string {
	return fmt.Sprintf("conformance check %s failed (%s)\n  rule:     %s\n  expected: %s\n  actual:   %s",
		f.Check, f.Code, f.Rule, f.Expected, f.Actual)
}

// Is makes a Failure match ErrCaseFailed.
func (f *Failure) Is(target error) bool { return target == ErrCaseFailed }

// Failure code suffixes.
const (
	codeAssertionFailed = "-assertion-failed"
	codeThrew           = "-threw"
)

// brokenRule is a check that found the adapter breaking a rule. kind, when
// set, says which difference it observed in a few metadata words, so that
// a check counting failures over many inputs counts each kind once.
type brokenRule struct{ rule, expected, actual, kind string }

func (b *brokenRule) Error() string { return b.rule }

// adapterError is an adapter method failing where the contract says it
// must succeed.
type adapterError struct {
	rule string
	err  error
}

func (a *adapterError) Error() string { return a.rule }
func (a *adapterError) Unwrap() error { return a.err }

// skipped is a check that does not apply to the adapter.
type skipped struct{ reason string }

func (s *skipped) Error() string { return "skipped: " + s.reason }

// broken returns a brokenRule. Callers quote adapter values with q or qs,
// which scrub each one; the probes are redacted from actual once more.
func broken(rule, expected, actual string) error {
	return &brokenRule{rule: rule, expected: expected, actual: redactProbes(actual)}
}

// brokenKind is broken, naming the kind of difference observed.
func brokenKind(kind, rule, expected, actual string) error {
	return &brokenRule{rule: rule, expected: expected, actual: redactProbes(actual), kind: kind}
}

// failed wraps an unexpected adapter error for rule.
func failed(rule string, err error) error { return &adapterError{rule: rule, err: err} }

// skip says the check does not apply, and why.
func skip(reason string) error { return &skipped{reason: reason} }

// result classifies what a check's function returned.
func result(id string, err error) (Status, *Failure, string) {
	if err == nil {
		return StatusPass, nil, ""
	}
	var sk *skipped
	if errors.As(err, &sk) {
		return StatusSkip, nil, sk.reason
	}
	f := &Failure{Check: id}
	var br *brokenRule
	var ae *adapterError
	var to *callTimeout
	var mf *methodFailure
	switch {
	case errors.As(err, &mf):
		f.Code = id + codeThrew
		f.Rule, f.Expected, f.Actual = mf.rule(), mf.method+" answers", mf.Error()
		return StatusError, f, ""
	case errors.As(err, &br):
		f.Code = id + codeAssertionFailed
		f.Rule, f.Expected, f.Actual = br.rule, br.expected, br.actual
		return StatusFail, f, ""
	case errors.As(err, &to):
		f.Code = id + codeThrew
		f.Rule = "every adapter call returns within the bound the suite sets"
		f.Expected = fmt.Sprintf("%s returns within %s", to.method, to.bound)
		f.Actual = to.Error()
	case errors.As(err, &ae):
		f.Code = id + codeThrew
		f.Rule, f.Expected, f.Actual = ae.rule, "no error", "error: "+scrub(ae.err.Error())
	default:
		f.Code = id + codeThrew
		f.Rule, f.Expected, f.Actual = "the check must complete", "no error", "error: "+scrub(err.Error())
	}
	if strings.HasPrefix(f.Actual, "error: panic: ") {
		f.Actual = strings.TrimPrefix(f.Actual, "error: ")
	}
	return StatusError, f, ""
}

// abort is what a check's helper panics with to end the check with err
// (guard returns it).
type abort struct{ err error }

// guard runs f, turning a panic into an adapterError (or the callTimeout
// it carries).
func guard(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if to, ok := v.(*callTimeout); ok {
				err = to
				return
			}
			if mf, ok := v.(*methodFailure); ok {
				err = mf
				return
			}
			if ab, ok := v.(abort); ok {
				err = ab.err
				return
			}
			err = &adapterError{rule: "adapter methods must not panic", err: fmt.Errorf("panic: %v", v)}
		}
	}()
	return f()
}
