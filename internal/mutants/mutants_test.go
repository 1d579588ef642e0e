package mutants_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/cli"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
	"github.com/ds4context/adapterkit/spec"
)

// base is the correct adapter every mutant wraps.
func base() conformance.Factory { return reference.NewConformanceFactory() }

// correctName names the unmutated adapter's embedding in the suite.
const correctName = "correct adapter"

func TestRunnerPassesCorrectAdapter(t *testing.T) {
	r, err := conformance.Run(context.Background(), base())
	if err != nil || !r.Passed {
		t.Fatalf("Run(correct adapter) = passed %t, failed %q, err %v; want a passing report", r.Passed, r.Failed(), err)
	}
}

// TestRunnerKillsEveryMutant runs conformance.Run on every mutant: it
// fails exactly the cases the mutant lists (or refuses the run with its
// error), and neither the report nor an error holds a probe. Verify runs,
// by default, on the mutants Run fails or refuses, the ones it has a
// failure to explain; everyFaceEnv=1 runs it on every mutant, and then also
// requires it to pass the mutants Run passes.
func TestRunnerKillsEveryMutant(t *testing.T) {
	killed := 0
	for _, m := range mutants.Catalogue() {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			r, err := conformance.Run(ctx, m.Factory(base()))
			b, _ := json.Marshal(r)
			if conformance.ContainsProbe(b) || (err != nil && conformance.ContainsProbe([]byte(err.Error()))) {
				t.Fatalf("the report or error holds a probe")
			}
			switch {
			case m.RunnerErr != nil:
				if !errors.Is(err, m.RunnerErr) || r.Cases != nil {
					t.Fatalf("Run = %d cases, err %v; want no report and %v", len(r.Cases), err, m.RunnerErr)
				}
			case err != nil:
				t.Fatalf("Run: %v", err)
			case !slices.Equal(r.Failed(), m.RunnerFails()):
				t.Fatalf("failed cases %q, want %q", r.Failed(), m.RunnerFails())
			}
			if len(m.RunnerFails()) > 0 || m.RunnerErr != nil {
				killed++
			} else if !everyFace() {
				return
			}
			verr := conformance.Verify(ctx, m.Factory(base()))
			if verr != nil && conformance.ContainsProbe([]byte(verr.Error())) {
				t.Fatalf("Verify's explanation holds a probe")
			}
			if len(m.RunnerFails()) == 0 && m.RunnerErr == nil && verr != nil {
				t.Fatalf("Verify = %v, want nil as Run passes", verr)
			}
			if len(m.RunnerFails()) > 0 {
				if aerr := conformance.Assert(r); !errors.Is(aerr, conformance.ErrCaseFailed) {
					t.Fatalf("Assert = %v, want ErrCaseFailed", aerr)
				}
				var f *conformance.Failure
				if !errors.As(verr, &f) || f.Check != m.RunnerFails()[0] || f.Rule == "" || f.Expected == "" {
					t.Fatalf("Verify = %v, want an explained failure of %s", verr, m.RunnerFails()[0])
				}
			}
		})
	}
	t.Logf("runner: %d of %d mutants fail a case or the run (the rest break rules only the Ginkgo suite's extended and property specs check)", killed, len(mutants.Catalogue()))
}

// TestEveryMutantFailsItsOwnChecks runs, on mutants of the catalogue, each
// check they list but the model: every one fails it, and no report holds a
// probe. By default it runs ownSample(), which shows every check a mutant
// lists failing on at least one mutant; under everyFaceEnv=1 it runs none,
// since TestCLIKillsEveryMutant then runs the whole catalogue on every
// mutant and requires exactly its checks to fail.
func TestEveryMutantFailsItsOwnChecks(t *testing.T) {
	if everyFace() {
		t.Skipf("%s=1: TestCLIKillsEveryMutant runs every check on every mutant", everyFaceEnv)
	}
	sample := ownSample()
	for _, m := range sample {
		own := ownChecks(m)
		t.Run(m.Name, func(t *testing.T) {
			if m.Races && raceDetector {
				t.Skip("a real data race: the race detector would fail this process (the Ginkgo suite's child processes run it)")
			}
			t.Parallel()
			r := conformance.RunChecks(context.Background(), m.Factory(base()), conformance.WithSeed(seed),
				conformance.WithCallTimeout(generousCall), conformance.WithChecks(own...), conformance.WithoutShrinking())
			if b, _ := json.Marshal(r); conformance.ContainsProbe(b) {
				t.Fatal("the report holds a probe")
			}
			if got, want := failedChecks(r), slices.Sorted(slices.Values(own)); !slices.Equal(got, want) {
				t.Fatalf("failed checks %q, want %q (breaks: %s)", got, want, m.Breaks)
			}
		})
	}
	t.Logf("%d of %d mutants, showing every check a mutant lists but the model failing; %s=1 runs every mutant's own checks through the CLI",
		len(sample), len(mutants.Catalogue()), everyFaceEnv)
}

// ownChecks returns the checks m lists but the model.
func ownChecks(m mutants.Mutant) []string {
	return slices.DeleteFunc(slices.Clone(m.Fails), func(id string) bool { return id == conformance.CheckModel })
}

// ownSample returns the mutants TestEveryMutantFailsItsOwnChecks runs by
// default: in the catalogue's order, each mutant one of whose own checks
// (ownChecks) no mutant before it in the sample lists, nor one the Ginkgo
// suite (in a full run) or the CLI runs on every check but the model
// (suiteSample, cliSample), whose runs require the same of their mutants.
// By construction, every check a mutant lists is shown failing on one by
// default.
func ownSample() []mutants.Mutant {
	shown := map[string]bool{}
	var faces []string
	if !testing.Short() {
		faces = append(faces, suiteSample...)
	}
	for _, m := range sampleOf(slices.Concat(faces, cliSample)) {
		if !m.SuiteByChance || slices.Contains(cliSample, m.Name) {
			for _, id := range ownChecks(m) {
				shown[id] = true
			}
		}
	}
	var out []mutants.Mutant
	for _, m := range mutants.Catalogue() {
		if slices.ContainsFunc(ownChecks(m), func(id string) bool { return !shown[id] }) {
			out = append(out, m)
			for _, id := range ownChecks(m) {
				shown[id] = true
			}
		}
	}
	return out
}

// generousCall bounds each adapter call in the tests that expect no call
// to hang: far above what a call takes on a loaded machine, so that no
// verdict depends on how busy the machine is.
const generousCall = time.Minute

// The seed of the random privacy probes in the mutant runs, so that every
// run kills every mutant in exactly the same checks.
const seed = 0x5eed0f5ca7

var mutantSeed = strconv.FormatUint(seed, 10)

// Environment of the child processes that run the Ginkgo suite.
const (
	shardEnv = "ADAPTERKIT_MUTANT_SHARD"
	shards   = 4
)

// everyFaceEnv, set to 1, runs every mutant through every face: the Ginkgo
// suite (model spec included) and the CLI's whole catalogue on each, where
// the default run takes samples (the CI script sets it). The model check
// costs most of a whole-catalogue run (about 1.5 s of CPU a mutant), so by
// default it runs on the CLI's sample only; conformance.Run runs on the
// whole catalogue whatever it says, and by default each mutant's own checks
// run on a sample that shows every one of them failing (ownSample).
const everyFaceEnv = "ADAPTERKIT_MUTANTS_EVERY_FACE"

// everyFace reports whether everyFaceEnv asks for the full matrix.
func everyFace() bool { return os.Getenv(everyFaceEnv) == "1" }

// suiteMutants returns the mutants the Ginkgo suite runs on: every one
// under everyFaceEnv=1, suiteSample otherwise.
func suiteMutants() []mutants.Mutant {
	if everyFace() {
		return mutants.Catalogue()
	}
	return sampleOf(suiteSample)
}

// suiteLabelFilter is the Ginkgo label filter of the suite's children: by
// default every spec but the model's, which TestCLIKillsEveryMutant runs
// on its sample and TestModelPassesTheReferenceAdapter on the correct
// adapter; under everyFaceEnv=1 every spec.
func suiteLabelFilter() string {
	if everyFace() {
		return ""
	}
	return "!" + conformance.CheckModel
}

// suiteWants returns the checks m must fail in the suite's children: m.Fails
// without the model check when suiteLabelFilter leaves its spec out.
func suiteWants(m mutants.Mutant) []string {
	want := slices.Clone(m.Fails)
	if m.SuiteByChance {
		want = slices.DeleteFunc(want, func(id string) bool { return id == conformance.CheckProjection })
	}
	if everyFace() {
		return want
	}
	return slices.DeleteFunc(want, func(id string) bool { return id == conformance.CheckModel })
}

// suiteSample is the mutants the Ginkgo suite runs on by default, each on
// every spec but the model's, one for each thing the suite's face does
// besides running a check (TestEveryMutantFailsItsOwnChecks shows every
// check failing on mutants; the correct adapter, in every run of the
// suite, shows every spec runs and passes):
//   - drops-a-message: generic specs and the projection property spec fail;
//   - panics-in-identity: a check errs on an adapter that panics, which
//     fails its spec as a failure does;
//   - forwards-unsanitised-payload: random privacy probes reach the
//     transport, and may not show in the suite's output;
//   - races-under-concurrency: a real data race, which under the race
//     detector only the suite's child processes run;
//   - refuses-multi-result-tool-messages, upstream-privacy-engine: legal
//     variants that pass with a limit entry, from the property spec and
//     from a generic spec.
//
// everyFaceEnv=1 runs every mutant on every spec.
var suiteSample = []string{
	"drops-a-message", "panics-in-identity", "forwards-unsanitised-payload", "races-under-concurrency",
	"refuses-multi-result-tool-messages", "upstream-privacy-engine",
}

// shrinkOpts returns the options that turn shrinking off for m unless m is
// in a face's default sample (suiteSample, cliSample), whose runs show a
// shrunk failure through the face: the other mutants' runs look only at
// which checks fail, and shrinking a failure costs more CPU than finding
// it (the model's, most of an every-face run).
func shrinkOpts(m mutants.Mutant) []conformance.Option {
	if slices.Contains(suiteSample, m.Name) || slices.Contains(cliSample, m.Name) {
		return nil
	}
	return []conformance.Option{conformance.WithoutShrinking()}
}

// sampleOf returns the mutants of the catalogue named in names, in the
// catalogue's order.
func sampleOf(names []string) []mutants.Mutant {
	var out []mutants.Mutant
	for _, m := range mutants.Catalogue() {
		if slices.Contains(names, m.Name) {
			out = append(out, m)
		}
	}
	return out
}

// TestMutantSuite is the Ginkgo suite the mutant test runs in child
// processes, one per shard: the suite embedded once per mutant (and once
// for the correct adapter), which is also what makes Describe's repeated
// registration part of the tests.
func TestMutantSuite(t *testing.T) {
	shard, err := strconv.Atoi(os.Getenv(shardEnv))
	if err != nil {
		t.Skip("runs as a child process of TestSuiteKillsEveryMutant")
	}
	if shard == 0 {
		spec.Describe(base(), conformance.WithName(correctName), conformance.WithSeed(seed), conformance.WithCallTimeout(generousCall))
	}
	for i, m := range suiteMutants() {
		if i%shards == shard {
			opts := append([]conformance.Option{conformance.WithName("mutant " + m.Name), conformance.WithSeed(seed), conformance.WithCallTimeout(generousCall)}, shrinkOpts(m)...)
			spec.Describe(m.Factory(base()), opts...)
		}
	}
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "mutants")
}

// specKey is the id of the check a spec runs: its text starts with it.
func specKey(r types.SpecReport) string {
	id, _, _ := strings.Cut(r.LeafNodeText, ":")
	return id
}

// childDeadline bounds one shard of the suite, every mutant included, on a
// loaded machine.
const childDeadline = 8 * time.Minute

func runShards(t *testing.T) []types.SpecReport {
	dir := t.TempDir()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		reports []types.SpecReport
		errs    []error
	)
	for shard := range shards {
		wg.Go(func() {
			file := filepath.Join(dir, fmt.Sprintf("shard%d.json", shard))
			tmp := filepath.Join(dir, fmt.Sprintf("tmp%d", shard))
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Error(err)
				return
			}
			// No rapid fail files in the tree; shrinking is capped because
			// how short the failing history gets does not matter here.
			ctx, cancel := context.WithTimeout(t.Context(), childDeadline)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMutantSuite$", "-ginkgo.no-color", "-ginkgo.json-report="+file,
				"-ginkgo.label-filter="+suiteLabelFilter())
			cmd.WaitDelay = time.Second
			cmd.Env = append(childEnv(), shardEnv+"="+strconv.Itoa(shard), everyFaceEnv+"="+os.Getenv(everyFaceEnv),
				"RAPID_NOFAILFILE=1", "RAPID_SHRINKTIME=100ms", "TMPDIR="+tmp)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			_ = cmd.Run() // the child fails: its mutants must
			b, err := os.ReadFile(file)
			var rs []types.Report
			if err == nil {
				err = json.Unmarshal(b, &rs)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil || len(rs) != 1 {
				errs = append(errs, fmt.Errorf("shard %d: no report (%v); output:\n%s", shard, err, out.String()))
				return
			}
			if conformance.ContainsProbe(out.Bytes()) {
				errs = append(errs, fmt.Errorf("shard %d: the suite's output holds a probe", shard))
			}
			// Every instance's cleanup ran, failed specs and property checks included.
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				errs = append(errs, fmt.Errorf("shard %d: %d temporary entries left behind (%v)", shard, len(left), err))
			}
			reports = append(reports, rs[0].SpecReports...)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return reports
}

// childEnv is the environment without the variables that tune rapid or the
// suite, so the children run the same checks wherever the test runs.
func childEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "RAPID_") || strings.HasPrefix(kv, "ADAPTERKIT_")
	})
}

// limitEntries are, for legal variants, the spec whose report must hold a
// "conformance limits" entry and what the entry must say.
var limitEntries = map[string][2]string{
	"mutant refuses-multi-result-tool-messages": {conformance.CheckProjection, "multi-result — "},
	"mutant holds-histories-like-pi":            {conformance.CheckProjection, "provenance-source — "},
	"mutant upstream-privacy-engine":            {conformance.CheckPrivacyEngine, conformance.LimitMemberNameFloor + " — "},
}

func TestSuiteKillsEveryMutant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite once per mutant")
	}
	failed := map[string][]string{}
	ran := map[string]int{}
	limits := map[string]bool{}
	for _, r := range runShards(t) {
		if r.LeafNodeType != types.NodeTypeIt {
			continue
		}
		name := strings.TrimPrefix(r.ContainerHierarchyTexts[0], spec.SuiteTitle+" ")
		ran[name]++
		if r.State.Is(types.SpecStateFailureStates) {
			failed[name] = append(failed[name], specKey(r))
			msg := r.Failure.Message
			if conformance.ContainsProbe([]byte(msg)) {
				t.Errorf("%s: the failure of %s holds a probe", name, specKey(r))
			}
			if !strings.Contains(msg, "rule:") || !strings.Contains(msg, "rerun alone:") {
				t.Errorf("%s: the failure of %s does not name the rule and how to rerun it:\n%s", name, specKey(r), msg)
			}
		}
		if want, ok := limitEntries[name]; ok && specKey(r) == want[0] {
			limits[name] = slices.ContainsFunc(r.ReportEntries, func(e types.ReportEntry) bool {
				return e.Name == "conformance limits" && strings.Contains(e.Value.String(), want[1])
			})
		}
		if name == correctName && specKey(r) == conformance.CheckEmbeddingPort &&
			(r.State != types.SpecStateSkipped || !strings.Contains(r.Failure.Message, "does not declare the embeddings capability")) {
			t.Errorf("the correct adapter without a port: embedding-port spec %s (%q), want skipped saying why", r.State, r.Failure.Message)
		}
	}
	// Every check has its spec (the label filter's leave a skipped report).
	if specs := len(conformance.Checks()); ran[correctName] != specs || len(failed[correctName]) > 0 {
		t.Fatalf("correct adapter: %d specs, failed %q; want %d, none failed", ran[correctName], failed[correctName], specs)
	}
	if len(sampleOf(suiteSample)) != len(suiteSample) || len(sampleOf(cliSample)) != len(cliSample) {
		t.Fatalf("a mutant of the samples %q and %q is not in the catalogue", suiteSample, cliSample)
	}
	for name, want := range limitEntries {
		if !slices.ContainsFunc(suiteMutants(), func(m mutants.Mutant) bool { return "mutant "+m.Name == name }) {
			continue
		}
		if !limits[name] {
			t.Errorf("%s: the %s spec reports no limits entry %q", name, want[0], want[1])
		}
	}
	killed := 0
	for _, m := range suiteMutants() {
		name := "mutant " + m.Name
		got := byChance(m, failed[name])
		if m.SuiteByChance {
			got = slices.DeleteFunc(got, func(id string) bool { return id == conformance.CheckProjection })
		}
		got, want := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(suiteWants(m)))
		if ran[name] == 0 {
			t.Errorf("%s: no spec ran", m.Name)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (breaks: %s): failed specs %q, want %q", m.Name, m.Breaks, got, want)
			continue
		}
		killed++
	}
	t.Logf("Ginkgo suite (label filter %q): killed %d of %d mutants (%d in the catalogue; %s=1 runs every one on every spec), each in exactly the specs checking its rule",
		suiteLabelFilter(), killed, len(suiteMutants()), len(mutants.Catalogue()), everyFaceEnv)
}

// TestCLIKillsEveryMutant runs the whole catalogue through the CLI, in
// process, against cliMutants: the checks that fail are exactly those the
// mutant lists, the exit status and the report's verdict agree, and the
// seven-case report inside says what conformance.Run says. By default it
// runs cliSample (with cliModelSteps); everyFaceEnv=1 runs every mutant
// with the model's default steps.
func TestCLIKillsEveryMutant(t *testing.T) {
	killed := 0
	var mu sync.Mutex
	t.Run("all", func(t *testing.T) {
		// A run of the catalogue waits on its bounds and on goroutines as
		// much as it computes: more runs at once than -parallel allows.
		todo := make(chan mutants.Mutant)
		var wg sync.WaitGroup
		for range cliWorkers {
			wg.Go(func() {
				for m := range todo {
					t.Run(m.Name, func(t *testing.T) { cliKills(t, m, &mu, &killed) })
				}
			})
		}
		for _, m := range cliMutants() {
			todo <- m
		}
		close(todo)
		wg.Wait()
	})
	t.Logf("CLI: killed %d of %d mutants, each in exactly the checks of its rule", killed, len(cliMutants()))
}

// cliMutants returns the mutants TestCLIKillsEveryMutant runs: every one
// under everyFaceEnv=1, else cliSample.
func cliMutants() []mutants.Mutant {
	if everyFace() {
		return mutants.Catalogue()
	}
	return sampleOf(cliSample)
}

// cliSample names the mutants the CLI runs the whole catalogue on by
// default, one for each thing its run shows: a mutant conformance.Run
// refuses (no seven-case report; it fails nine checks, the model among
// them), one failing a contract case and the model, and a legal variant
// that passes with a limit in its projection row. cliModelSteps leaves the
// model out of the run on two of them.
var cliSample = []string{"second-shutdown-errors", "wrong-runtime-id", "refuses-multi-result-tool-messages"}

// cliModelSteps is the --model-steps the CLI runs mutants of cliSample
// with by default (the model's default, 1,000 steps, on the others, and on
// every mutant under everyFaceEnv=1). With 0 the model's row is skipped and
// the mutant must fail exactly its other checks. The model's failure
// through the CLI is shown on wrong-runtime-id, which fails in its first
// operations; second-shutdown-errors fails it as early, but the model then
// shrinks the sequence for about 2.5 s of CPU, more than the rest of the
// CLI's default runs together; the legal variant passes it, as
// TestModelPassesTheReferenceAdapter shows of the adapter it wraps, in
// about 1 s of CPU for the operations crossing every bound and 1,000 steps.
var cliModelSteps = map[string]int{"second-shutdown-errors": 0, "refuses-multi-result-tool-messages": 0}

// cliWorkers is how many mutants TestCLIKillsEveryMutant runs at once.
const cliWorkers = 4

// cliKills runs the whole catalogue through the CLI on one mutant.
func cliKills(t *testing.T, m mutants.Mutant, mu *sync.Mutex, killed *int) {
	if m.Races && raceDetector {
		t.Skip("a real data race: the race detector would fail this process (the Ginkgo suite's child processes run it)")
	}
	file := filepath.Join(t.TempDir(), "report.json")
	args := []string{"--report", file, "--seed", mutantSeed, "--timeout", generousCall.String()}
	if shrinkOpts(m) != nil {
		args = append(args, "--no-shrink")
	}
	wantFailed := m.Fails
	if steps, ok := cliModelSteps[m.Name]; ok && !everyFace() {
		args = append(args, "--model-steps", strconv.Itoa(steps))
		if steps == 0 {
			wantFailed = slices.DeleteFunc(slices.Clone(m.Fails), func(id string) bool { return id == conformance.CheckModel })
		}
	}
	var out bytes.Buffer
	code := cli.Run(context.Background(), args, m.Factory(base()), &out, &out)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("exit %d, no report: %v\n%s", code, err, out.String())
	}
	var rep conformance.RunReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if conformance.ContainsProbe(b) || conformance.ContainsProbe(out.Bytes()) {
		t.Fatal("the report or the table holds a probe")
	}
	var failed []string
	for _, c := range rep.Checks {
		if !c.Passed() {
			failed = append(failed, c.ID)
		}
	}
	if got, want := slices.Sorted(slices.Values(byChance(m, failed))), slices.Sorted(slices.Values(wantFailed)); !slices.Equal(got, want) {
		t.Fatalf("failed checks %q, want %q\n%s", got, want, out.String())
	}
	if wantCode := map[bool]int{true: 1, false: 0}[len(m.Fails) > 0]; code != wantCode || rep.Passed != (wantCode == 0) {
		t.Fatalf("exit %d, report passed %t; want %d", code, rep.Passed, wantCode)
	}
	for _, c := range rep.Checks {
		if c.ID == conformance.CheckProjection && m.Name == "refuses-multi-result-tool-messages" &&
			(len(c.Limits) != 1 || c.Limits[0].Family != gen.FamilyMultiResult || c.Limits[0].Count == 0 || !strings.Contains(c.Note, "refused: ")) {
			t.Fatalf("the projection row does not show the refusals: %+v", c)
		}
	}
	switch {
	case m.RunnerErr != nil:
		if rep.Conformance != nil {
			t.Fatalf("the report holds a seven-case report although Run returns %v", m.RunnerErr)
		}
	case rep.Conformance == nil:
		t.Fatal("the report holds no seven-case report")
	case !slices.Equal(rep.Conformance.Failed(), m.RunnerFails()):
		t.Fatalf("seven-case report fails %q, want %q", rep.Conformance.Failed(), m.RunnerFails())
	}
	mu.Lock()
	*killed++
	mu.Unlock()
}

// byChance drops from failed, for a mutant with a real data race or one
// the model catches by chance of its draw (ModelByChance), the model
// check: it catches such a mutant in some runs only, so it is not one of
// the checks the mutant must fail.
func byChance(m mutants.Mutant, failed []string) []string {
	if !m.Races && !m.ModelByChance {
		return failed
	}
	return slices.DeleteFunc(slices.Clone(failed), func(id string) bool { return id == conformance.CheckModel })
}
