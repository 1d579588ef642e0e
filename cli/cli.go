package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// Exit statuses.
const (
	exitPass   = 0
	exitFail   = 1
	exitBroken = 2
)

// Main runs the conform command for factory with the process's arguments
// and exits with its status. Interrupting the process cancels the run.
func Main(factory conformance.Factory) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := Run(ctx, os.Args[1:], factory, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// repeated is a flag that may be given several times.
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

type flags struct {
	exec, name, report, junit string
	timeout                   time.Duration
	seed                      uint64
	histories                 int
	extended                  bool
	checks, require, leaveOut repeated
}

// Run is Main without the process: it parses args (the conform command's
// flags, and an adapter command after --exec or --), runs the checks
// against the adapter process or, without a command, against factory, writes
// the table to stdout and returns the exit status: 0 when every check passed
// or was skipped, 1 when one failed, 2 when the run could not happen.
func Run(ctx context.Context, args []string, factory conformance.Factory, stdout, stderr io.Writer) int {
	var f flags
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.exec, "exec", "", "adapter `command` to run (quoted as for a shell), speaking runtime-adapter-bridge-v1; default: the built-in factory, in process")
	fs.StringVar(&f.name, "name", "", "factory `name` for reports (default: the name the adapter gives)")
	fs.DurationVar(&f.timeout, "timeout", conformance.DefaultCallTimeout, "bound on every adapter call (a completion includes its transport call); a call that does not return in time fails its check")
	fs.StringVar(&f.report, "report", "", "write the run's report ("+conformance.RunReportVersion+" JSON) to `file`")
	fs.StringVar(&f.junit, "junit", "", "write JUnit XML results to `file`")
	fs.BoolVar(&f.extended, "extended", true, "run the extended and capability-gated checks as well as the contract cases")
	fs.IntVar(&f.histories, "histories", conformance.DefaultHistories, "generated canonical histories the projection check hands the adapter (0 skips it)")
	fs.Uint64Var(&f.seed, "seed", 0, "draw the random probes of the privacy checks from this `seed`, to reproduce a failure (0: a fresh one)")
	fs.Var(&f.checks, "check", "run only the check with this `id` (repeatable, or comma-separated)")
	fs.Var(&f.require, "require", "make the checks of this `capability` fail rather than skip when the adapter does not declare it (repeatable)")
	fs.Var(&f.leaveOut, "leave-out", "draw no generated history of this shape `family` (repeatable): "+familyNames())
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: conform [flags] [--exec \"CMD ARGS\" | -- CMD ARGS...]\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nchecks:\n")
		for _, c := range conformance.Checks() {
			fmt.Fprintf(stderr, "  %-24s %s\n", c.ID, c.Summary)
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitBroken
	}
	target, targetName, err := pickFactory(f, fs.Args(), factory, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "conform:", err)
		return exitBroken
	}
	for _, id := range f.require {
		if !contract.IsRegisteredCapability(id) {
			fmt.Fprintf(stderr, "conform: --require %q: not a capability of the registry %q\n", id, contract.CapabilityIDs())
			return exitBroken
		}
	}
	opts := []conformance.Option{conformance.WithCallTimeout(f.timeout), conformance.WithHistories(f.histories),
		conformance.WithRequiredCapabilities(f.require...), conformance.WithSeed(f.seed)}
	if len(f.leaveOut) > 0 {
		fams := make([]gen.Family, len(f.leaveOut))
		for i, name := range f.leaveOut {
			if fams[i], err = gen.ParseFamily(name); err != nil {
				fmt.Fprintln(stderr, "conform: --leave-out:", err)
				return exitBroken
			}
		}
		opts = append(opts, conformance.WithoutFamilies(fams...))
	}
	only := []string(f.checks)
	if !f.extended && len(only) == 0 {
		for _, c := range conformance.Checks() {
			if c.Kind == conformance.KindContract {
				only = append(only, c.ID)
			}
		}
	}
	if len(only) > 0 {
		opts = append(opts, conformance.WithChecks(only...))
	}
	rep := conformance.RunChecks(ctx, target, opts...)
	printTable(stdout, targetName, rep)
	code := exitPass
	switch {
	case rep.Instances == 0:
		fmt.Fprintf(stderr, "conform: %s: the factory created no adapter instance\n", targetName)
		code = exitBroken
	case !rep.Passed:
		code = exitFail
	}
	if len(rep.Checks) == 0 {
		return exitBroken
	}
	if f.report != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(f.report, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "conform:", err)
			return exitBroken
		}
	}
	if f.junit != "" {
		if err := os.WriteFile(f.junit, junitXML(targetName, rep), 0o644); err != nil {
			fmt.Fprintln(stderr, "conform:", err)
			return exitBroken
		}
	}
	return code
}

// familyNames lists the history families --leave-out takes.
func familyNames() string {
	var names []string
	for _, f := range gen.Families() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// pickFactory returns the factory the flags and arguments name, and how
// the table names it.
func pickFactory(f flags, rest []string, factory conformance.Factory, stderr io.Writer) (conformance.Factory, string, error) {
	words := rest
	if f.exec != "" {
		if len(rest) > 0 {
			return nil, "", errors.New("give the adapter command either with --exec or after --, not both")
		}
		var err error
		if words, err = splitCommand(f.exec); err != nil {
			return nil, "", fmt.Errorf("--exec: %w", err)
		}
		if len(words) == 0 {
			return nil, "", errors.New("--exec: empty command")
		}
	}
	if len(words) == 0 {
		if factory == nil {
			return nil, "", errors.New("no adapter: give an adapter command with --exec")
		}
		if f.name != "" {
			factory = conformance.NewFactory(f.name, factory.Create)
		}
		return factory, conformance.Redact(factory.Name()) + " (in process)", nil
	}
	cfg := bridge.ExecConfig{Name: f.name, Path: words[0], Args: words[1:], Stderr: stderr,
		Options: bridge.Options{CallTimeout: f.timeout}}
	return bridge.NewFactory(cfg), "process " + conformance.Redact(strings.Join(words, " ")), nil
}
