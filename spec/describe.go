package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// SuiteTitle prefixes the container text of every embedding of the suite.
const SuiteTitle = "runtime-adapter-v1"

// Describe registers the conformance suite for factory in the Ginkgo suite
// being built and returns true, so it can initialise a package-level
// variable. It takes the options of package conformance, which every face
// of the catalogue shares. It may be called more than once (for example
// with different factories, or with conformance.WithName to tell the same
// factory's embeddings apart).
func Describe(factory conformance.Factory, opts ...conformance.Option) bool {
	describe(newConfig(factory, opts, ""))
	return true
}

func describe(cfg *config) {
	ginkgo.Describe(SuiteTitle+" "+cfg.name, func() {
		for _, c := range conformance.Checks() {
			if c.ID == conformance.CheckProjection {
				describeProperty(cfg, c)
				continue
			}
			describeCheck(cfg, c)
		}
	})
}

// Run registers the suite for factory and runs it with ginkgo.RunSpecs, so
// a package that has no Ginkgo suite of its own can run it from one plain
// test function. Ginkgo allows one RunSpecs per test binary: call Run once,
// from one test, and use Describe instead in a package that has its own
// Ginkgo suite. Ginkgo's own flags (-ginkgo.focus, -ginkgo.label-filter,
// -ginkgo.v) work with go test as usual.
func Run(t *testing.T, factory conformance.Factory, opts ...conformance.Option) {
	t.Helper()
	describe(newConfig(factory, opts, t.Name()))
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, SuiteTitle+" conformance")
}

// labels returns the labels of a check's spec: its kind's, its own id, and
// the feature label of a capability-gated check.
func labels(c conformance.Check) ginkgo.Labels {
	switch c.Kind {
	case conformance.KindContract:
		return ginkgo.Label(LabelConformance, c.ID)
	case conformance.KindFeature:
		return ginkgo.Label(LabelExtended, c.ID, FeatureLabelPrefix+c.Capability)
	}
	return ginkgo.Label(LabelExtended, c.ID)
}

// describeCheck registers one spec running the check on fresh instances.
func describeCheck(cfg *config, c conformance.Check) {
	ginkgo.It(c.ID+": "+c.Summary, labels(c), func(ctx ginkgo.SpecContext) {
		r := c.Run(ctx, cfg.factory, cfg.runOptions()...)
		ginkgo.GinkgoWriter.Printf("%s: %s", c.ID, r.Status)
		if r.Note != "" {
			ginkgo.GinkgoWriter.Printf(" (%s)", r.Note)
		}
		ginkgo.GinkgoWriter.Println()
		if c.ID == conformance.CheckInOrder {
			reportEntry(c, r)
		}
		limitsEntry(c.ID, r.Limits)
		switch r.Status {
		case conformance.StatusSkip:
			ginkgo.Skip("skipped, not passed: " + r.SkipReason)
		case conformance.StatusFail, conformance.StatusError:
			env := ""
			if r.Seed != 0 {
				env = seedSetting(r.Seed)
			}
			failCheck(cfg, c.ID, r.Failure, cfg.withShardEnv(env))
		}
	})
}

// runOptions are the options every check of the suite runs with.
func (cfg *config) runOptions() []conformance.Option {
	return append([]conformance.Option{conformance.WithTB(ginkgo.GinkgoTB())}, cfg.checkOpts...)
}

// reportEntry attaches the in-order run's verdict to the spec's report,
// shown only when the spec fails or runs verbosely.
func reportEntry(c conformance.Check, r conformance.Result) {
	ginkgo.AddReportEntry("conformance report", fmt.Sprintf("%s: %s", c.ID, r.Status), ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// limitsEntry attaches a check's limits to the spec's report, always
// shown: they are part of the verdict ("multi-result: 12 histories,
// refused: tool message with two results").
func limitsEntry(id string, limits []conformance.Limit) {
	if len(limits) == 0 {
		return
	}
	parts := make([]string, len(limits))
	for i, l := range limits {
		parts[i] = l.String()
	}
	ginkgo.AddReportEntry("conformance limits", id+" — "+strings.Join(parts, "; "))
}

// failCheck fails the current spec with a check's failure (metadata only)
// and the commands that rerun just this spec; env is put before the
// commands (for example a rapid seed).
func failCheck(cfg *config, id string, f *conformance.Failure, env string) {
	ginkgo.GinkgoHelper()
	ginkgo.Fail(fmt.Sprintf("%s (%s)\nrule:     %s\nexpected: %s\nactual:   %s\n%s",
		id, f.Code, f.Rule, f.Expected, f.Actual, rerunHint(cfg, id, env)))
}

// rerunHint says how to run the current spec alone, with env, if any, set
// for it: a go test command, narrowed with -run to the test that runs the
// suite, and — when the package has a Ginkgo suite of its own (Describe),
// whose test files the Ginkgo CLI hands its focus to — a Ginkgo CLI
// command, each selecting exactly this spec when pasted in the module's
// root; then the label that selects this check in every embedding. Ginkgo
// matches --focus against the suite description followed by the spec's
// full text, so the pattern is anchored at the end only.
func rerunHint(cfg *config, id, env string) string {
	focus := shellQuote(regexp.QuoteMeta(ginkgo.CurrentSpecReport().FullText()) + "$")
	dir := packageDir()
	if env != "" {
		env += " "
	}
	test := cfg.testName
	if test == "" {
		test = suiteTest()
	}
	run := ""
	if test != "" {
		run = " -run " + shellQuote("^"+regexp.QuoteMeta(test)+"$")
	}
	hint := fmt.Sprintf("rerun alone:\n  %sgo test %s%s -ginkgo.focus=%s\n", env, dir, run, focus)
	if cfg.testName == "" {
		hint += fmt.Sprintf("  %sgo run github.com/onsi/ginkgo/v2/ginkgo --focus=%s %s\n", env, focus, dir)
	}
	return hint + "this check in every embedding: --label-filter=" + shellQuote(id)
}

// suiteTest returns the name of the top-level test that called
// ginkgo.RunSpecs, read from the goroutine stacks ("" when none is found):
// the suite of a Describe package runs inside it.
func suiteTest() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	lines := strings.Split(string(buf), "\n")
	for i, l := range lines {
		// A frame is a function line and a file line; the caller's frame
		// follows RunSpecs'.
		if !strings.HasPrefix(l, "github.com/onsi/ginkgo/v2.RunSpecs(") || i+2 >= len(lines) {
			continue
		}
		caller := lines[i+2]
		if j := strings.LastIndexByte(caller, '('); j >= 0 {
			caller = caller[:j]
		}
		caller = caller[strings.LastIndexByte(caller, '/')+1:]
		_, fn, _ := strings.Cut(caller, ".")
		fn, _, _ = strings.Cut(fn, ".") // a closure inside the test: the test
		if strings.HasPrefix(fn, "Test") {
			return fn
		}
	}
	return ""
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// packageDir is the running test package's directory relative to its
// module's root, as go test and ginkgo name it ("./spec").
var packageDir = sync.OnceValue(func() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
})

// seedSetting is the environment setting of a rerun command that replays
// seed: written as the failure texts write a seed (16 hex digits), so that
// the command names the very seed they name.
func seedSetting(seed uint64) string { return fmt.Sprintf("%s=%#016x", SeedEnv, seed) }
