package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/internal/testgc"
	"github.com/ds4context/adapterkit/reference"
)

// mutantEnv makes the test binary serve the reference adapter wrapped by
// the named mutant over the bridge, as a broken adapter process would.
const mutantEnv = "ADAPTERKIT_CLI_SERVE_MUTANT"

// exitingEnv makes the test binary run conform in process, with the
// arguments the variable holds (separated by the unit separator, U+001F), on a factory that exits
// the process with status 0.
const exitingEnv = "ADAPTERKIT_CLI_EXITING_FACTORY"

func TestMain(m *testing.M) {
	if name := os.Getenv(mutantEnv); name != "" {
		for _, mu := range mutants.Catalogue() {
			if mu.Name == name {
				if err := bridge.Serve(context.Background(), mu.Factory(reference.NewConformanceFactory()), os.Stdin, os.Stdout); err != nil {
					os.Exit(exitBroken)
				}
				os.Exit(exitPass)
			}
		}
		os.Exit(exitBroken)
	}
	if args := os.Getenv(exitingEnv); args != "" {
		// conform in process on a factory that exits the process.
		exits := conformance.NewFactory("exits", func(context.Context, conformance.Setup) (conformance.Instance, error) {
			os.Exit(exitPass)
			return conformance.Instance{}, nil
		})
		os.Exit(Run(context.Background(), strings.Split(args, "\x1f"), exits, os.Stdout, os.Stderr))
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(testgc.Run(m))
}

func runIt(t *testing.T, factory conformance.Factory, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, factory, &out, &errOut)
	return code, out.String(), errOut.String()
}

func readReport(t *testing.T, file string) conformance.RunReport {
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

func failedRows(out string) []string {
	var failed []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && (f[2] == "FAIL" || f[2] == "ERROR") {
			failed = append(failed, f[0])
		}
	}
	return failed
}

// stressEnv, set to 1, runs the long forms of this package's tests (the CI
// script sets it).
const stressEnv = "ADAPTERKIT_STRESS"

// long reports whether stressEnv asks for the long forms.
func long() bool { return os.Getenv(stressEnv) == "1" }

// A broken adapter process fails with exit status 1 and an explanation that
// names the check, its code and the rule — and never a probe; the report
// and JUnit file are written and agree with the exit status.
//
// By default the two mutants that fail extended checks run with
// --model-steps 0 --histories 2: the model check, which they fail too,
// then skips, and the failing model check's shrinking over a process (up
// to 400 adapter processes each) is left out; the projection check runs
// on two generated histories and the long one, which one mutant fails
// already; every other check of the catalogue runs over the process, and
// the other failures prove the face. The long form (ADAPTERKIT_STRESS=1)
// runs the model check and 20 histories as well and wants the model check
// failed. internal/mutants runs the CLI with a failing model check on its
// sample of mutants in every run.
func TestConformCatchesMutantProcesses(t *testing.T) {
	for _, tc := range []struct {
		mutant   string
		extended bool
		failed   []string
		code     string
	}{
		{"forwards-unsanitised-payload", false, []string{conformance.CasePrivacy, conformance.CheckInOrder}, "privacy-assertion-failed"},
		{"panics-in-identity", false, []string{conformance.CaseIdentity, conformance.CheckInOrder}, "identity-threw"},
		{"splits-parallel-batch", true, []string{conformance.CheckProjection, conformance.CheckModel}, "projection-assertion-failed"},
		{"leaks-probe-into-diagnostic", true, []string{conformance.CheckDiagnosticsPrivacy, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckModel}, "diagnostics-privacy-assertion-failed"},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			reportFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
			// A fixed seed: the model check's sequences are the same in every run.
			args := []string{"--extended=" + map[bool]string{true: "true", false: "false"}[tc.extended], "--seed", "407704132775", "--report", reportFile, "--junit", junitFile}
			if tc.extended && !long() {
				args = append(args, "--model-steps", "0", "--histories", "2")
				tc.failed = slices.DeleteFunc(slices.Clone(tc.failed), func(id string) bool { return id == conformance.CheckModel })
			}
			args = append(args, "--", "env", mutantEnv+"="+tc.mutant, os.Args[0])
			code, out, errOut := runIt(t, nil, args...)
			if code != exitFail {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitFail, out, errOut)
			}
			if got := failedRows(out); !slices.Equal(got, tc.failed) {
				t.Errorf("failed rows %q, want %q\n%s", got, tc.failed, out)
			}
			if tc.failed[0] == conformance.CheckProjection && !strings.Contains(out, "generated history seed ") {
				t.Errorf("the projection failure does not name its history's seed:\n%s", out)
			}
			if !strings.Contains(out, tc.code) || !strings.Contains(out, "rule:") || !strings.Contains(out, "expected:") {
				t.Errorf("no explanation with %s:\n%s", tc.code, out)
			}
			rep := readReport(t, reportFile)
			if rep.Passed {
				t.Error("the report says passed; the exit status says failed")
			}
			// The process names itself in its hello; the executable is env.
			if want := mutantNamed(t, tc.mutant).Factory(reference.NewConformanceFactory()).Name(); rep.FactoryName != want {
				t.Errorf("the report names the factory %q, want %q (the name of its hello)", rep.FactoryName, want)
			}
			x, _ := os.ReadFile(junitFile)
			var suites junitSuites
			if err := xml.Unmarshal(x, &suites); err != nil || suites.Failures+suites.Errors != len(tc.failed) {
				t.Errorf("JUnit: %v, %d failures and %d errors, want %d", err, suites.Failures, suites.Errors, len(tc.failed))
			}
			b, _ := os.ReadFile(reportFile)
			for _, text := range []string{out, errOut, string(x), string(b)} {
				if conformance.ContainsProbe([]byte(text)) {
					t.Errorf("output holds a probe")
				}
			}
		})
	}
}

// shutdownBlocks is the reference adapter whose Shutdown blocks from its
// second call on.
type shutdownBlocks struct {
	contract.Adapter
	release <-chan struct{}
	mu      sync.Mutex
	calls   int
}

func (s *shutdownBlocks) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if n > 1 {
		<-s.release
	}
	return s.Adapter.Shutdown(ctx)
}

// A Go adapter gets the command in process; a call that does not return
// fails its check, naming the method and the bound, and the report is
// still written, with the verdict the exit status gives.
func TestConformBoundsEveryCallInProcess(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	base := reference.NewConformanceFactory()
	f := conformance.NewFactory("blocking shutdown", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		if err == nil {
			inst.Adapter = &shutdownBlocks{Adapter: inst.Adapter, release: release}
		}
		return inst, err
	})
	reportFile := filepath.Join(t.TempDir(), "report.json")
	code, out, errOut := runIt(t, f, "--timeout", "300ms", "--histories", "2", "--report", reportFile)
	if code != exitFail || !strings.Contains(out, "Shutdown did not return within 300ms") {
		t.Fatalf("exit %d, want %d naming Shutdown\n%s%s", code, exitFail, out, errOut)
	}
	for _, id := range []string{conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckClosed} {
		if !slices.Contains(failedRows(out), id) {
			t.Errorf("%s did not fail:\n%s", id, out)
		}
	}
	if rep := readReport(t, reportFile); rep.Passed || rep.Conformance != nil {
		t.Errorf("report: passed %t, seven-case report %v; want failed and none (the final shutdown fails)", rep.Passed, rep.Conformance)
	}
}

func TestConformRequiredCapabilityFailsInsteadOfSkipping(t *testing.T) {
	code, out, _ := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CheckEmbeddingPort)
	if code != exitPass || !strings.Contains(out, "skipped: the adapter does not declare the embeddings capability") {
		t.Fatalf("not required: exit %d\n%s", code, out)
	}
	code, out, _ = runIt(t, reference.NewConformanceFactory(), "--check", conformance.CheckEmbeddingPort, "--require", contract.CapabilityEmbeddings)
	if code != exitFail || !slices.Equal(failedRows(out), []string{conformance.CheckEmbeddingPort}) {
		t.Fatalf("required: exit %d\n%s", code, out)
	}
	if code, _, errOut := runIt(t, reference.NewConformanceFactory(), "--require", "telepathy"); code != exitBroken || !strings.Contains(errOut, "telepathy") {
		t.Fatalf("unknown capability: exit %d, %q", code, errOut)
	}
}

// An unknown check id is a usage error, named as such, before anything
// runs.
func TestConformUnknownCheckIsAUsageError(t *testing.T) {
	code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--check", "identity,no-such-check")
	if code != exitBroken || out != "" || !strings.Contains(errOut, `--check: no check has the id "no-such-check"`) {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--exec", "'unbalanced"},
		{"--exec", "  "},
		{"--exec", "x", "--", "y"},
		{"--exec", filepath.Join(os.TempDir(), "no-such-adapter-command")},
	} {
		if code, _, errOut := runIt(t, reference.NewConformanceFactory(), args...); code != exitBroken || errOut == "" {
			t.Errorf("%q: exit %d with stderr %q, want %d and a message", args, code, errOut, exitBroken)
		}
	}
	if code, _, errOut := runIt(t, nil); code != exitBroken || !strings.Contains(errOut, "--exec") {
		t.Errorf("no factory and no command: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runIt(t, nil, "-h"); code != exitPass || !strings.Contains(errOut, conformance.CheckLocalKVHit) {
		t.Errorf("-h: exit %d, %q", code, errOut)
	}
}

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"node adapter.mjs", []string{"node", "adapter.mjs"}},
		{`  a   'b c'  "d \"e\"" f\ g ''`, []string{"a", "b c", `d "e"`, "f g", ""}},
		{`"a"'b'c`, []string{"abc"}},
		{"", nil},
	} {
		got, err := splitCommand(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`'a`, `"a`, `a\`} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q) accepted", bad)
		}
	}
}

func TestConformLeavesOutFamilies(t *testing.T) {
	reportFile := filepath.Join(t.TempDir(), "report.json")
	code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CheckProjection,
		"--leave-out", "multi-result,image", "--leave-out", "long-history", "--report", reportFile)
	if code != exitPass || !strings.Contains(out, "generated histories leave out: multi-result, image, long-history") ||
		!strings.Contains(out, "\nPASS with limits: multi-result, image, long-history — 1 of 1 checks passed") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if rep := readReport(t, reportFile); !slices.Equal(rep.LeftOut, []gen.Family{gen.FamilyMultiResult, gen.FamilyImage, gen.FamilyLongHistory}) {
		t.Fatalf("report leaves out %q", rep.LeftOut)
	}
	if code, _, errOut := runIt(t, reference.NewConformanceFactory(), "--leave-out", "telepathy"); code != exitBroken || !strings.Contains(errOut, "telepathy") {
		t.Fatalf("unknown family: exit %d, %q", code, errOut)
	}
}

// passingFiles writes a passing report and JUnit file, as an earlier run
// would have left them, and returns their names.
func passingFiles(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	reportFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	if code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CaseIdentity, "--report", reportFile, "--junit", junitFile); code != exitPass {
		t.Fatalf("the earlier run: exit %d\n%s%s", code, out, errOut)
	}
	if !readReport(t, reportFile).Passed {
		t.Fatal("the earlier run's report does not say passed")
	}
	return reportFile, junitFile
}

// readJUnit reads a JUnit file the command wrote.
func readJUnit(t *testing.T, file string) junitSuites {
	t.Helper()
	x, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(x, &suites); err != nil {
		t.Fatal(err)
	}
	return suites
}

// The result files never say more than the exit status: a run that exits 2
// writes passed false and says why, and one that could not start replaces
// an earlier passing report rather than leaving it.
func TestReportAgreesWithTheExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		problem string
	}{
		{"no instance created", []string{"--check", conformance.CheckProjection, "--histories", "0"}, "no check that ran created an adapter instance"},
		{"unknown check", []string{"--check", "identity,nosuch"}, `the run could not happen: --check: no check has the id "nosuch"`},
		{"bad flag after the files", []string{"--timeout", "soon"}, "the run could not happen: invalid value"},
		{"adapter command that does not start", []string{"--exec", filepath.Join(t.TempDir(), "no-such-adapter")}, "the factory created no adapter instance"},
		{"factory that fails", []string{"--check", conformance.CaseIdentity, "--", "false"}, "the factory created no adapter instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reportFile, junitFile := passingFiles(t)
			args := append([]string{"--report", reportFile, "--junit", junitFile}, tc.args...)
			code, out, errOut := runIt(t, reference.NewConformanceFactory(), args...)
			if code != exitBroken {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitBroken, out, errOut)
			}
			rep := readReport(t, reportFile)
			if rep.Passed || !slices.ContainsFunc(rep.Problems, func(p string) bool { return strings.Contains(p, tc.problem) }) {
				t.Errorf("report: passed %t, problems %q; want not passed, with a problem saying %q", rep.Passed, rep.Problems, tc.problem)
			}
			if suites := readJUnit(t, junitFile); suites.Errors == 0 {
				t.Errorf("JUnit: %d tests, no error; want the problem as an error", suites.Tests)
			}
			if strings.Contains(out, "PASS") {
				t.Errorf("the table says PASS:\n%s", out)
			}
		})
	}
}

// A result file that cannot be written is found before any check runs.
func TestUnwritableResultFileStopsBeforeTheRun(t *testing.T) {
	reportFile, _ := passingFiles(t)
	code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--report", reportFile, "--junit", filepath.Join(t.TempDir(), "no-such-dir", "junit.xml"))
	if code != exitBroken || out != "" || !strings.Contains(errOut, "junit.xml") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q; want exit 2 before any check, naming the file", code, out, errOut)
	}
	if rep := readReport(t, reportFile); rep.Passed {
		t.Error("the earlier passing report is still in place")
	}
}

// An in-process factory that exits the process ends the run before conform
// can write its results: what it leaves says the run did not finish, never
// the earlier pass. (--exec isolates such an adapter in its own process.)
func TestFactoryThatExitsLeavesNoPass(t *testing.T) {
	reportFile, junitFile := passingFiles(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), exitingEnv+"="+strings.Join([]string{"--check", conformance.CaseIdentity, "--report", reportFile, "--junit", junitFile}, "\x1f"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the exiting run: %v\n%s", err, out)
	}
	rep := readReport(t, reportFile)
	if rep.Passed || len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0], "the run has not finished") {
		t.Errorf("report after a factory exited: passed %t, problems %q", rep.Passed, rep.Problems)
	}
	if suites := readJUnit(t, junitFile); suites.Errors != 1 || suites.Tests != 0 {
		t.Errorf("JUnit after a factory exited: %d tests, %d errors; want none and one", suites.Tests, suites.Errors)
	}
}

// mutantNamed returns the mutant of that name.
func mutantNamed(t *testing.T, name string) mutants.Mutant {
	t.Helper()
	for _, mu := range mutants.Catalogue() {
		if mu.Name == name {
			return mu
		}
	}
	t.Fatalf("no mutant is named %q", name)
	return mutants.Mutant{}
}

// An adapter built on the TypeScript kit's privacy engine passes with the
// limit member-name-floor in the summary line, the table, the JSON report
// and the JUnit properties; --strict-privacy makes privacy-engine fail it.
func TestConformShowsThePrivacyLimit(t *testing.T) {
	f := mutantNamed(t, "upstream-privacy-engine").Factory(reference.NewConformanceFactory())
	dir := t.TempDir()
	reportFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	code, out, errOut := runIt(t, f, "--check", conformance.CheckPrivacyEngine, "--seed", "5", "--report", reportFile, "--junit", junitFile)
	if code != exitPass || !strings.Contains(out, "\nPASS with limits: member-name-floor — 1 of 1 checks passed (") ||
		!regexp.MustCompile(`\nlimit: member-name-floor — [1-9]\d* payloads, the marker floor counts string values only`).MatchString(out) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	rep := readReport(t, reportFile)
	if len(rep.Limits) != 1 || rep.Limits[0].Deviation != conformance.LimitMemberNameFloor || rep.Limits[0].Family != "" || rep.Limits[0].Count == 0 {
		t.Fatalf("report limits %+v", rep.Limits)
	}
	junit, err := os.ReadFile(junitFile)
	if err != nil || !strings.Contains(string(junit), `<property name="limits" value="member-name-floor"></property>`) ||
		!strings.Contains(string(junit), `<property name="limit.member-name-floor" value="`) {
		t.Fatalf("junit (%v):\n%s", err, junit)
	}
	code, out, _ = runIt(t, f, "--check", conformance.CheckPrivacyEngine, "--seed", "5", "--strict-privacy")
	if code != exitFail || !slices.Equal(failedRows(out), []string{conformance.CheckPrivacyEngine}) || !strings.Contains(out, "Go kit only") || strings.Contains(out, "limit:") {
		t.Fatalf("--strict-privacy: exit %d\n%s", code, out)
	}
	if code, out, _ := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CheckPrivacyEngine, "--strict-privacy"); code != exitPass || strings.Contains(out, "limit") {
		t.Fatalf("--strict-privacy on the reference adapter: exit %d\n%s", code, out)
	}
}

// The limits of a run are part of its verdict: in the summary line, the
// JSON report and the JUnit properties; a required family makes one fail.
func TestConformShowsLimitsInTheVerdict(t *testing.T) {
	base := reference.NewConformanceFactory()
	refusing := conformance.NewFactory("refusing", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if slices.Contains(gen.FamiliesOf(setup.Fixture.Messages), gen.FamilyMultiResult) {
			return conformance.Instance{}, conformance.Unrepresentable(gen.FamilyMultiResult, "tool message with two results")
		}
		inst, err := base.Create(ctx, setup)
		inst.Limits = []gen.Family{gen.FamilyImage}
		return inst, err
	})
	dir := t.TempDir()
	reportFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	code, out, errOut := runIt(t, refusing, "--check", conformance.CheckProjection, "--seed", "5", "--report", reportFile, "--junit", junitFile)
	if code != exitPass || !strings.Contains(out, "\nPASS with limits: multi-result, image — 1 of 1 checks passed (") ||
		!strings.Contains(out, "limit: image — declared by the instance\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	rep := readReport(t, reportFile)
	if len(rep.Limits) != 2 || rep.Limits[0].Family != gen.FamilyMultiResult || rep.Limits[0].Count == 0 || rep.Limits[0].Reason != "refused: tool message with two results" {
		t.Fatalf("report limits %+v", rep.Limits)
	}
	junit, err := os.ReadFile(junitFile)
	if err != nil || !strings.Contains(string(junit), `<property name="limits" value="multi-result, image"></property>`) ||
		!strings.Contains(string(junit), `<property name="limit.image" value="declared by the instance"></property>`) {
		t.Fatalf("junit (%v):\n%s", err, junit)
	}
	code, out, _ = runIt(t, refusing, "--check", conformance.CheckProjection, "--seed", "5", "--require-families", "image")
	if code != exitFail || !slices.Equal(failedRows(out), []string{conformance.CheckProjection}) || !strings.Contains(out, "a required family is no limit") {
		t.Fatalf("image required: exit %d\n%s", code, out)
	}
	if code, _, errOut := runIt(t, refusing, "--require-families", "telepathy"); code != exitBroken || !strings.Contains(errOut, "telepathy") {
		t.Fatalf("unknown family: exit %d, %q", code, errOut)
	}
}

// A failed check that draws random input prints the command that reruns it
// alone with its seed; pasted, that command fails the same way with the
// same seed.
func TestConformPrintsTheRerunOfASeededFailure(t *testing.T) {
	t.Parallel()
	f := mutantNamed(t, "case-sensitive-markers").Factory(reference.NewConformanceFactory())
	code, out, errOut := runIt(t, f, "--check", conformance.CheckPrivacyProbes+","+conformance.CaseIdentity, "--report", filepath.Join(t.TempDir(), "r.json"))
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if _, after, ok := strings.Cut(l, "rerun:    "); ok {
			line = after
		}
	}
	if code != exitFail || !strings.HasPrefix(line, "conform ") || !strings.HasSuffix(line, " --check "+conformance.CheckPrivacyProbes+" --seed "+line[len(line)-18:]) {
		t.Fatalf("exit %d, rerun line %q\n%s%s", code, line, out, errOut)
	}
	words, err := splitCommand(strings.TrimPrefix(line, "conform "))
	if err != nil {
		t.Fatal(err)
	}
	code2, out2, errOut2 := runIt(t, f, words...)
	if code2 != exitFail || !strings.Contains(out2, "rerun:    "+line+"\n") || len(failedRows(out2)) != 1 {
		t.Fatalf("rerun %q: exit %d, want the same failure and seed\n%s%s", words, code2, out2, errOut2)
	}
}

// A count, bound or seed out of its range is a usage error, before any
// check runs, and the report says the run did not pass: never a PASS with
// the checks it would skip skipped.
func TestNumericFlagsOutOfRangeAreUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--histories", "-1"}, "--histories: -1 is not a count"},
		{[]string{"--model-steps", "-5"}, "--model-steps: -5 is not a count"},
		{[]string{"--histories", "-1", "--model-steps", "-5"}, "--histories: -1 is not a count"},
		{[]string{"--timeout", "0s"}, "--timeout: 0s is not a bound"},
		{[]string{"--timeout", "-3s"}, "--timeout: -3s is not a bound"},
		{[]string{"--seed", "0"}, "--seed: 0 is no seed"},
		{[]string{"--seed", "-1"}, `invalid value "-1" for flag -seed`},
		{[]string{"--seed", "7", "--shard", "5/4"}, `--shard: "5/4" is no shard`},
		{[]string{"--seed", "7", "--shard", "0/4"}, `--shard: "0/4" is no shard`},
		{[]string{"--seed", "7", "--shard", "2"}, `--shard: "2" is no shard`},
		{[]string{"--shard", "2/4"}, "--shard needs --seed"},
	} {
		reportFile := filepath.Join(t.TempDir(), "report.json")
		args := append([]string{"--check", conformance.CaseIdentity, "--report", reportFile}, tc.args...)
		code, out, errOut := runIt(t, reference.NewConformanceFactory(), args...)
		if code != exitBroken || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q\nwant exit 2 before any check, saying %q", tc.args, code, out, errOut, tc.want)
			continue
		}
		if rep := readReport(t, reportFile); rep.Passed || len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], tc.want) {
			t.Errorf("%q: report passed %t, problems %q; want not passed, saying %q", tc.args, rep.Passed, rep.Problems, tc.want)
		}
	}
	// 0 still skips what it counts, and says so.
	code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CheckModel+","+conformance.CaseIdentity, "--model-steps", "0", "--seed", "0x2a", "--timeout", "1m")
	if code != exitPass || !strings.Contains(out, "no model steps were asked for") {
		t.Errorf("--model-steps 0: exit %d\n%s%s", code, out, errOut)
	}
	// The help says what each numeric flag takes.
	_, _, help := runIt(t, nil, "-h")
	for _, want := range []string{"0 skips it, a negative count is a usage error (default 20)", "0 skips it, a negative count is a usage error (default 1000)", "must be positive (default 10s)", "a failure never names 0, which is a usage error"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h does not say %q:\n%s", want, help)
		}
	}
}

// --report and --junit naming one file is a usage error, however the two
// names reach it; the file then holds the report, not passed, and no XML.
func TestReportAndJUnitMustBeTwoFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "existing.json")
	if err := os.WriteFile(existing, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{ // name -> target
		"hard.json":     "",
		"soft.json":     existing,
		"dangling.json": filepath.Join(dir, "not-yet.json"),
		"subdir":        sub,
	}
	for name, target := range links {
		var err error
		if target == "" {
			err = os.Link(existing, filepath.Join(dir, name))
		} else {
			err = os.Symlink(target, filepath.Join(dir, name))
		}
		if err != nil {
			t.Skipf("cannot make links here: %v", err)
		}
	}
	t.Chdir(dir)
	for _, tc := range []struct{ name, report, junit string }{
		{"one path", "r.json", "r.json"},
		{"relative and absolute", "r.json", filepath.Join(dir, "r.json")},
		{"unclean", "sub/../r.json", "./r.json"},
		{"hard link", "existing.json", "hard.json"},
		{"symbolic link", "soft.json", "existing.json"},
		{"link to a file not yet there", "dangling.json", "not-yet.json"},
		{"through a linked folder", "subdir/x.json", "sub/x.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CaseIdentity, "--report", tc.report, "--junit", tc.junit)
			if code != exitBroken || out != "" || !strings.Contains(errOut, "--report and --junit name one file") {
				t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit 2 before any check, saying both name one file", code, out, errOut)
			}
			if rep := readReport(t, tc.report); rep.Passed || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "name one file") {
				t.Errorf("the file holds passed %t, problems %q; want the report, not passed, saying why", rep.Passed, rep.Problems)
			}
		})
	}
	// So with a bad flag after them: still the report, never XML.
	code, _, errOut := runIt(t, reference.NewConformanceFactory(), "--report", "b.json", "--junit", "b.json", "--no-such-flag")
	if rep := readReport(t, "b.json"); code != exitBroken || rep.Passed || !strings.Contains(errOut, "name one file") {
		t.Errorf("a bad flag after one file: exit %d, passed %t\n%s", code, rep.Passed, errOut)
	}
	// Two files in one folder are two files.
	if code, out, errOut := runIt(t, reference.NewConformanceFactory(), "--check", conformance.CaseIdentity, "--report", "a.json", "--junit", "a.xml"); code != exitPass {
		t.Errorf("two files: exit %d\n%s%s", code, out, errOut)
	}
	readJUnit(t, "a.xml")
	readReport(t, "a.json")
}

// A shard's seeded failure names the shard in its rerun command, in the
// table and in the report, and the command reproduces the failure.
func TestShardRerunNamesTheShard(t *testing.T) {
	t.Parallel()
	f := mutantNamed(t, "case-sensitive-markers").Factory(reference.NewConformanceFactory())
	reportFile := filepath.Join(t.TempDir(), "r.json")
	code, out, errOut := runIt(t, f, "--check", conformance.CheckPrivacyProbes+","+conformance.CaseIdentity, "--seed", "7", "--shard", "1/3", "--report", reportFile)
	want := "conform --shard 1/3 --check " + conformance.CheckPrivacyProbes + " --seed 0x0000000000000007"
	if code != exitFail || !strings.Contains(out, "rerun:    "+want+"\n") {
		t.Fatalf("exit %d, want the rerun %q\n%s%s", code, want, out, errOut)
	}
	rep := readReport(t, reportFile)
	if rep.Campaign == nil || rep.Campaign.Shard != 1 || rep.Campaign.Shards != 3 || rep.Campaign.Seed != 7 {
		t.Fatalf("campaign %+v", rep.Campaign)
	}
	for _, c := range rep.Checks {
		if c.ID == conformance.CheckPrivacyProbes && (len(c.Rerun) != 1 || c.Rerun[0] != want) {
			t.Fatalf("the report's rerun %q, want %q", c.Rerun, want)
		}
	}
	words, err := splitCommand(strings.TrimPrefix(want, "conform "))
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runIt(t, f, words...); code != exitFail || !strings.Contains(out, "rerun:    "+want+"\n") {
		t.Fatalf("the rerun: exit %d\n%s%s", code, out, errOut)
	}
	// In another shard the check is shard 1's: the shard runs nothing of it.
	code, out, errOut = runIt(t, f, "--check", conformance.CheckPrivacyProbes+","+conformance.CheckModel, "--model-steps", "50", "--seed", "7", "--shard", "2/3")
	if code != exitPass || strings.Contains(out, conformance.CheckPrivacyProbes) {
		t.Fatalf("shard 2/3: exit %d\n%s%s", code, out, errOut)
	}
}

// --no-shrink reports the first failing generated history as it failed:
// the same failure, without the shrinking a run without the flag does.
func TestNoShrinkLeavesTheFailingHistoryAsItFailed(t *testing.T) {
	t.Parallel()
	f := mutantNamed(t, "drops-a-message").Factory(reference.NewConformanceFactory())
	args := []string{"--check", conformance.CheckProjection, "--seed", "7", "--histories", "3"}
	code, out, errOut := runIt(t, f, args...)
	codeNo, outNo, errOutNo := runIt(t, f, append(args, "--no-shrink")...)
	if code != exitFail || codeNo != exitFail {
		t.Fatalf("exit %d and with --no-shrink %d, want both %d\n%s%s%s%s", code, codeNo, exitFail, out, errOut, outNo, errOutNo)
	}
	if !strings.Contains(out, ", shrunk from ") {
		t.Fatalf("without --no-shrink the failure is not shrunk:\n%s", out)
	}
	if strings.Contains(outNo, "shrunk") {
		t.Fatalf("with --no-shrink the failure is shrunk:\n%s", outNo)
	}
}
