package spec

import (
	"os"
	"strconv"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/spec/gen"
)

// Labels the suite puts on its specs.
const (
	// LabelConformance marks the seven contract cases and the in-order run.
	LabelConformance = "conformance"
	// LabelExtended marks checks beyond the seven cases.
	LabelExtended = "extended"
	// LabelProperty marks the property-based check.
	LabelProperty = "property"
	// FeatureLabelPrefix starts the label of a capability-gated check.
	FeatureLabelPrefix = "feature:"
)

// Defaults of the suite's options.
const (
	// DefaultPropertyChecks is how many histories the property check draws
	// unless told otherwise.
	DefaultPropertyChecks = 20
	// DefaultDiagnosticsLimit is the most diagnostics an adapter may hold
	// after many failures: the contract asks for a bounded list.
	DefaultDiagnosticsLimit = 1000
	// PropertyChecksEnv names the environment variable that sets the number
	// of property checks.
	PropertyChecksEnv = "ADAPTERKIT_PROPERTY_CHECKS"
)

// Option configures Describe and Run.
type Option func(*config)

type config struct {
	factory          conformance.Factory
	name             string
	propertyChecks   int
	diagnosticsLimit int
	histories        HistoryGenerator
	testName         string // set by Run, for rerun hints
}

// HistoryGenerator returns a generator of valid canonical histories whose
// messages belong to runtimeID and sessionID.
type HistoryGenerator func(runtimeID, sessionID string) *rapid.Generator[[]contract.Message]

// WithHistories replaces the histories the property check draws (gen.History
// by default), for an adapter whose runtime can only hold some histories;
// every history drawn must still be valid.
func WithHistories(g HistoryGenerator) Option { return func(c *config) { c.histories = g } }

// WithName sets the name of the suite's container (the factory's name by
// default). Use it to tell apart several embeddings of the same factory.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithPropertyChecks sets how many histories the property check draws. An
// explicit -rapid.checks flag or RAPID_CHECKS variable still wins.
func WithPropertyChecks(n int) Option { return func(c *config) { c.propertyChecks = n } }

// WithDiagnosticsLimit sets the most diagnostics the bounded-diagnostics
// check accepts (DefaultDiagnosticsLimit by default).
func WithDiagnosticsLimit(n int) Option { return func(c *config) { c.diagnosticsLimit = n } }

func newConfig(factory conformance.Factory, opts []Option) *config {
	c := &config{factory: factory, name: factory.Name(), propertyChecks: DefaultPropertyChecks,
		diagnosticsLimit: DefaultDiagnosticsLimit, histories: gen.History}
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
