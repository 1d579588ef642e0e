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

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
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

// flags are the conform command's own flags: those that set no option of
// package conformance (optionFlags holds the others).
type flags struct {
	exec, report, junit string
	extended            bool
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
	fs.StringVar(&f.report, "report", "", "write the run's report ("+conformance.RunReportVersion+" JSON) to `file`")
	fs.StringVar(&f.junit, "junit", "", "write JUnit XML results to `file`")
	fs.BoolVar(&f.extended, "extended", true, "run the extended and capability-gated checks as well as the contract cases")
	options := defineOptionFlags(fs)
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
	opts, err := options()
	if err != nil {
		fmt.Fprintln(stderr, "conform:", err)
		return exitBroken
	}
	settings := conformance.Resolve(opts...)
	if !f.extended && len(settings.Checks) == 0 {
		var contractIDs []string
		for _, c := range conformance.Checks() {
			if c.Kind == conformance.KindContract {
				contractIDs = append(contractIDs, c.ID)
			}
		}
		opts = append(opts, conformance.WithChecks(contractIDs...))
	}
	target, targetName, err := pickFactory(f, settings, fs.Args(), factory, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "conform:", err)
		return exitBroken
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

// pickFactory returns the factory the flags and arguments name, and how
// the table names it.
func pickFactory(f flags, settings conformance.Settings, rest []string, factory conformance.Factory, stderr io.Writer) (conformance.Factory, string, error) {
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
		name := settings.Name
		if name == "" {
			name = factory.Name()
		}
		return factory, conformance.Redact(name) + " (in process)", nil
	}
	cfg := bridge.ExecConfig{Name: settings.Name, Path: words[0], Args: words[1:], Stderr: stderr,
		Options: bridge.Options{CallTimeout: settings.CallTimeout}}
	return bridge.NewFactory(cfg), "process " + conformance.Redact(strings.Join(words, " ")), nil
}
