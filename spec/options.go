package spec

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"pgregory.net/rapid"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/runscope"
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

// PropertyChecksEnv names the environment variable that sets how many
// histories the property spec draws when no conformance.WithHistories
// option says otherwise.
const PropertyChecksEnv = "ADAPTERKIT_PROPERTY_CHECKS"

// SeedEnv names the environment variable that sets the seed of the checks
// that draw random input (as conformance.WithSeed does) when no option
// says otherwise; the rerun command of such a check's failure sets it.
const SeedEnv = "ADAPTERKIT_SEED"

// ShardEnv names the environment variable that makes the suite run one
// shard of a campaign, "i/n" (as conformance.WithShard(i, n) does) when no
// option says otherwise: a CI matrix sets it and SeedEnv in each job
// (docs/campaigns.md). A value that names no shard panics.
const ShardEnv = "ADAPTERKIT_SHARD"

// config is one embedding of the suite: the factory, the options every
// check runs with, and what the faces of this package read from them.
type config struct {
	factory   conformance.Factory
	checkOpts []conformance.Option
	settings  conformance.Settings
	name      string
	testName  string // set by Run, for rerun hints
	shardEnv  string // ShardEnv's setting, when it chose the shard, for rerun hints
}

// newConfig resolves opts for factory. PropertyChecksEnv, when set to a
// positive number, and SeedEnv, when set to a seed (decimal or 0x hex),
// come before opts, so an explicit option wins.
func newConfig(factory conformance.Factory, opts []conformance.Option, testName string) *config {
	var all []conformance.Option
	if n, err := strconv.Atoi(os.Getenv(PropertyChecksEnv)); err == nil && n > 0 {
		all = append(all, conformance.WithHistories(n))
	}
	if seed, err := strconv.ParseUint(os.Getenv(SeedEnv), 0, 64); err == nil && seed != 0 {
		all = append(all, conformance.WithSeed(seed))
	}
	shardEnv := ""
	if v := os.Getenv(ShardEnv); v != "" {
		i, n, err := parseShard(v)
		if err != nil {
			panic("spec: " + ShardEnv + ": " + err.Error())
		}
		all = append(all, conformance.WithShard(i, n))
		shardEnv = ShardEnv + "=" + v
	}
	all = append(all, opts...)
	// The checks of one embedding share what it learns of a hung adapter.
	all = append(all, runscope.New().(conformance.Option))
	c := &config{factory: factory, checkOpts: all, settings: conformance.Resolve(all...), testName: testName}
	if s := c.settings; shardEnv != "" && shardEnv == fmt.Sprintf("%s=%d/%d", ShardEnv, s.Shard, s.Shards) {
		c.shardEnv = shardEnv
	}
	c.name = c.settings.Name
	if c.name == "" {
		c.name = factory.Name()
	}
	c.name = conformance.Redact(c.name)
	return c
}

// histories is the generator of the histories the property spec and Fuzz
// draw: gen.History without the families the options leave out.
func (c *config) histories(runtimeID, sessionID string) *rapid.Generator[[]contract.Message] {
	return gen.HistoryWithout(runtimeID, sessionID, c.settings.LeftOut...)
}

// parseShard parses a shard "i/n", 1 <= i <= n.
func parseShard(v string) (i, n int, err error) {
	a, b, ok := strings.Cut(v, "/")
	i, errI := strconv.Atoi(a)
	n, errN := strconv.Atoi(b)
	if !ok || errI != nil || errN != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%q is no shard: give i/n, with 1 <= i <= n", conformance.Redact(v))
	}
	return i, n, nil
}

// withShardEnv adds the shard's environment setting, when it came from
// ShardEnv, to env, the settings a rerun command puts before itself.
func (c *config) withShardEnv(env string) string {
	if c.shardEnv == "" || env == "" {
		return c.shardEnv + env
	}
	return c.shardEnv + " " + env
}
