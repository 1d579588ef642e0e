package spec

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

func describeProperty(cfg *config, c conformance.Check) {
	ginkgo.It(c.ID+": "+c.Summary, ginkgo.Label(LabelProperty, c.ID), func(ctx ginkgo.SpecContext) {
		if cfg.settings.Histories <= 0 {
			ginkgo.Skip("skipped, not passed: no generated histories were asked for")
		}
		s := cfg.settings
		if s.Shards > 0 && s.Seed == 0 {
			ginkgo.Fail(fmt.Sprintf("%s: shard %d/%d names no campaign: every shard needs the campaign's seed (conformance.WithSeed, %s)", c.ID, s.Shard, s.Shards, SeedEnv))
		}
		run, err := conformance.NewProjectionRun(ctx, cfg.factory, cfg.runOptions()...)
		var f *conformance.Failure
		if errors.As(err, &f) {
			failCheck(cfg, c.ID, f, "")
		}
		var mu sync.Mutex
		// A shard of a campaign (WithShard) draws every history rapid
		// draws from the campaign's seed, and hands the run the k-th when
		// k is its shard's, less one, modulo the shards; once a draw has
		// failed, rapid's replays and shrinking are all checked.
		drawn, failing := 0, false
		checkProperty(cfg, c.ID, func(t *rapid.T) {
			fx := conformance.NewFixture()
			msgs := rapid.Map(gen.HistoryWithout(fx.RuntimeID, fx.SessionID, run.LeftOut()...),
				func(ms []contract.Message) drawnHistory { return ms }).Draw(t, "history")
			mu.Lock()
			defer mu.Unlock()
			k := drawn
			drawn++
			if s.Shards > 1 && k%s.Shards != s.Shard-1 && !failing {
				return
			}
			projectionProperty(ctx, t, run, msgs, func() { failing = true })
		})
		ginkgo.GinkgoWriter.Println(run.Note())
		limitsEntry(c.ID, run.Limits())
		if err := run.Verdict(ctx); errors.As(err, &f) {
			failCheck(cfg, c.ID, f, cfg.withShardEnv(rerunSeed(cfg)))
		}
	})
}

// projectionProperty hands a drawn history to the run and fails the draw
// when its snapshot is not its faithful projection, or its refusal breaks
// a rule one history shows. The rules of refusals across the run are the
// verdict's, after every draw.
func projectionProperty(ctx context.Context, t *rapid.T, run *conformance.ProjectionRun, msgs []contract.Message, failing func()) {
	err := run.Check(ctx, msgs)
	var f *conformance.Failure
	if err != nil && !errors.Is(err, conformance.ErrUnrepresentable) {
		failing()
	}
	switch {
	case err == nil, errors.Is(err, conformance.ErrUnrepresentable):
	case errors.As(err, &f):
		t.Fatalf("%s\nrule:     %s\nexpected: %s\nactual:   %s", f.Code, f.Rule, f.Expected, f.Actual)
	default:
		t.Fatalf("%s", conformance.Redact(err.Error()))
	}
}

// rerunSeed is the environment that draws the same histories again, when
// rapid's seed was chosen by the run (WithSeed) or the user.
func rerunSeed(cfg *config) string {
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() != "0" {
		return "RAPID_SEED=" + f.Value.String()
	}
	return ""
}

// checkProperty is a thin wrapper around rapid.Check(GinkgoT(), prop): it
// sets the number of checks, collects rapid's report and fails the spec
// once with it, rapid's seed and a command that reruns the spec with it.
func checkProperty(cfg *config, id string, prop func(*rapid.T)) {
	ginkgo.GinkgoHelper()
	defer setChecks(cfg.settings.Histories)()
	defer setSeed(cfg.settings.Seed)()
	tb := &propertyTB{GinkgoTInterface: ginkgo.GinkgoT(), name: "adapterkit-" + nameUnsafe.ReplaceAllString(cfg.name, "-")}
	func() {
		defer func() {
			if v := recover(); v != nil && v != errStopProperty {
				panic(v)
			}
		}()
		rapid.Check(tb, prop)
	}()
	if !tb.failed {
		for _, l := range tb.lines {
			ginkgo.GinkgoWriter.Println(l)
		}
		return
	}
	report := strings.Join(tb.lines, "\n")
	// rapid replays the shrunk failure after this line: the same messages again.
	if i := strings.Index(report, "\nFailed test output:"); i >= 0 {
		report = report[:i]
	}
	env := ""
	switch {
	case tb.seed != "":
		env = "RAPID_SEED=" + tb.seed
	case tb.failfile != "":
		env = "RAPID_FAILFILE=" + strconv.Quote(tb.failfile)
	}
	ginkgo.Fail(fmt.Sprintf("%s: a generated history was not projected faithfully\n%s\n%s", id, report, rerunHint(cfg, id, cfg.withShardEnv(env))))
}

var (
	seedPattern     = regexp.MustCompile(`-rapid\.seed=(\d+)`)
	failfilePattern = regexp.MustCompile(`-rapid\.failfile="((?:[^"\\]|\\.)*)"`)
	nameUnsafe      = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// rapidReproLine is rapid's own reproduction hint, written for go test -run;
// the wrapper replaces it with a Ginkgo one.
var rapidReproLine = regexp.MustCompile(`(?m)^To reproduce, specify .*$\n?`)

var errStopProperty = &struct{ error }{}

// propertyTB gives rapid a testing.TB that records failures instead of
// failing the spec at the first message, so the spec fails once with the
// whole (shrunk) report. Draw logs are dropped: they would print generated
// history text.
type propertyTB struct {
	ginkgo.GinkgoTInterface
	mu       sync.Mutex
	name     string
	failed   bool
	seed     string
	failfile string
	lines    []string
}

func (t *propertyTB) Helper() {}

// Name names rapid's fail files: one directory per embedding of the suite.
func (t *propertyTB) Name() string { return t.name }
func (t *propertyTB) add(s string, fail bool) {
	s = strings.TrimRight(s, "\n")
	if strings.HasPrefix(s, "[rapid] draw ") {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = t.failed || fail
	if m := seedPattern.FindStringSubmatch(s); m != nil {
		t.seed = m[1]
	}
	if m := failfilePattern.FindStringSubmatch(s); m != nil {
		if f, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
			t.failfile = f
		}
	}
	if s = strings.TrimRight(rapidReproLine.ReplaceAllString(s, ""), "\n"); s != "" {
		t.lines = append(t.lines, s)
	}
}
func (t *propertyTB) Log(args ...any)                   { t.add(fmt.Sprintln(args...), false) }
func (t *propertyTB) Logf(format string, args ...any)   { t.add(fmt.Sprintf(format, args...), false) }
func (t *propertyTB) Error(args ...any)                 { t.add(fmt.Sprintln(args...), true) }
func (t *propertyTB) Errorf(format string, args ...any) { t.add(fmt.Sprintf(format, args...), true) }
func (t *propertyTB) Fatal(args ...any)                 { t.Error(args...); panic(errStopProperty) }
func (t *propertyTB) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic(errStopProperty)
}
func (t *propertyTB) Fail()        { t.mu.Lock(); t.failed = true; t.mu.Unlock() }
func (t *propertyTB) FailNow()     { t.Fail(); panic(errStopProperty) }
func (t *propertyTB) Failed() bool { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }

// userChecks reports whether the user chose rapid's number of checks
// explicitly (-rapid.checks or RAPID_CHECKS); then the suite leaves it alone.
var userChecks = sync.OnceValue(func() bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	_, env := os.LookupEnv("RAPID_CHECKS")
	return set || env
})

// setChecks sets rapid's number of checks to n unless the user chose it,
// and returns a function restoring the previous value.
func setChecks(n int) func() {
	f := flag.Lookup("rapid.checks")
	if f == nil || userChecks() {
		return func() {}
	}
	old := f.Value.String()
	_ = f.Value.Set(strconv.Itoa(n))
	return func() { _ = f.Value.Set(old) }
}

// userSeed reports whether the user chose rapid's seed explicitly
// (-rapid.seed or RAPID_SEED); then the suite leaves it alone.
var userSeed = sync.OnceValue(func() bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.seed" })
	_, env := os.LookupEnv("RAPID_SEED")
	return set || env
})

// setSeed sets rapid's seed to seed (the run's, WithSeed) unless it is 0
// or the user chose one, so that a seeded run draws the same histories
// every time, and returns a function restoring the previous value.
func setSeed(seed uint64) func() {
	f := flag.Lookup("rapid.seed")
	if f == nil || seed == 0 || userSeed() {
		return func() {}
	}
	old := f.Value.String()
	_ = f.Value.Set(strconv.FormatUint(seed, 10))
	return func() { _ = f.Value.Set(old) }
}
