package conformance

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// Defaults of the options.
const (
	// DefaultHistories is how many generated histories the projection check
	// (and the property spec of package spec) hands the factory.
	DefaultHistories = 20
	// DefaultDiagnosticsLimit is the ceiling of the bounded-diagnostics
	// check: the most diagnostics an adapter may keep. SPEC says only
	// "bounded", so the ceiling sits far above any sane bound; the check
	// reports the bound it found.
	DefaultDiagnosticsLimit = 10000
)

// Option configures how checks run. Every face of the catalogue takes the
// same options: Run, Verify, Start, Check.Run and RunChecks here, Describe,
// Run and Fuzz in package spec, and the flags of package cli (each flag
// sets one option; docs/conformance.md lists them side by side).
type Option func(*options)

// Settings is what a list of options comes to: the values the checks run
// with. Resolve computes it, so that a face of the catalogue (package spec,
// package cli) reads the same values the checks read.
type Settings struct {
	// Name is the name reports and suites show for the factory; "" means
	// the factory's own Name.
	Name string
	// CallTimeout bounds every adapter call (0 or less: no bound).
	CallTimeout time.Duration
	// Histories is how many generated histories the projection check and
	// the property spec hand the factory (0 or less skips the check).
	Histories int
	// LeftOut lists the families of history shapes no generated history
	// holds.
	LeftOut []gen.Family
	// Seed is the seed of the checks that draw random probes; 0 draws a
	// fresh one per check.
	Seed uint64
	// RequiredCapabilities lists the capabilities whose checks fail rather
	// than skip when the adapter does not declare them.
	RequiredCapabilities []contract.CapabilityID
	// RequiredFamilies lists the families of history shapes that may not
	// be a limit of the run: refusing or declaring one fails the check.
	RequiredFamilies []gen.Family
	// Checks lists the ids of the checks RunChecks runs; empty means all.
	Checks []string
	// ModelSteps is how many operations the model check runs (0 or less
	// skips it).
	ModelSteps int
	// DiagnosticsLimit is the ceiling of bounded-diagnostics: the most
	// diagnostics it accepts.
	DiagnosticsLimit int
	// Shard and Shards say which part of a campaign the run is: shard
	// Shard (from 1) of Shards; both 0 for the whole campaign (WithShard).
	Shard, Shards int
	// StrictPrivacy makes the privacy checks demand the Go kit's
	// member-name rule (SPEC §8, Go kit only) instead of showing an
	// enforcement without it as the limit LimitMemberNameFloor.
	StrictPrivacy bool
	// NoShrink leaves a failing model sequence and the first failing
	// generated history as they failed, unshrunk (WithoutShrinking).
	NoShrink bool
}

type options struct {
	Settings
	tb    testing.TB
	hangs *hangWatch // what the checks of one run know of a hung adapter
}

func newOptions(opts []Option) *options {
	o := &options{Settings: Settings{CallTimeout: DefaultCallTimeout, Histories: DefaultHistories,
		DiagnosticsLimit: DefaultDiagnosticsLimit, ModelSteps: DefaultModelSteps}}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Resolve returns the settings opts come to, the defaults filled in.
func Resolve(opts ...Option) Settings {
	s := newOptions(opts).Settings
	s.LeftOut = slices.Clone(s.LeftOut)
	s.RequiredCapabilities = slices.Clone(s.RequiredCapabilities)
	s.RequiredFamilies = slices.Clone(s.RequiredFamilies)
	s.Checks = slices.Clone(s.Checks)
	return s
}

// nameOf is the name reports show for factory under these options.
func (o *options) nameOf(factory Factory) string {
	if o.Name != "" {
		return o.Name
	}
	return factory.Name()
}

// WithName sets the name reports and suites show for the factory (the
// factory's Name by default), for example to tell apart several embeddings
// of one factory in a Ginkgo suite.
func WithName(name string) Option { return func(o *options) { o.Name = name } }

// WithCallTimeout bounds every adapter call a check makes — factory Create,
// every adapter method, Shutdown, cleanup — and hands the call a context
// that expires with the bound. A call that does not return in time fails
// its check ("Shutdown did not return within 10s") and the run goes on. 0
// or less means no bound.
func WithCallTimeout(d time.Duration) Option { return func(o *options) { o.CallTimeout = d } }

// WithHistories sets how many generated histories the projection check
// (and the property spec of package spec) hands the factory
// (DefaultHistories by default). 0 or less skips the check, saying so.
func WithHistories(n int) Option { return func(o *options) { o.Histories = n } }

// WithoutFamilies makes every generated history a history without the
// given families of shapes (gen.HistoryWithout), for a runtime that cannot
// represent them; the run report lists them, and shows each as a limit. It panics on a value that is
// not one of gen.Families (use gen.ParseFamily on user input).
func WithoutFamilies(fams ...gen.Family) Option {
	for _, f := range fams {
		if _, err := gen.ParseFamily(string(f)); err != nil {
			panic("conformance.WithoutFamilies: " + err.Error())
		}
	}
	return func(o *options) {
		for _, f := range fams {
			if !slices.Contains(o.LeftOut, f) {
				o.LeftOut = append(o.LeftOut, f)
			}
		}
	}
}

// WithSeed makes the checks that draw random probes and sequences
// (privacy-probes, privacy-engine, model) draw them from seed instead of a fresh random one, to
// reproduce a failure: every such failure names its seed.
func WithSeed(seed uint64) Option { return func(o *options) { o.Seed = seed } }

// WithStrictPrivacy makes the privacy checks (privacy-probes,
// privacy-engine) demand every rule of the Go kit's privacy engine,
// including the one SPEC §8 marks "Go kit only": a member name holding an
// opening marker outside a closed pair raises the marker-structure floor.
// Without it, an adapter whose enforcement differs from the engine's only
// by leaving that rule out, as the TypeScript kit's engine does, passes
// with the limit LimitMemberNameFloor; with it, that adapter fails.
func WithStrictPrivacy() Option { return func(o *options) { o.StrictPrivacy = true } }

// WithoutShrinking leaves a failing model sequence and the first failing
// generated history of the projection check unshrunk: the failure names
// the whole sequence or history, and its replay reproduces it as before.
// For runs that want the verdict alone, such as mutation testing, where
// shrinking every killed mutant's failure costs more CPU than finding it.
func WithoutShrinking() Option { return func(o *options) { o.NoShrink = true } }

// WithDiagnosticsLimit sets the ceiling of the bounded-diagnostics check:
// the most diagnostics it accepts before it calls the list unbounded
// (DefaultDiagnosticsLimit by default).
func WithDiagnosticsLimit(n int) Option { return func(o *options) { o.DiagnosticsLimit = n } }

// WithModelSteps sets how many operations the model check runs, over as
// many drawn sequences as they fill (DefaultModelSteps by default); 0 or
// less skips the check, saying so. A failure names the seed and the steps
// that replay it (WithSeed, WithModelSteps).
func WithModelSteps(n int) Option { return func(o *options) { o.ModelSteps = n } }

// WithRequiredCapabilities makes the checks of the given capabilities
// required: when the adapter does not declare one of them as supported,
// its checks fail instead of being skipped.
func WithRequiredCapabilities(ids ...contract.CapabilityID) Option {
	return func(o *options) { o.RequiredCapabilities = append(o.RequiredCapabilities, ids...) }
}

// WithRequiredFamilies makes the given families of history shapes
// required: a runtime refusing or declaring one of them as a limit fails
// the check where the limit arose (projection), and leaving one out
// (WithoutFamilies) fails projection too. It panics on a value that is not
// one of gen.Families (use gen.ParseFamily on user input).
func WithRequiredFamilies(fams ...gen.Family) Option {
	for _, f := range fams {
		if _, err := gen.ParseFamily(string(f)); err != nil {
			panic("conformance.WithRequiredFamilies: " + err.Error())
		}
	}
	return func(o *options) {
		for _, f := range fams {
			if !slices.Contains(o.RequiredFamilies, f) {
				o.RequiredFamilies = append(o.RequiredFamilies, f)
			}
		}
	}
}

// WithChecks makes RunChecks run only the checks with the given ids (in
// catalogue order). Unknown ids are reported as errors of the run.
func WithChecks(ids ...string) Option {
	return func(o *options) { o.Checks = append(o.Checks, ids...) }
}

// WithShard makes the run shard i (from 1) of a campaign split into n
// shards: the campaign is the run the same options make without
// WithShard, and WithSeed must name its seed, which every shard shares.
// The checks that draw a campaign's input split it — model takes the
// sequences whose index is i-1 modulo n, projection the generated
// histories whose seed is i modulo n (seed n in shard n) — so that the n
// shards together run exactly the campaign's sequences and histories, each
// once; every other check runs in shard 1 alone (in the other shards
// RunChecks leaves it out and Check.Run skips it, saying so). Each shard
// judges the rules its part shows; MergeReports judges the rules of the
// whole campaign over the shards' reports (docs/campaigns.md). It panics
// unless 1 <= i <= n.
func WithShard(i, n int) Option {
	if n < 1 || i < 1 || i > n {
		panic(fmt.Sprintf("conformance.WithShard(%d, %d): want 1 <= i <= n", i, n))
	}
	return func(o *options) { o.Shard, o.Shards = i, n }
}

// sharded reports whether the run is a shard of a campaign.
func (o *options) sharded() bool { return o.Shards > 0 }

// owns reports whether the run draws the k-th input (from 0) of its
// campaign: every input when it is not sharded, and otherwise those whose
// index is Shard-1 modulo Shards.
func (o *options) owns(k int) bool { return o.Shards <= 1 || k%o.Shards == o.Shard-1 }

// shardText is "shard i/n", or "" for a run that is not sharded.
func (o *options) shardText() string {
	if !o.sharded() {
		return ""
	}
	return fmt.Sprintf("shard %d/%d", o.Shard, o.Shards)
}

// WithTB hands the running test to every factory call as Setup.TB, so
// that a factory can use its TempDir, Cleanup and Log. Package spec sets it
// when the suite runs under a test.
func WithTB(tb testing.TB) Option { return func(o *options) { o.tb = tb } }
