package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec/gen"
)

// defaultHistories is how many generated histories the projection check
// hands the adapter.
const defaultHistories = 20

// Check kinds: a contract case of conformance.Run, or a check beyond them.
const (
	kindCase     = "conformance"
	kindExtended = "extended"
)

// checkResult is one row of the results: a contract case or an extended
// check, with its failure explained (metadata only).
type checkResult struct {
	ID       string
	Kind     string
	Passed   bool
	Skipped  bool
	Code     string
	Note     string
	Failure  *conformance.Failure
	Duration time.Duration
}

// outcome is everything a conform run produced.
type outcome struct {
	Target   string
	Factory  string
	Report   *conformance.Report
	Checks   []checkResult
	Problems []string // errors outside any check: final shutdown, cleanup
	Duration time.Duration
}

func (o *outcome) passed() bool {
	if len(o.Problems) > 0 || o.Report == nil || !o.Report.Passed {
		return false
	}
	for _, c := range o.Checks {
		if !c.Passed {
			return false
		}
	}
	return true
}

type conformFlags struct {
	exec, name, report, junit string
	timeout                   time.Duration
	histories                 int
	extended                  bool
}

func conform(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f conformFlags
	fs := flag.NewFlagSet("adapterkit conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.exec, "exec", "", "adapter `command` to run (quoted as for a shell); default: the bundled reference adapter, in process")
	fs.StringVar(&f.name, "name", "", "factory `name` for reports (default: the name the adapter gives)")
	fs.DurationVar(&f.timeout, "timeout", bridge.DefaultCallTimeout, "bound on each call to an adapter process (a completion includes its transport call)")
	fs.StringVar(&f.report, "report", "", "write the conformance report (runtime-adapter-conformance-v1 JSON) to `file`")
	fs.StringVar(&f.junit, "junit", "", "write JUnit XML results to `file`")
	fs.BoolVar(&f.extended, "extended", true, "run the extended checks of the Ginkgo suite (negotiation, diagnostics privacy, closed adapter, bounded diagnostics, concurrency, embedding port)")
	fs.IntVar(&f.histories, "histories", defaultHistories, "generated canonical histories the projection check hands the adapter (0 skips it)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: adapterkit conform [flags] [--exec \"CMD ARGS\" | -- CMD ARGS...]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitBroken
	}
	factory, target, err := pickFactory(f, fs.Args(), stderr)
	if err != nil {
		fmt.Fprintln(stderr, "adapterkit conform:", err)
		return exitBroken
	}
	out, err := runConform(ctx, factory, target, f.extended, f.histories)
	if err != nil {
		fmt.Fprintf(stderr, "adapterkit conform: %s: %v\n", target, err)
		return exitBroken
	}
	printTable(stdout, out)
	if f.report != "" && out.Report != nil {
		b, _ := json.MarshalIndent(out.Report, "", "  ")
		if err := os.WriteFile(f.report, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "adapterkit conform:", err)
			return exitBroken
		}
	}
	if f.junit != "" {
		if err := os.WriteFile(f.junit, junitXML(out), 0o644); err != nil {
			fmt.Fprintln(stderr, "adapterkit conform:", err)
			return exitBroken
		}
	}
	if !out.passed() {
		return exitFail
	}
	return exitPass
}

// pickFactory returns the factory the flags and arguments name.
func pickFactory(f conformFlags, rest []string, stderr io.Writer) (conformance.Factory, string, error) {
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
		factory := reference.NewConformanceFactory()
		if f.name != "" {
			factory = conformance.NewFactory(f.name, factory.Create)
		}
		return factory, "reference adapter (in process)", nil
	}
	cfg := bridge.ExecConfig{Name: f.name, Path: words[0], Args: words[1:], Stderr: stderr,
		Options: bridge.Options{CallTimeout: f.timeout}}
	return bridge.NewFactory(cfg), "process " + strings.Join(words, " "), nil
}

// runConform runs the seven cases on one instance, then the extended
// checks. It returns an error only when no instance could be created.
func runConform(ctx context.Context, factory conformance.Factory, target string, extended bool, histories int) (*outcome, error) {
	start := time.Now()
	out := &outcome{Target: target}
	s, err := conformance.Start(ctx, factory)
	if err != nil {
		return nil, err
	}
	var results []conformance.CaseResult
	for _, id := range conformance.CaseIDs() {
		t0 := time.Now()
		r := s.RunCase(ctx, id)
		results = append(results, r)
		out.Checks = append(out.Checks, checkResult{ID: id, Kind: kindCase, Passed: r.Passed, Code: r.FailureCode,
			Failure: r.Failure, Duration: time.Since(t0)})
	}
	if err := s.Close(ctx); err != nil {
		out.Problems = append(out.Problems, conformance.Redact(err.Error()))
	} else {
		rep := conformance.NewReport(factory.Name(), results)
		out.Report = &rep
	}
	out.Factory = conformance.Redact(factory.Name())
	if extended {
		out.Checks = append(out.Checks, runExtended(factory)...)
	}
	if histories > 0 {
		out.Checks = append(out.Checks, checkProjection(ctx, factory, histories))
	}
	out.Duration = time.Since(start)
	return out, nil
}

// checkProjection hands the factory generated canonical histories (seeds
// 1..n of spec/gen's History generator) and checks each snapshot is their
// faithful projection.
func checkProjection(ctx context.Context, factory conformance.Factory, n int) checkResult {
	t0 := time.Now()
	res := checkResult{ID: "projection", Kind: kindExtended, Passed: true,
		Note: fmt.Sprintf("%d generated histories", n)}
	if n == 1 {
		res.Note = "1 generated history"
	}
	fail := func(seed int, rule, expected, actual string) checkResult {
		res.Passed = false
		res.Code = "projection-assertion-failed"
		res.Note = fmt.Sprintf("history seed %d", seed)
		res.Failure = &conformance.Failure{Case: res.ID, Code: res.Code,
			Rule: rule, Expected: expected, Actual: conformance.Redact(actual)}
		res.Duration = time.Since(t0)
		return res
	}
	for seed := 1; seed <= n; seed++ {
		fx := conformance.NewFixture()
		fx.Messages = gen.History(fx.RuntimeID, fx.SessionID).Example(seed)
		s, err := conformance.StartWith(ctx, factory, fx)
		if err != nil {
			return fail(seed, "the factory must create an instance holding any valid history", "an instance", "error: "+err.Error())
		}
		snap, err := s.Adapter().SnapshotHistory(ctx)
		closeErr := s.Close(ctx)
		if err != nil {
			return fail(seed, "SnapshotHistory must project any valid canonical history", "a snapshot", "error: "+err.Error())
		}
		if err := conformance.CheckProjection(&snap, fx.RuntimeID, fx.SessionID, s.ExpectedProjectRoot(), fx.Messages); err != nil {
			var f *conformance.Failure
			if errors.As(err, &f) {
				return fail(seed, f.Rule, f.Expected, f.Actual)
			}
			return fail(seed, "the snapshot must be a faithful projection", "no difference", err.Error())
		}
		if closeErr != nil {
			return fail(seed, "the instance must shut down and clean up without error", "no error", "error: "+closeErr.Error())
		}
	}
	res.Duration = time.Since(t0)
	return res
}

// printTable writes the human-readable results.
func printTable(w io.Writer, o *outcome) {
	fmt.Fprintf(w, "%s conformance of %s\n", contract.ContractVersion, o.Target)
	if o.Factory != "" {
		fmt.Fprintf(w, "adapter: %s\n", o.Factory)
	}
	fmt.Fprintln(w)
	width := len("CHECK")
	for _, c := range o.Checks {
		width = max(width, len(c.ID))
	}
	pad := strings.Repeat(" ", width+2+6+2)
	fmt.Fprintf(w, "%-*s  %-6s  %s\n", width, "CHECK", "RESULT", "DETAIL")
	cases, extended := 0, 0
	passed := 0
	for _, c := range o.Checks {
		if c.Kind == kindCase {
			cases++
		} else {
			extended++
		}
		result, detail := "pass", c.Note
		if c.Skipped {
			result = "skip"
		}
		if c.Passed {
			passed++
		} else {
			result, detail = "FAIL", c.Code
			if c.Note != "" {
				detail += " (" + c.Note + ")"
			}
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-*s  %-6s  %s", width, c.ID, result, detail), " "))
		if f := c.Failure; f != nil {
			fmt.Fprintf(w, "%srule:     %s\n%sexpected: %s\n%sactual:   %s\n", pad, f.Rule, pad, f.Expected, pad, f.Actual)
		}
	}
	fmt.Fprintln(w)
	for _, p := range o.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	verdict := "PASS"
	if !o.passed() {
		verdict = "FAIL"
	}
	skipped := 0
	for _, c := range o.Checks {
		if c.Skipped {
			skipped++
		}
	}
	summary := fmt.Sprintf("%d of %d checks passed", passed-skipped, len(o.Checks)-skipped)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintf(w, "%s  %s (%d contract cases, %d extended) in %s\n",
		verdict, summary, cases, extended, o.Duration.Round(time.Millisecond))
}
