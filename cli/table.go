package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// addReruns gives every failed check of rep that drew random input the
// command that reruns it alone with its seed, args being the run's own
// (a shard's --shard among them).
func addReruns(rep *conformance.RunReport, args []string) {
	for i, c := range rep.Checks {
		if c.Seed != 0 && c.Failure != nil {
			rep.Checks[i].Rerun = []string{rerunCommand(args, c.ID, c.Seed)}
		}
	}
}

// printTable writes the human-readable results: one row per check, the
// explanation under each failure (with the commands that rerun a failed
// check that drew random input, Result.Rerun), and a verdict line.
func printTable(w io.Writer, target string, rep conformance.RunReport) {
	fmt.Fprintf(w, "%s conformance of %s\n", contract.ContractVersion, target)
	if rep.FactoryName != "" {
		fmt.Fprintf(w, "adapter: %s\n", rep.FactoryName)
	}
	fmt.Fprintln(w)
	width := len("CHECK")
	for _, c := range rep.Checks {
		width = max(width, len(c.ID))
	}
	pad := strings.Repeat(" ", width+2+kindWidth+2+6+2)
	fmt.Fprintf(w, "%-*s  %-*s  %-6s  %s\n", width, "CHECK", kindWidth, "KIND", "RESULT", "DETAIL")
	for _, c := range rep.Checks {
		result, detail := string(c.Status), c.Note
		switch c.Status {
		case conformance.StatusSkip:
			detail = "skipped: " + c.SkipReason
		case conformance.StatusFail:
			result, detail = "FAIL", c.Failure.Code
		case conformance.StatusError:
			result, detail = "ERROR", c.Failure.Code
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-*s  %-*s  %-6s  %s", width, c.ID, kindWidth, c.Kind, result, detail), " "))
		if f := c.Failure; f != nil {
			fmt.Fprintf(w, "%srule:     %s\n%sexpected: %s\n%sactual:   %s\n", pad, f.Rule, pad, f.Expected, pad, f.Actual)
			for _, r := range c.Rerun {
				fmt.Fprintf(w, "%srerun:    %s\n", pad, r)
			}
		}
	}
	fmt.Fprintln(w)
	if len(rep.LeftOut) > 0 {
		names := make([]string, len(rep.LeftOut))
		for i, f := range rep.LeftOut {
			names[i] = string(f)
		}
		fmt.Fprintf(w, "generated histories leave out: %s\n", strings.Join(names, ", "))
	}
	for _, l := range rep.Limits {
		fmt.Fprintf(w, "limit: %s\n", l)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	passed, failed, skipped := rep.Counts()
	verdict := "PASS"
	if !rep.Passed {
		verdict = "FAIL"
	}
	// "PASS  36 of 36 checks passed", "PASS with limits: multi-result,
	// image — 36 of 36 checks passed".
	if len(rep.Limits) > 0 {
		verdict += " with limits: " + conformance.LimitNames(rep.Limits) + " — "
	} else {
		verdict += "  "
	}
	summary := fmt.Sprintf("%d of %d checks passed", passed, passed+failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	took := " in " + rep.Duration.Round(time.Millisecond).String()
	if c := rep.Campaign; c != nil && c.Shard == 0 {
		took = fmt.Sprintf(" over %d shards of seed %#016x", c.Shards, c.Seed) // merged: no one run's time
	}
	fmt.Fprintf(w, "%s%s (%s)%s\n", verdict, summary, kindCounts(rep.Checks), took)
}

// kindWidth is the width of the KIND column: the longest kind.
const kindWidth = len(conformance.KindExtended)

// kindCounts says how many checks of each kind ran: the contract cases and
// the in-order run apart, as the README and Run count them.
func kindCounts(checks []conformance.Result) string {
	var cases, inOrder, extended, gated int
	for _, c := range checks {
		switch {
		case c.ID == conformance.CheckInOrder:
			inOrder++
		case c.Kind == conformance.KindContract:
			cases++
		case c.Kind == conformance.KindFeature:
			gated++
		default:
			extended++
		}
	}
	var parts []string
	if cases > 0 {
		parts = append(parts, fmt.Sprintf("%d contract %s", cases, map[bool]string{true: "case", false: "cases"}[cases == 1]))
	}
	if inOrder > 0 {
		parts = append(parts, "the cases in order")
	}
	return strings.Join(append(parts, fmt.Sprintf("%d extended", extended), fmt.Sprintf("%d capability-gated", gated)), ", ")
}

// rerunCommand is the conform command that reruns check id alone with
// seed: the run's own arguments with their --check, --seed, --report and
// --junit flags replaced.
func rerunCommand(args []string, id string, seed uint64) string {
	words := []string{"conform"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			words = append(words, args[i:]...)
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
		case name == "check" || name == "seed" || name == "report" || name == "junit":
			if !hasValue {
				i++ // the flag's value is the next word
			}
			continue
		}
		words = append(words, a)
	}
	for i, word := range words {
		words[i] = shellQuote(word)
	}
	return strings.Join(words, " ") + fmt.Sprintf(" --check %s --seed %#016x", id, seed)
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// word characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
