package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// printTable writes the human-readable results: one row per check, the
// explanation under each failure, and a verdict line.
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
		fmt.Fprintf(w, "limit: %s — %s\n", l.Name(), l.Detail())
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
	fmt.Fprintf(w, "%s%s (%s) in %s\n", verdict, summary, kindCounts(rep.Checks), rep.Duration.Round(time.Millisecond))
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
