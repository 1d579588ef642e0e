package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// campaignEnv, when set, runs TestCampaignWorkflow's larger form: more
// steps and histories, each shard against serve-reference over the
// bridge, with the command built by go build.
const campaignEnv = "ADAPTERKIT_CAMPAIGN"

// workflow is the GitHub Actions workflow of docs/campaigns.md, as far as
// the test runs it: the shards of its matrix, the arguments of its conform
// step (after ./cmd/conform) and of its merge step (after adapterkit).
type workflow struct {
	shards      []int
	conform     string
	merge       string
	uploadShard string
}

// readWorkflow reads the workflow from docs/campaigns.md: the YAML block
// after the campaign-workflow marker.
func readWorkflow(t *testing.T) workflow {
	t.Helper()
	b, err := os.ReadFile("../../docs/campaigns.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- campaign-workflow -->\n```yaml\n")
	if !ok {
		t.Fatal("docs/campaigns.md has no workflow after <!-- campaign-workflow -->")
	}
	yaml, _, _ := strings.Cut(rest, "\n```")
	var w workflow
	for _, line := range strings.Split(yaml, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "shard: ["):
			for _, f := range strings.Split(strings.Trim(strings.TrimPrefix(line, "shard:"), " []"), ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					t.Fatalf("the matrix line %q: %v", line, err)
				}
				w.shards = append(w.shards, n)
			}
		case strings.HasPrefix(line, "run: go run ./cmd/conform "):
			w.conform = strings.TrimPrefix(line, "run: go run ./cmd/conform ")
		case strings.HasPrefix(line, "run: go run github.com/ds4context/adapterkit/cmd/adapterkit merge-reports "):
			w.merge = strings.TrimPrefix(line, "run: go run github.com/ds4context/adapterkit/cmd/adapterkit ")
		case strings.HasPrefix(line, "path: shard-"):
			w.uploadShard = strings.TrimPrefix(line, "path: ")
		}
	}
	if len(w.shards) == 0 || w.conform == "" || w.merge == "" || w.uploadShard == "" {
		t.Fatalf("docs/campaigns.md: the workflow lacks a matrix of shards, a conform step, a merge step or a shard upload:\n%s", yaml)
	}
	return w
}

// The workflow of docs/campaigns.md, run on one machine: its shards, each
// a process of the command, then its merge, give exactly the verdict and
// the counts of the unsharded run of the same seed.
func TestCampaignWorkflow(t *testing.T) {
	w := readWorkflow(t)
	n := len(w.shards)
	for i, s := range w.shards {
		if s != i+1 {
			t.Fatalf("the matrix's shards are %v, want 1 to %d", w.shards, n)
		}
	}
	if !strings.Contains(w.conform, fmt.Sprintf("--shard ${{ matrix.shard }}/%d ", n)) || !strings.Contains(w.conform, "--seed ${{ github.run_id }} ") {
		t.Fatalf("the conform step %q does not run shard ${{ matrix.shard }}/%d of the run's seed", w.conform, n)
	}
	if !strings.Contains(w.conform, "--report "+w.uploadShard) {
		t.Fatalf("the conform step %q does not write the report the job uploads (%s)", w.conform, w.uploadShard)
	}
	var files []string
	for _, s := range w.shards {
		files = append(files, strings.ReplaceAll(w.uploadShard, "${{ matrix.shard }}", strconv.Itoa(s)))
	}
	if !strings.HasSuffix(w.merge, " "+strings.Join(files, " ")) {
		t.Fatalf("the merge step %q does not merge every shard's report %q", w.merge, files)
	}

	// The default form runs a few hundred model steps and a few histories
	// on the reference adapter in process, and of the checks that run in
	// shard 1 alone only the identity case (the split checks and one that
	// is not prove the split and the merge; each other check would run
	// twice more, in shard 1 and the unsharded run); under
	// ADAPTERKIT_STRESS=1 every check. The larger form runs every check,
	// over the bridge.
	steps, histories, timeout := "300", "4", 2*time.Minute
	bin, env := os.Args[0], []string{asCommandEnv + "=1"} // this test binary is the command
	var extra []string
	if !long() {
		extra = []string{"--check", strings.Join([]string{conformance.CaseIdentity, conformance.CheckModel, conformance.CheckProjection}, ",")}
	}
	if os.Getenv(campaignEnv) != "" {
		steps, histories, timeout = "4000", "40", 30*time.Minute
		bin, env = filepath.Join(t.TempDir(), "adapterkit"), nil
		if out, err := exec.CommandContext(deadline(t, 5*time.Minute), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		extra = []string{"--exec", shellQuote(bin) + " serve-reference"}
	}
	const seed = "4096" // the run's id
	dir := t.TempDir()
	scale := func(args []string) []string {
		for i := range args {
			if i > 0 && args[i-1] == "--model-steps" {
				args[i] = steps
			}
			if i > 0 && args[i-1] == "--histories" {
				args[i] = histories
			}
		}
		return append(args, extra...)
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if errOut.Len() > 0 {
			t.Logf("%q: %s", args, errOut.String())
		}
		return cmd.ProcessState.ExitCode(), out.String()
	}
	for _, s := range w.shards {
		step := strings.NewReplacer("${{ github.run_id }}", seed, "${{ matrix.shard }}", strconv.Itoa(s)).Replace(w.conform)
		code, out := run(scale(append([]string{"conform"}, strings.Fields(step)...))...)
		if code != exitPass {
			t.Fatalf("shard %d/%d: exit %d\n%s", s, n, code, out)
		}
	}
	mergeCode, mergeOut := run(strings.Fields(w.merge)...)
	wholeCode, wholeOut := run(scale([]string{"conform", "--seed", seed, "--model-steps", "", "--histories", "", "--report", "whole.json"})...)
	if mergeCode != wholeCode || wholeCode != exitPass {
		t.Fatalf("merged: exit %d\n%s\nunsharded: exit %d\n%s", mergeCode, mergeOut, wholeCode, wholeOut)
	}
	// The verdict line up to its time: "PASS  37 of 37 checks passed, 1
	// skipped (7 contract cases, …)".
	verdict := regexp.MustCompile(`(?m)^(PASS|FAIL).*\)`)
	if mv, wv := verdict.FindString(mergeOut), verdict.FindString(wholeOut); mv == "" || mv != wv {
		t.Fatalf("merged verdict %q, unsharded %q\n%s\n%s", mv, wv, mergeOut, wholeOut)
	}
	merged, whole := readRunReport(t, filepath.Join(dir, "campaign.json")), readRunReport(t, filepath.Join(dir, "whole.json"))
	if merged.Passed != whole.Passed || merged.KitVersion != whole.KitVersion || merged.FactoryName != whole.FactoryName ||
		conformance.LimitNames(merged.Limits) != conformance.LimitNames(whole.Limits) {
		t.Fatalf("merged passed %t, kit %q, adapter %q, limits %q; unsharded %t, %q, %q, %q", merged.Passed, merged.KitVersion, merged.FactoryName,
			conformance.LimitNames(merged.Limits), whole.Passed, whole.KitVersion, whole.FactoryName, conformance.LimitNames(whole.Limits))
	}
	if c := merged.Campaign; c == nil || c.Shard != 0 || c.Shards != n || strconv.FormatUint(c.Seed, 10) != seed {
		t.Fatalf("merged campaign %+v", merged.Campaign)
	}
	if got, want := statuses(merged), statuses(whole); !slices.Equal(got, want) {
		t.Fatalf("merged checks %q, unsharded %q", got, want)
	}
	covered := 0
	for i, c := range whole.Checks {
		for _, k := range []string{"sequences", "operations", "histories"} {
			if got, want := merged.Checks[i].Covered[k], c.Covered[k]; got != want {
				t.Errorf("%s: merged covers %d %s, unsharded %d", c.ID, got, k, want)
			}
			covered += c.Covered[k]
		}
	}
	if covered == 0 {
		t.Fatal("the unsharded run covered nothing")
	}
	xml, err := os.ReadFile(filepath.Join(dir, "campaign.xml"))
	if err != nil || !bytes.Contains(xml, []byte(`<property name="shard" value="all 4 merged">`)) {
		t.Fatalf("the merged JUnit XML (%v):\n%s", err, xml)
	}
}

// statuses lists "id status" for every check of rep.
func statuses(rep conformance.RunReport) []string {
	var out []string
	for _, c := range rep.Checks {
		out = append(out, c.ID+" "+string(c.Status))
	}
	return out
}

func readRunReport(t *testing.T, file string) conformance.RunReport {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep conformance.RunReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// merge-reports refuses shards of two campaigns, and a missing shard fails
// the campaign, exit 2, its report not passed.
func TestMergeReportsRefusesAndReports(t *testing.T) {
	dir := t.TempDir()
	shard := func(name string, args ...string) string {
		file := filepath.Join(dir, name)
		code, out, errOut := runInProcess(t, append([]string{"conform", "--check", "model,identity", "--model-steps", "60", "--report", file}, args...)...)
		if code != exitPass {
			t.Fatalf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
		return file
	}
	a, b := shard("a.json", "--seed", "5", "--shard", "1/2"), shard("b.json", "--seed", "6", "--shard", "2/2")
	report := filepath.Join(dir, "m.json")
	code, out, errOut := runInProcess(t, "merge-reports", "--report", report, a, b)
	if code != exitBroken || !strings.Contains(errOut, "campaign seed") || out != "" {
		t.Fatalf("shards of two campaigns: exit %d\n%s%s", code, out, errOut)
	}
	if rep := readRunReport(t, report); rep.Passed || len(rep.Problems) != 1 {
		t.Fatalf("the report of a refused merge: %+v", rep)
	}
	code, out, errOut = runInProcess(t, "merge-reports", "--report", report, a)
	if code != exitBroken || !strings.Contains(out, "problem: shard 2/2 is missing") || !strings.Contains(out, "FAIL") {
		t.Fatalf("a missing shard: exit %d\n%s%s", code, out, errOut)
	}
	if rep := readRunReport(t, report); rep.Passed {
		t.Fatal("a campaign missing a shard passed")
	}
	if code, _, errOut := runInProcess(t, "merge-reports", filepath.Join(dir, "none.json")); code != exitBroken || errOut == "" {
		t.Fatalf("an unreadable report: exit %d %s", code, errOut)
	}
}
