package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// Merge is the merge-reports command: it reads the reports the shards of
// one campaign wrote (conform --shard i/n --report FILE), combines them
// with conformance.MergeReports, prints the campaign's table as conform
// prints a run's, writes the merged report and JUnit XML when --report and
// --junit name files, and returns the exit status: 0 when the campaign
// passed, 1 when a check failed, 2 when the reports could not be merged
// (unreadable, of different campaigns, kit versions or adapters) or a
// shard is missing, given twice or could not run.
func Merge(args []string, stdout, stderr io.Writer) int {
	var f flags
	fs := flag.NewFlagSet("merge-reports", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.report, "report", "", "write the merged report ("+conformance.RunReportVersion+" JSON) to `file`")
	fs.StringVar(&f.junit, "junit", "", "write the merged JUnit XML to `file` (another file than --report's)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: merge-reports [--report FILE] [--junit FILE] SHARD.json...\n\n"+
			"Combines the reports of a campaign's shards (conform --seed S --shard i/n --report SHARD.json)\n"+
			"into the campaign's verdict.\n\nflags:\n")
		fs.PrintDefaults()
	}
	parseErr := fs.Parse(args)
	if errors.Is(parseErr, flag.ErrHelp) {
		return exitPass
	}
	broken := func(err error) int {
		fmt.Fprintln(stderr, "merge-reports:", err)
		_ = writeResults(f, "", unfinished("the merge could not happen: "+err.Error()))
		return exitBroken
	}
	if parseErr != nil {
		return broken(parseErr)
	}
	if err := distinctFiles(f.report, f.junit); err != nil {
		f.junit = ""
		return broken(err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return broken(errors.New("no report given: name the report of every shard"))
	}
	reports := make([]conformance.RunReport, fs.NArg())
	for i, name := range fs.Args() {
		b, err := os.ReadFile(name)
		if err != nil {
			return broken(err)
		}
		if err := json.Unmarshal(b, &reports[i]); err != nil {
			return broken(fmt.Errorf("%s is not a report: %w", name, err))
		}
		if reports[i].Version != conformance.RunReportVersion {
			return broken(fmt.Errorf("%s is not an %s report (version %q)", name, conformance.RunReportVersion, conformance.Redact(reports[i].Version)))
		}
	}
	merged, err := conformance.MergeReports(reports)
	if err != nil {
		for i, name := range fs.Args() {
			fmt.Fprintf(stderr, "merge-reports: report %d: %s\n", i+1, name)
		}
		return broken(err)
	}
	c := merged.Campaign
	target := fmt.Sprintf("a campaign of %d shards, seed %#016x", c.Shards, c.Seed)
	printTable(stdout, target, merged)
	if err := writeResults(f, target, merged); err != nil {
		fmt.Fprintln(stderr, "merge-reports:", err)
		return exitBroken
	}
	switch {
	case len(merged.Problems) > 0:
		return exitBroken
	case !merged.Passed:
		return exitFail
	}
	return exitPass
}
