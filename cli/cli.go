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
	"github.com/ds4context/adapterkit/contract"
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
	fs.StringVar(&f.junit, "junit", "", "write JUnit XML results to `file` (another file than --report's)")
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
	parseErr := fs.Parse(args)
	if errors.Is(parseErr, flag.ErrHelp) {
		return exitPass
	}
	// Two result files that are one file would leave whichever is written
	// last: the report is written, the JUnit XML not.
	if err := distinctFiles(f.report, f.junit); err != nil {
		fmt.Fprintln(stderr, "conform:", err)
		f.junit = ""
		if parseErr == nil {
			_ = writeResults(f, "", unfinished("the run could not happen: "+err.Error()))
			return exitBroken
		}
	}
	if parseErr != nil {
		// The result files named before the bad flag must not keep an
		// earlier pass either.
		_ = writeResults(f, "", unfinished("the run could not happen: "+parseErr.Error()))
		return exitBroken
	}
	// Before anything runs, the result files say that the run has not
	// finished: a run that never gets to write them (an in-process factory
	// that exits the process) must not leave an earlier pass behind.
	if err := writeResults(f, "", unfinished(notFinished)); err != nil {
		fmt.Fprintln(stderr, "conform:", err)
		return exitBroken
	}
	// broken ends a run that could not happen, saying why on stderr and in
	// the result files.
	broken := func(err error) int {
		fmt.Fprintln(stderr, "conform:", err)
		_ = writeResults(f, "", unfinished("the run could not happen: "+err.Error()))
		return exitBroken
	}
	opts, err := options()
	if err != nil {
		return broken(err)
	}
	settings := conformance.Resolve(opts...)
	if settings.Shards > 0 && settings.Seed == 0 {
		return broken(errors.New("--shard needs --seed: every shard of a campaign draws from the campaign's seed, which the shards share"))
	}
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
		return broken(err)
	}
	rep := conformance.RunChecks(ctx, target, opts...)
	code := exitPass
	// A run that says nothing about the adapter is not a pass, and the
	// report says so as the exit status does.
	var nothing string
	switch {
	case len(rep.Checks) == 0:
		nothing = "no check ran"
	case rep.Instances == 0 && rep.Passed:
		nothing = "no check that ran created an adapter instance, so the run says nothing about the adapter"
	case rep.Instances == 0:
		nothing = "the factory created no adapter instance"
	case !rep.Passed:
		code = exitFail
	}
	if nothing != "" {
		fmt.Fprintf(stderr, "conform: %s: %s\n", targetName, nothing)
		code = exitBroken
		rep.Passed = false
		rep.Problems = append(rep.Problems, nothing)
	}
	addReruns(&rep, args)
	printTable(stdout, targetName, rep)
	if err := writeResults(f, targetName, rep); err != nil {
		fmt.Fprintln(stderr, "conform:", err)
		if rep.Passed {
			rep.Passed = false
			rep.Problems = append(rep.Problems, "a result file could not be written: "+err.Error())
			_ = writeResults(f, targetName, rep)
		}
		return exitBroken
	}
	return code
}

// notFinished is the problem a result file holds while its run goes on.
const notFinished = "the run has not finished: conform replaces this file with its results when the run ends; " +
	"a run whose process ended first (an in-process factory that exits) leaves it so"

// unfinished is the report of a run that did not get to its results,
// with problem saying why: it never passed.
func unfinished(problem string) conformance.RunReport {
	return conformance.RunReport{Version: conformance.RunReportVersion, ContractVersion: contract.ContractVersion,
		Checks: []conformance.Result{}, Problems: []string{problem}}
}

// writeResults writes rep to the report and JUnit files the flags name,
// each replaced as a whole, and returns what could not be written.
func writeResults(f flags, target string, rep conformance.RunReport) error {
	var errs []error
	if f.report != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(f.report, append(b, '\n'), 0o644)
		}
		errs = append(errs, err)
	}
	if f.junit != "" {
		errs = append(errs, os.WriteFile(f.junit, junitXML(target, rep), 0o644))
	}
	return errors.Join(errs...)
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
