package spec

import (
	"os"
	"strconv"
	"time"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// Labels the suite puts on its specs. Every spec also carries its check's
// id (conformance.Check.ID) as a label of its own.
const (
	// LabelConformance marks the seven contract cases and the in-order run.
	LabelConformance = "conformance"
	// LabelExtended marks checks beyond the seven cases.
	LabelExtended = "extended"
	// LabelProperty marks the property-based projection spec.
	LabelProperty = "property"
	// FeatureLabelPrefix starts the label of a capability-gated check.
	FeatureLabelPrefix = "feature:"
)

// Defaults of the suite's options.
const (
	// DefaultPropertyChecks is how many histories the property spec draws
	// unless told otherwise.
	DefaultPropertyChecks = 20
	// PropertyChecksEnv names the environment variable that sets the number
	// of property checks.
	PropertyChecksEnv = "ADAPTERKIT_PROPERTY_CHECKS"
)

// Option configures Describe and Run.
type Option func(*config)

type config struct {
	factory        conformance.Factory
	name           string
	propertyChecks int
	histories      conformance.HistoryGenerator
	checkOpts      []conformance.Option
	testName       string // set by Run, for rerun hints
}

// WithHistories replaces the histories the property spec draws
// (gen.History by default), for an adapter whose runtime can only hold
// some histories; every history drawn must still be valid.
func WithHistories(g conformance.HistoryGenerator) Option {
	return func(c *config) { c.histories = g }
}

// WithName sets the name of the suite's container (the factory's name by
// default). Use it to tell apart several embeddings of the same factory.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithPropertyChecks sets how many histories the property spec draws. An
// explicit -rapid.checks flag or RAPID_CHECKS variable still wins.
func WithPropertyChecks(n int) Option { return func(c *config) { c.propertyChecks = n } }

// WithDiagnosticsLimit sets the most diagnostics the bounded-diagnostics
// check accepts (conformance.DefaultDiagnosticsLimit by default).
func WithDiagnosticsLimit(n int) Option {
	return func(c *config) { c.checkOpts = append(c.checkOpts, conformance.WithDiagnosticsLimit(n)) }
}

// WithCallTimeout bounds every adapter call of every spec
// (conformance.DefaultCallTimeout by default): a call that does not return
// in time fails its spec, naming the method and the bound.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) { c.checkOpts = append(c.checkOpts, conformance.WithCallTimeout(d)) }
}

// WithRequiredCapabilities makes the capability-gated checks of the given
// capabilities fail, instead of being skipped, when the adapter does not
// declare them supported.
func WithRequiredCapabilities(ids ...contract.CapabilityID) Option {
	return func(c *config) { c.checkOpts = append(c.checkOpts, conformance.WithRequiredCapabilities(ids...)) }
}

// WithoutFamilies makes the property spec (and the projection check) draw
// no history holding one of the given families of shapes — for a runtime
// that cannot represent them. It panics on a value that is not one of
// gen.Families.
func WithoutFamilies(fams ...gen.Family) Option {
	return func(c *config) {
		leave := append([]gen.Family(nil), fams...)
		c.histories = func(runtimeID, sessionID string) *rapid.Generator[[]contract.Message] {
			return gen.HistoryWithout(runtimeID, sessionID, leave...)
		}
		c.checkOpts = append(c.checkOpts, conformance.WithoutFamilies(fams...))
	}
}

// WithSeed makes the checks that draw random probes draw them from seed,
// to reproduce a failure (each such failure names its seed).
func WithSeed(seed uint64) Option {
	return func(c *config) { c.checkOpts = append(c.checkOpts, conformance.WithSeed(seed)) }
}

func newConfig(factory conformance.Factory, opts []Option) *config {
	c := &config{factory: factory, name: factory.Name(), propertyChecks: DefaultPropertyChecks, histories: gen.History}
	if n, err := strconv.Atoi(os.Getenv(PropertyChecksEnv)); err == nil && n > 0 {
		c.propertyChecks = n
	}
	for _, o := range opts {
		o(c)
	}
	c.name = conformance.Redact(c.name)
	if c.propertyChecks < 1 {
		c.propertyChecks = 1
	}
	return c
}
