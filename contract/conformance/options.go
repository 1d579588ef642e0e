package conformance

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// Defaults of the options.
const (
	// DefaultHistories is how many generated histories the projection check
	// hands the factory.
	DefaultHistories = 20
	// DefaultDiagnosticsLimit is the most diagnostics the
	// bounded-diagnostics check accepts after many failures.
	DefaultDiagnosticsLimit = 1000
)

// HistoryGenerator returns a generator of valid canonical histories whose
// messages belong to runtimeID and sessionID. gen.History is the default.
type HistoryGenerator func(runtimeID, sessionID string) *rapid.Generator[[]contract.Message]

// Option configures how checks run: Run, Verify, Start, Check.Run and
// RunChecks take them.
type Option func(*options)

type options struct {
	callTimeout      time.Duration
	histories        int
	generator        HistoryGenerator
	diagnosticsLimit int
	required         []contract.CapabilityID
	only             []string
	tb               testing.TB
	leftOut          []gen.Family
	seed             uint64 // 0: a fresh random seed per check
}

func newOptions(opts []Option) *options {
	o := &options{callTimeout: DefaultCallTimeout, histories: DefaultHistories,
		generator: gen.History, diagnosticsLimit: DefaultDiagnosticsLimit}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithCallTimeout bounds every adapter call a check makes — factory Create,
// every adapter method, Shutdown, cleanup — and hands the call a context
// that expires with the bound. A call that does not return in time fails
// its check ("Shutdown did not return within 10s") and the run goes on. 0
// or less means no bound.
func WithCallTimeout(d time.Duration) Option { return func(o *options) { o.callTimeout = d } }

// WithHistories sets how many generated histories the projection check
// hands the factory (DefaultHistories by default). 0 or less skips the
// check, saying so.
func WithHistories(n int) Option { return func(o *options) { o.histories = n } }

// WithHistoryGenerator replaces the generator the projection check draws
// histories from (gen.History by default), for a runtime that can hold
// only some histories; every history drawn must still be valid.
func WithHistoryGenerator(g HistoryGenerator) Option { return func(o *options) { o.generator = g } }

// WithoutFamilies makes the projection check draw its histories from
// gen.HistoryWithout, leaving out the given families of shapes, for a
// runtime that cannot represent them; the run report lists them. It panics
// on a value that is not one of gen.Families (use gen.ParseFamily on
// user input).
func WithoutFamilies(fams ...gen.Family) Option {
	return func(o *options) {
		o.leftOut = append(o.leftOut, fams...)
		leave := slices.Clone(o.leftOut)
		o.generator = func(runtimeID, sessionID string) *rapid.Generator[[]contract.Message] {
			return gen.HistoryWithout(runtimeID, sessionID, leave...)
		}
	}
}

// WithSeed makes the checks that draw random probes (privacy-probes,
// privacy-engine) draw them from seed instead of a fresh random one, to
// reproduce a failure: every such failure names its seed.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithDiagnosticsLimit sets the most diagnostics the bounded-diagnostics
// check accepts (DefaultDiagnosticsLimit by default).
func WithDiagnosticsLimit(n int) Option { return func(o *options) { o.diagnosticsLimit = n } }

// WithRequiredCapabilities makes the checks of the given capabilities
// required: when the adapter does not declare one of them as supported,
// its checks fail instead of being skipped.
func WithRequiredCapabilities(ids ...contract.CapabilityID) Option {
	return func(o *options) { o.required = append(o.required, ids...) }
}

// WithChecks makes RunChecks run only the checks with the given ids (in
// catalogue order). Unknown ids are reported as errors of the run.
func WithChecks(ids ...string) Option { return func(o *options) { o.only = append(o.only, ids...) } }

// WithTB hands the running test to every factory call as Setup.TB, so
// that a factory can use its TempDir, Cleanup and Log. Package spec sets it
// when the suite runs under a test.
func WithTB(tb testing.TB) Option { return func(o *options) { o.tb = tb } }
