package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// optionFlag is a flag of the conform command that sets one option of
// package conformance: the one place a flag is tied to its option, so the
// two never mean different things. A flag that is not given sets nothing,
// and the option keeps its default.
type optionFlag struct {
	name, usage string
	// define defines the flag on fs and returns what turns its parsed
	// value into options.
	define func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error)
}

// optionFlags is every flag that sets an option, in the order the usage
// text lists them.
var optionFlags = []optionFlag{
	{"name", "factory `name` for reports (default: the name the adapter gives)",
		stringFlag(func(v string) (conformance.Option, error) { return conformance.WithName(v), nil })},
	{"timeout", "bound on every adapter call (a completion includes its transport call); a call that does not return in time fails its check; must be positive (default " + conformance.DefaultCallTimeout.String() + ")",
		durationFlag(conformance.WithCallTimeout)},
	{"histories", fmt.Sprintf("generated canonical histories the projection check hands the adapter; 0 skips it, a negative count is a usage error (default %d)", conformance.DefaultHistories),
		intFlag(conformance.WithHistories)},
	{"seed", "draw the random probes of the privacy checks and the sequences of the model check from this `seed`, to reproduce a failure; a failure never names 0, which is a usage error (default: a fresh one)",
		uintFlag(conformance.WithSeed)},
	{"model-steps", fmt.Sprintf("operations the model check runs, over random sequences; 0 skips it, a negative count is a usage error (default %d)", conformance.DefaultModelSteps),
		intFlag(conformance.WithModelSteps)},
	{"shard", "run shard `i/n` of the campaign --seed names (1 <= i <= n): the model check's sequences and the projection check's histories are split among the n shards, every other check runs in shard 1; merge the shards' reports with adapterkit merge-reports (default: the whole campaign)",
		stringFlag(func(v string) (conformance.Option, error) {
			i, n, err := parseShard(v)
			if err != nil {
				return nil, err
			}
			return conformance.WithShard(i, n), nil
		})},
	{"check", "run only the check with this `id` (repeatable, or comma-separated)",
		listFlag(func(ids []string) (conformance.Option, error) {
			for _, id := range ids {
				if _, ok := conformance.CheckByID(id); !ok {
					return nil, fmt.Errorf("no check has the id %q (adapterkit conform -h lists them)", conformance.Redact(id))
				}
			}
			return conformance.WithChecks(ids...), nil
		})},
	{"require", "make the checks of this `capability` fail rather than skip when the adapter does not declare it (repeatable)",
		listFlag(func(ids []string) (conformance.Option, error) {
			caps := make([]contract.CapabilityID, len(ids))
			for i, id := range ids {
				if !contract.IsRegisteredCapability(id) {
					return nil, fmt.Errorf("%q is not a capability of the registry %q", conformance.Redact(id), contract.CapabilityIDs())
				}
				caps[i] = contract.CapabilityID(id)
			}
			return conformance.WithRequiredCapabilities(caps...), nil
		})},
	{"leave-out", "draw no generated history of this shape `family` (repeatable): " + familyNames(),
		listFlag(func(names []string) (conformance.Option, error) {
			fams, err := parseFamilies(names)
			if err != nil {
				return nil, err
			}
			return conformance.WithoutFamilies(fams...), nil
		})},
	{"strict-privacy", "demand the Go kit's member-name rule of privacy enforcement (SPEC §8, Go kit only): an adapter leaving it out, as the TypeScript kit's engine does, fails the privacy checks instead of passing with the limit " + conformance.LimitMemberNameFloor,
		boolFlag(conformance.WithStrictPrivacy)},
	{"no-shrink", "leave a failing model sequence and the first failing generated history unshrunk: the verdict alone, sooner (mutation testing)",
		boolFlag(conformance.WithoutShrinking)},
	{"require-families", "fail when this history `family` is a limit of the run, refused or declared (repeatable, or comma-separated)",
		listFlag(func(names []string) (conformance.Option, error) {
			fams, err := parseFamilies(names)
			if err != nil {
				return nil, err
			}
			return conformance.WithRequiredFamilies(fams...), nil
		})},
}

// parseFamilies parses history family names.
func parseFamilies(names []string) ([]gen.Family, error) {
	fams := make([]gen.Family, len(names))
	for i, name := range names {
		f, err := gen.ParseFamily(name)
		if err != nil {
			return nil, err
		}
		fams[i] = f
	}
	return fams, nil
}

// defineOptionFlags defines every option flag on fs and returns what
// collects their options once fs is parsed; an error names the flag.
func defineOptionFlags(fs *flag.FlagSet) func() ([]conformance.Option, error) {
	type bound struct {
		name    string
		options func() ([]conformance.Option, error)
	}
	all := make([]bound, len(optionFlags))
	for i, f := range optionFlags {
		all[i] = bound{f.name, f.define(fs, f.name, f.usage)}
	}
	return func() ([]conformance.Option, error) {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		var opts []conformance.Option
		for _, b := range all {
			if !set[b.name] {
				continue
			}
			o, err := b.options()
			if err != nil {
				return nil, fmt.Errorf("--%s: %w", b.name, err)
			}
			opts = append(opts, o...)
		}
		return opts, nil
	}
}

func stringFlag(opt func(string) (conformance.Option, error)) func(*flag.FlagSet, string, string) func() ([]conformance.Option, error) {
	return func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error) {
		v := fs.String(name, "", usage)
		return func() ([]conformance.Option, error) { return one(opt(*v)) }
	}
}

// durationFlag is a flag of a positive duration: a bound of 0 or less
// would mean no bound in process and the bridge's default over --exec, so
// the command takes neither.
func durationFlag(opt func(time.Duration) conformance.Option) func(*flag.FlagSet, string, string) func() ([]conformance.Option, error) {
	return func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error) {
		v := fs.Duration(name, 0, usage)
		return func() ([]conformance.Option, error) {
			if *v <= 0 {
				return nil, fmt.Errorf("%s is not a bound: give a positive duration such as %s", *v, conformance.DefaultCallTimeout)
			}
			return []conformance.Option{opt(*v)}, nil
		}
	}
}

// intFlag is a flag of a count: 0 skips what it counts, and a negative
// count is an error rather than another way to say 0.
func intFlag(opt func(int) conformance.Option) func(*flag.FlagSet, string, string) func() ([]conformance.Option, error) {
	return func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error) {
		v := fs.Int(name, 0, usage)
		return func() ([]conformance.Option, error) {
			if *v < 0 {
				return nil, fmt.Errorf("%d is not a count: give 0 or more (0 skips it)", *v)
			}
			return []conformance.Option{opt(*v)}, nil
		}
	}
}

// uintFlag is a flag of a seed: 0 means "draw a fresh one" to the option,
// which is not what asking for seed 0 means, and no failure names it.
func uintFlag(opt func(uint64) conformance.Option) func(*flag.FlagSet, string, string) func() ([]conformance.Option, error) {
	return func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error) {
		v := fs.Uint64(name, 0, usage)
		return func() ([]conformance.Option, error) {
			if *v == 0 {
				return nil, errors.New("0 is no seed a failure names: leave the flag out to draw a fresh seed, or give the seed a failure printed")
			}
			return []conformance.Option{opt(*v)}, nil
		}
	}
}

// boolFlag defines a flag that sets opt when given true (--flag or
// --flag=true); --flag=false sets nothing.
func boolFlag(opt func() conformance.Option) func(*flag.FlagSet, string, string) func() ([]conformance.Option, error) {
	return func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error) {
		v := fs.Bool(name, false, usage)
		return func() ([]conformance.Option, error) {
			if !*v {
				return nil, nil
			}
			return []conformance.Option{opt()}, nil
		}
	}
}

func listFlag(opt func([]string) (conformance.Option, error)) func(*flag.FlagSet, string, string) func() ([]conformance.Option, error) {
	return func(fs *flag.FlagSet, name, usage string) func() ([]conformance.Option, error) {
		var v repeated
		fs.Var(&v, name, usage)
		return func() ([]conformance.Option, error) { return one(opt(v)) }
	}
}

func one(o conformance.Option, err error) ([]conformance.Option, error) {
	if err != nil {
		return nil, err
	}
	return []conformance.Option{o}, nil
}

// repeated is a flag that may be given several times, each time one value
// or several separated by commas.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*r = append(*r, s)
		}
	}
	return nil
}

// familyNames lists the history families --leave-out takes.
func familyNames() string {
	var names []string
	for _, f := range gen.Families() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// parseShard parses a shard "i/n", 1 <= i <= n.
func parseShard(v string) (i, n int, err error) {
	a, b, ok := strings.Cut(v, "/")
	i, errI := strconv.Atoi(a)
	n, errN := strconv.Atoi(b)
	if !ok || errI != nil || errN != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%q is no shard: give i/n, with 1 <= i <= n (1/4 … 4/4)", conformance.Redact(v))
	}
	return i, n, nil
}
