package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// SuiteTitle prefixes the container text of every embedding of the suite.
const SuiteTitle = "runtime-adapter-v1"

// Describe registers the conformance suite for factory in the Ginkgo suite
// being built and returns true, so it can initialise a package-level
// variable. It may be called more than once (for example with different
// factories, or with WithName to tell the same factory's embeddings apart).
func Describe(factory conformance.Factory, opts ...Option) bool {
	cfg := newConfig(factory, opts)
	ginkgo.Describe(SuiteTitle+" "+cfg.name, func() {
		describeCases(cfg)
		describeExtended(cfg)
		describeLocalKV(cfg)
		describeProperty(cfg)
	})
	return true
}

// Run registers the suite for factory and runs it with ginkgo.RunSpecs, so
// a package that has no Ginkgo suite of its own can run it from one plain
// test function. Ginkgo allows one RunSpecs per test binary: call Run once,
// from one test, and use Describe instead in a package that has its own
// Ginkgo suite. Ginkgo's own flags (-ginkgo.focus, -ginkgo.label-filter,
// -ginkgo.v) work with go test as usual.
func Run(t *testing.T, factory conformance.Factory, opts ...Option) {
	t.Helper()
	Describe(factory, append(opts, func(c *config) { c.testName = t.Name() })...)
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, SuiteTitle+" conformance")
}

// start creates a fresh instance for the current spec and registers its
// release (final shutdown and cleanup) with DeferCleanup, which runs even
// when the spec fails.
func start(ctx context.Context, cfg *config, fixture conformance.Fixture) *conformance.Session {
	ginkgo.GinkgoHelper()
	s, err := conformance.StartWith(ctx, cfg.factory, fixture)
	if err != nil {
		fail(cfg, "the factory must create an instance from the conformance fixture", "an instance", "error: "+err.Error())
	}
	ginkgo.DeferCleanup(func(ctx context.Context) {
		if err := s.Close(ctx); err != nil {
			fail(cfg, "the instance must shut down and clean up without error", "no error", "error: "+err.Error())
		}
	})
	return s
}

// fail fails the current spec with a rule, what was expected and what came
// back (all already metadata only), and how to rerun the spec alone.
func fail(cfg *config, rule, expected, actual string) {
	ginkgo.GinkgoHelper()
	ginkgo.Fail(fmt.Sprintf("rule:     %s\nexpected: %s\nactual:   %s\n%s", rule, expected, actual, rerunHint(cfg, "")))
}

// failCase fails the current spec with a case failure's explanation.
func failCase(cfg *config, f *conformance.Failure) {
	ginkgo.GinkgoHelper()
	ginkgo.Fail(fmt.Sprintf("%s (%s)\nrule:     %s\nexpected: %s\nactual:   %s\n%s",
		f.Case, f.Code, f.Rule, f.Expected, f.Actual, rerunHint(cfg, "")))
}

// rerunHint says how to run the current spec alone; extra is appended to
// the command (for example a rapid seed).
func rerunHint(cfg *config, env string) string {
	focus := "^" + regexp.QuoteMeta(ginkgo.CurrentSpecReport().FullText()) + "$"
	focus = strings.ReplaceAll(focus, "'", `'\''`)
	dir := packageDir()
	if env != "" {
		env += " "
	}
	label := ownLabel(ginkgo.CurrentSpecReport().Labels())
	if cfg.testName != "" {
		return fmt.Sprintf("rerun alone: %sgo test %s -run '^%s$' -ginkgo.focus='%s'\n  (this check in every embedding: -ginkgo.label-filter='%s')",
			env, dir, regexp.QuoteMeta(cfg.testName), focus, label)
	}
	return fmt.Sprintf("rerun alone: %sgo tool ginkgo --focus='%s' %s\n  (this check in every embedding: --label-filter='%s')", env, focus, dir, label)
}

// ownLabel returns the label that names one spec of the suite: the case id
// or the check's name.
func ownLabel(labels []string) string {
	for _, l := range labels {
		if l != LabelConformance && l != LabelExtended && !strings.HasPrefix(l, FeatureLabelPrefix) {
			return l
		}
	}
	return LabelConformance
}

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

func describeCases(cfg *config) {
	for _, c := range conformance.Cases() {
		ginkgo.It(c.ID+": "+c.Summary, ginkgo.Label(LabelConformance, c.ID), func(ctx ginkgo.SpecContext) {
			s := start(ctx, cfg, conformance.NewFixture())
			if r := s.RunCase(ctx, c.ID); r.Failure != nil {
				failCase(cfg, r.Failure)
			}
		})
	}
	ginkgo.It("all seven cases in order on one instance, as conformance.Run runs them", ginkgo.Label(LabelConformance, "in-order"), func(ctx ginkgo.SpecContext) {
		s := start(ctx, cfg, conformance.NewFixture())
		results := s.RunAll(ctx)
		report := conformance.NewReport(cfg.factory.Name(), results)
		if b, err := json.Marshal(report); err == nil {
			ginkgo.AddReportEntry("conformance report", string(b))
		}
		var failures []string
		for _, r := range results {
			if r.Failure != nil {
				failures = append(failures, r.Failure.Error())
			}
		}
		if len(failures) > 0 {
			fail(cfg, "all seven cases must pass on one instance, in order", "7 passed cases",
				fmt.Sprintf("%d failed:\n%s", len(failures), strings.Join(failures, "\n")))
		}
	})
}

// capabilityDeclared reports whether the adapter's own declarations make id
// a supported capability.
func capabilityDeclared(a contract.Adapter, id contract.CapabilityID) bool {
	n := contract.NegotiateCapabilities(a.CapabilityDeclarations(), []contract.CapabilityRequest{{ID: id}})
	for _, st := range n.Statuses {
		if st.ID == id {
			return st.Supported
		}
	}
	return false
}
