package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// env is what a check's function runs in: the factory, the options, and
// the sessions it started, which the runner closes when the check is done
// (also when it failed or panicked).
type env struct {
	factory  Factory
	opts     *options
	sessions []*Session
	note     string
	limits   limitSet // the limits the check found
	report   *Report  // set by the in-order check
	created  int      // instances the factory created
	drawn    uint64   // the seed the check drew its random input from (see seed)
	covered  map[string]int
}

// cover counts n more of what the check covered (Result.Covered).
func (e *env) cover(key string, n int) {
	if e.covered == nil {
		e.covered = map[string]int{}
	}
	e.covered[key] += n
}

// start creates a fresh instance holding the conformance fixture.
func (e *env) start(ctx context.Context) (*Session, error) {
	return e.track(start(ctx, e.factory, Setup{Fixture: NewFixture()}, e.opts))
}

// startWith creates a fresh instance holding a generated history: the
// factory may refuse it as unrepresentable (see generated).
func (e *env) startWith(ctx context.Context, fixture Fixture) (*Session, error) {
	s, err := start(ctx, e.factory, Setup{Fixture: fixture}, e.opts)
	if _, ok := refusalOf(err); ok {
		return nil, err
	}
	return e.track(s, err)
}

// startKV creates a fresh instance whose factory is handed port.
func (e *env) startKV(ctx context.Context, port localkv.RuntimePort) (*Session, error) {
	return e.track(startKV(ctx, e.factory, port, e.opts))
}

// track records a session the check started. A factory error is the
// check's error; refusing the conformance fixture is a broken rule.
func (e *env) track(s *Session, err error) (*Session, error) {
	if r, ok := refusalOf(err); ok {
		return nil, broken(ruleRefusalFixture, "an instance holding the conformance fixture", r.describe())
	}
	if err != nil {
		return nil, failed("the factory must create an instance from the fixture", err)
	}
	s.limits = &e.limits
	e.sessions = append(e.sessions, s)
	e.created++
	return s, nil
}

// forget stops tracking s: the check closes it itself.
func (e *env) forget(s *Session) {
	e.sessions = slices.DeleteFunc(e.sessions, func(x *Session) bool { return x == s })
}

// closeAll closes every session the check started, newest first.
func (e *env) closeAll(ctx context.Context) error {
	var errs []error
	for i := len(e.sessions) - 1; i >= 0; i-- {
		errs = append(errs, e.sessions[i].Close(ctx))
	}
	e.sessions = nil
	return errors.Join(errs...)
}

// Run runs the check on fresh instances created by factory and returns its
// result. Every instance the check creates is shut down and cleaned up
// before Run returns; a failure to do so fails the check. Every adapter
// call is bounded (see WithCallTimeout).
func (c Check) Run(ctx context.Context, factory Factory, opts ...Option) Result {
	return c.runIn(ctx, &env{factory: factory, opts: newOptions(opts)})
}

func (c Check) runIn(ctx context.Context, e *env) Result {
	t0 := time.Now()
	if e.opts.sharded() && e.opts.Shard != 1 && !c.split {
		// A check that splits nothing runs once per campaign.
		return Result{ID: c.ID, Kind: c.Kind, Capability: c.Capability, Status: StatusSkip,
			SkipReason: fmt.Sprintf("%s of the campaign: this check draws no input the shards split, and shard 1 runs it", e.opts.shardText())}
	}
	short, hang := e.opts.hangs.hung()
	if short > 0 && (e.opts.CallTimeout <= 0 || short < e.opts.CallTimeout) {
		o := *e.opts
		o.CallTimeout = short
		e.opts = &o
	}
	err := guard(func() error { return c.run(ctx, e) })
	passedFirst := false
	if closeErr := e.closeAll(ctx); closeErr != nil && err == nil {
		passedFirst = true
		var to *callTimeout
		if errors.As(closeErr, &to) {
			err = to
		} else {
			err = failed("the instance must shut down and clean up without error", closeErr)
		}
	}
	limits := e.limits.list()
	if err == nil {
		err = requiredLimit(limits, e.opts.RequiredFamilies)
	}
	to := (*callTimeout)(nil)
	if errors.As(err, &to) {
		e.opts.hangs.saw(c.ID, to)
	}
	status, f, reason := result(c.ID, err)
	if f != nil && hang != "" {
		f.Actual += "; " + hang
	}
	r := Result{ID: c.ID, Kind: c.Kind, Capability: c.Capability, Status: status, Failure: f, SkipReason: reason}
	if status == StatusSkip && slices.Contains(e.opts.RequiredCapabilities, c.Capability) {
		r.Status, r.SkipReason = StatusFail, ""
		r.Failure = &Failure{Check: c.ID, Code: c.ID + codeAssertionFailed,
			Rule:     "a required capability is declared supported, so its checks run",
			Expected: fmt.Sprintf("capability %q declared supported (it is required)", c.Capability),
			Actual:   "skipped: " + reason}
	}
	// A failing check's note still says what it measured.
	r.Note = e.note
	r.Limits = limits
	if passedFirst && r.Failure != nil {
		// What the check saw is part of the verdict too.
		r.Failure.Actual = "the check itself passed; closing its instances: " + r.Failure.Actual
	}
	r.Seed = e.drawn
	r.Covered = e.covered
	r.Duration = time.Since(t0)
	return r
}

// RunReportVersion names the format of RunReport.
const RunReportVersion = "adapterkit-conformance-run-v1"

// RunReport is the outcome of RunChecks: every check's result, and the
// seven-case runtime-adapter-conformance-v1 report of the in-order check,
// unchanged. Passed is true when no check failed or errored and the run had
// no problem. It holds metadata only.
type RunReport struct {
	Version         string   `json:"version"`
	ContractVersion string   `json:"contractVersion"`
	FactoryName     string   `json:"factoryName"`
	Passed          bool     `json:"passed"`
	Checks          []Result `json:"checks"`
	// Problems lists what went wrong outside any check (an unknown check
	// id asked for).
	Problems []string `json:"problems,omitempty"`
	// Conformance is the in-order check's report; nil when that check did
	// not run or Run would have returned an error instead of a report.
	Conformance *Report `json:"conformance"`
	// Instances counts the adapter instances the factory created. A run
	// in which it created none says nothing about the adapter.
	Instances int `json:"instances"`
	// LeftOut lists the families of history shapes the projection check
	// did not draw (WithoutFamilies).
	LeftOut []gen.Family `json:"leftOut,omitempty"`
	// KitVersion is the version of the kit that ran the checks.
	KitVersion string `json:"kitVersion"`
	// Campaign says which part of a campaign a sharded run was
	// (WithShard); nil for a run that is not sharded.
	Campaign *Campaign `json:"campaign,omitempty"`
	// Limits lists the limits of the run, part of its verdict: the
	// families the runtime refused or declared, and the holding
	// differences of the histories it holds (one entry per name, with the
	// largest count a check reports). A run with limits passes unless a
	// limit's family is required (WithRequiredFamilies).
	Limits []Limit `json:"limits,omitempty"`
	// Duration is how long the run took.
	Duration time.Duration `json:"-"`
}

// Counts returns how many checks passed, failed (or errored) and were
// skipped.
func (r RunReport) Counts() (passed, failed, skipped int) {
	for _, c := range r.Checks {
		switch c.Status {
		case StatusPass:
			passed++
		case StatusSkip:
			skipped++
		default:
			failed++
		}
	}
	return passed, failed, skipped
}

// kitVersion is the version of the kit: the release the reference
// adapter's identity names (reference.Version).
const kitVersion = "0.2.0"

// Campaign is what a sharded run (WithShard) says of its campaign: the
// seed every shard shares, which shard it was, and the settings that make
// the campaign — every shard of one campaign has the same. What each check
// covered is in its result (Result.Covered).
type Campaign struct {
	Seed   uint64 `json:"seed"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	// Checks are the ids of the checks the campaign runs, in catalogue
	// order (a shard other than 1 runs only those that split their input).
	Checks               []string                `json:"checks"`
	Histories            int                     `json:"histories"`
	ModelSteps           int                     `json:"modelSteps"`
	DiagnosticsLimit     int                     `json:"diagnosticsLimit"`
	RequiredCapabilities []contract.CapabilityID `json:"requiredCapabilities,omitempty"`
	RequiredFamilies     []gen.Family            `json:"requiredFamilies,omitempty"`
}

// RunChecks runs every check of the catalogue (or those WithChecks names),
// in catalogue order, each on fresh instances created by factory, and
// returns the report. A check that fails does not stop the run.
func RunChecks(ctx context.Context, factory Factory, opts ...Option) RunReport {
	t0 := time.Now()
	// The checks of the run share what it learns of a hung adapter.
	o := newOptions(append([]Option{withHangWatch(&hangWatch{})}, opts...))
	rep := RunReport{Version: RunReportVersion, ContractVersion: contract.ContractVersion, KitVersion: kitVersion, LeftOut: o.LeftOut}
	checks := Checks()
	if len(o.Checks) > 0 {
		for _, id := range o.Checks {
			if _, ok := CheckByID(id); !ok {
				rep.Problems = append(rep.Problems, fmt.Sprintf("no check has the id %q", scrub(id)))
			}
		}
		checks = slices.DeleteFunc(checks, func(c Check) bool { return !slices.Contains(o.Checks, c.ID) })
	}
	if o.sharded() {
		rep.Campaign = &Campaign{Seed: o.Seed, Shard: o.Shard, Shards: o.Shards, Histories: o.Histories, ModelSteps: o.ModelSteps,
			DiagnosticsLimit: o.DiagnosticsLimit, RequiredCapabilities: o.RequiredCapabilities, RequiredFamilies: o.RequiredFamilies}
		for _, c := range checks {
			rep.Campaign.Checks = append(rep.Campaign.Checks, c.ID)
		}
		if o.Seed == 0 {
			// Without the campaign's seed, shards would draw different
			// campaigns.
			rep.Problems = append(rep.Problems, o.shardText()+" names no campaign: every shard needs the campaign's seed (WithSeed, --seed)")
			checks = nil
		}
		if o.Shard != 1 {
			checks = slices.DeleteFunc(checks, func(c Check) bool { return !c.split })
		}
	}
	for _, c := range checks {
		e := &env{factory: factory, opts: o}
		r := c.runIn(ctx, e)
		rep.Checks = append(rep.Checks, r)
		rep.Limits = mergeLimits(rep.Limits, r.Limits)
		rep.Instances += e.created
		if e.report != nil {
			rep.Conformance = e.report
		}
	}
	// A factory may learn its name from the instances it creates (an
	// adapter process names itself in its hello), so ask again.
	rep.FactoryName = scrub(o.nameOf(factory))
	_, failedN, _ := rep.Counts()
	rep.Passed = failedN == 0 && len(rep.Problems) == 0 && len(rep.Checks) > 0
	rep.Duration = time.Since(t0)
	return rep
}
