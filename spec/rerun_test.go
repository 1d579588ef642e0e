package spec_test

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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/testgc"
	"github.com/ds4context/adapterkit/spec"
	"github.com/ds4context/adapterkit/spec/testdata/rerun/broken"
)

// The broken adapter's suite in a package with a Ginkgo suite of its own
// (spec.Describe), and in one that has none (spec.Run).
const (
	rerunDir = "./spec/testdata/rerun"
	plainDir = "./spec/testdata/rerun/plain"
)

// goDeadline bounds one go command of these tests on a loaded machine.
const goDeadline = 5 * time.Minute

// childEnv is the environment of the broken suites' processes: the suites
// run, and rapid writes no fail file and shrinks for a tenth of a second
// at most (the tests look at which specs fail, not at how far they shrink).
func childEnv(env []string) []string {
	return append(append(os.Environ(), broken.ChildEnv+"=1", "RAPID_NOFAILFILE=1", "RAPID_SHRINKTIME=100ms"), env...)
}

// goCommand is the go command in the module's root with the rerun child's
// environment and env, bounded by goDeadline.
func goCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), goDeadline)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.WaitDelay = time.Second
	cmd.Dir = ".."
	cmd.Env = childEnv(env)
	return cmd
}

// suiteBinaries are the test binaries of the two broken suites, built once
// by one go command for the tests that run the suites themselves (go test
// builds a package's test binary and runs it in the package's directory,
// as these tests then do); the pasted commands run the go command as
// printed. binDir is removed when the tests end.
var (
	binDir        string
	suiteBinaries = sync.OnceValues(func() (map[string]string, error) {
		dir, err := os.MkdirTemp("", "adapterkit-rerun-")
		if err != nil {
			return nil, err
		}
		binDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), goDeadline)
		defer cancel()
		// Without symbols and DWARF, as go test links the binary it runs.
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-ldflags=-s -w", "-o", dir+string(filepath.Separator), rerunDir, plainDir)
		cmd.WaitDelay = time.Second
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go test -c: %v\n%s", err, out)
		}
		return map[string]string{rerunDir: filepath.Join(dir, "rerun.test"), plainDir: filepath.Join(dir, "plain.test")}, nil
	})
)

func TestMain(m *testing.M) {
	code := testgc.Run(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// suiteCommand is the test binary of the suite in dir (rerunDir or
// plainDir), run in dir with the rerun child's environment and args,
// bounded by goDeadline.
func suiteCommand(t *testing.T, env []string, dir string, args ...string) *exec.Cmd {
	t.Helper()
	bins, err := suiteBinaries()
	if err != nil {
		t.Fatal(err)
	}
	bin, ok := bins[dir]
	if !ok {
		t.Fatalf("no broken suite in %q", dir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), goDeadline)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = time.Second
	cmd.Dir = filepath.Join("..", filepath.FromSlash(dir))
	cmd.Env = childEnv(env)
	return cmd
}

// runReport runs cmd, built by build with REPORT in its arguments replaced
// by a temporary file, and returns the JSON report written there and the
// command's output.
func runReport(t *testing.T, build func(args ...string) *exec.Cmd, args ...string) (types.Report, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.json")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "REPORT", file)
	}
	cmd := build(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%q: %v", cmd.Args, err)
	}
	b, err := os.ReadFile(file)
	var rs []types.Report
	if err == nil {
		err = json.Unmarshal(b, &rs)
	}
	if err != nil || len(rs) != 1 {
		t.Fatalf("%q wrote no report (%v):\n%s", cmd.Args, err, out.String())
	}
	return rs[0], out.String()
}

// runGo runs the go command with env and args (REPORT in args names the
// JSON report's file) and returns the report's specs and the output.
func runGo(t *testing.T, env []string, args ...string) ([]types.SpecReport, string) {
	t.Helper()
	r, out := runReport(t, func(args ...string) *exec.Cmd { return goCommand(t, env, args...) }, args...)
	return r.SpecReports, out
}

// words splits a printed command as a POSIX shell does for the quoting the
// suite prints (single quotes), and returns its leading NAME=VALUE
// assignments apart.
func words(t *testing.T, line string) (env, argv []string) {
	t.Helper()
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unbalanced quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			in, quoted = true, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			in = true
		case c == ' ':
			if in {
				argv = append(argv, cur.String())
				cur.Reset()
				in, quoted = false, false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in || quoted {
		argv = append(argv, cur.String())
	}
	for len(argv) > 0 && strings.Contains(argv[0], "=") && !strings.HasPrefix(argv[0], "-") {
		env, argv = append(env, argv[0]), argv[1:]
	}
	return env, argv
}

// selected returns the full texts of the specs a dry run would run.
func selected(rs []types.SpecReport) []string {
	var out []string
	for _, r := range rs {
		if r.LeafNodeType == types.NodeTypeIt && r.State == types.SpecStatePassed {
			out = append(out, r.FullText())
		}
	}
	return out
}

// failures runs the broken suite in dir, as go test runs the test that
// runs it, and returns its failed specs by check id and its report. By
// default the model spec is filtered out: on the broken adapter it
// shrinks a failing sequence for seconds, and the property spec and
// privacy-probes already stand for the seeded forms it prints;
// ADAPTERKIT_STRESS=1 runs it too.
func failures(t *testing.T, dir, test string) (map[string]types.SpecReport, types.Report) {
	t.Helper()
	args := []string{"-test.run=^" + test + "$", "-ginkgo.no-color", "-ginkgo.json-report=REPORT"}
	if !stressed() {
		args = append(args, "-ginkgo.label-filter=!"+conformance.CheckModel)
	}
	report, _ := runReport(t, func(args ...string) *exec.Cmd { return suiteCommand(t, nil, dir, args...) }, args...)
	failed := map[string]types.SpecReport{}
	for _, r := range report.SpecReports {
		if r.State.Is(types.SpecStateFailureStates) {
			id, _, _ := strings.Cut(r.LeafNodeText, ":")
			failed[id] = r
		}
	}
	return failed, report
}

// rerunCommands returns the commands and the label a failure prints.
func rerunCommands(msg string) (commands []string, label string) {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if l == "rerun alone:" {
			for _, c := range lines[i+1:] {
				if !strings.HasPrefix(c, "  ") {
					break
				}
				commands = append(commands, strings.TrimPrefix(c, "  "))
			}
		}
		if rest, ok := strings.CutPrefix(l, "this check in every embedding: --label-filter="); ok {
			label = rest
		}
	}
	return commands, label
}

// pasteDry runs a printed command as a dry run and requires it to select
// exactly the spec of r.
func pasteDry(t *testing.T, id, c string, r types.SpecReport) {
	t.Helper()
	env, argv := words(t, c)
	switch {
	case len(argv) > 2 && argv[0] == "go" && argv[1] == "test":
		argv = append(argv[1:], "-ginkgo.dry-run", "-ginkgo.json-report=REPORT")
	case len(argv) > 3 && argv[0] == "go" && argv[1] == "run" && argv[2] == "github.com/onsi/ginkgo/v2/ginkgo":
		dir := argv[len(argv)-1]
		argv = append(append(argv[1:len(argv)-1], "--dry-run", "--no-color", "--json-report=REPORT"), dir)
	default:
		t.Errorf("%s: unexpected command %q", id, c)
		return
	}
	if got, _ := runGo(t, env, argv...); len(selected(got)) != 1 || selected(got)[0] != r.FullText() {
		t.Errorf("%s: %q selects %q, want exactly %q", id, c, selected(got), r.FullText())
	}
}

// binaryArgs returns the package directory a printed command names and
// the arguments its tool runs that package's test binary with, in that
// directory: go test DIR -run P FLAGS runs it with -test.run=P and the
// Ginkgo flags FLAGS, the Ginkgo CLI's ginkgo --focus=F DIR with
// -ginkgo.focus=F. A command of any other shape, or with any other flag, is
// an error: only the forms the suite prints are translated.
func binaryArgs(t *testing.T, c string) (env []string, dir string, args []string, err error) {
	t.Helper()
	env, argv := words(t, c)
	switch {
	case len(argv) > 2 && argv[0] == "go" && argv[1] == "test":
		dir = argv[2]
		for i := 3; i < len(argv); i++ {
			switch a := argv[i]; {
			case a == "-run" && i+1 < len(argv):
				i++
				args = append(args, "-test.run="+argv[i])
			case strings.HasPrefix(a, "-ginkgo.focus="):
				args = append(args, a)
			default:
				return nil, "", nil, fmt.Errorf("go test flag %q is not one the suite prints", a)
			}
		}
	case len(argv) > 3 && argv[0] == "go" && argv[1] == "run" && argv[2] == "github.com/onsi/ginkgo/v2/ginkgo":
		dir = argv[len(argv)-1]
		for _, a := range argv[3 : len(argv)-1] {
			f, ok := strings.CutPrefix(a, "--focus=")
			if !ok {
				return nil, "", nil, fmt.Errorf("ginkgo flag %q is not one the suite prints", a)
			}
			args = append(args, "-ginkgo.focus="+f)
		}
	default:
		return nil, "", nil, errors.New("neither go test nor the Ginkgo CLI")
	}
	return env, dir, args, nil
}

// runDry runs a printed command as its tool (go test or the Ginkgo CLI)
// runs the suite's test binary, as a dry run, and requires it to select
// exactly the spec of r.
func runDry(t *testing.T, id, c string, r types.SpecReport) {
	t.Helper()
	env, dir, args, err := binaryArgs(t, c)
	if err != nil {
		t.Errorf("%s: %q: %v", id, c, err)
		return
	}
	args = append(args, "-ginkgo.dry-run", "-ginkgo.no-color", "-ginkgo.json-report=REPORT")
	got, _ := runReport(t, func(args ...string) *exec.Cmd { return suiteCommand(t, env, dir, args...) }, args...)
	if len(selected(got.SpecReports)) != 1 || selected(got.SpecReports)[0] != r.FullText() {
		t.Errorf("%s: %q selects %q, want exactly %q", id, c, selected(got.SpecReports), r.FullText())
	}
}

// focusOf returns the focus pattern a printed command hands Ginkgo.
func focusOf(t *testing.T, c string) string {
	t.Helper()
	_, argv := words(t, c)
	for _, a := range argv {
		for _, p := range []string{"-ginkgo.focus=", "--focus="} {
			if f, ok := strings.CutPrefix(a, p); ok {
				return f
			}
		}
	}
	t.Errorf("%q hands Ginkgo no focus", c)
	return ""
}

// focusSelects returns the full texts of the specs of report that focus
// selects, matched as Ginkgo matches it: against the suite's description,
// a space and the spec's full text.
func focusSelects(t *testing.T, focus string, report types.Report) []string {
	t.Helper()
	re, err := regexp.Compile(focus)
	if err != nil {
		t.Errorf("focus %q: %v", focus, err)
		return nil
	}
	var out []string
	for _, r := range report.SpecReports {
		if r.LeafNodeType == types.NodeTypeIt && re.MatchString(report.SuiteDescription+" "+r.FullText()) {
			out = append(out, r.FullText())
		}
	}
	return out
}

// labelSelects returns the full texts of the specs of report that the
// label filter selects.
func labelSelects(t *testing.T, filter string, report types.Report) []string {
	t.Helper()
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		t.Errorf("label filter %q: %v", filter, err)
		return nil
	}
	var out []string
	for _, r := range report.SpecReports {
		if r.LeafNodeType == types.NodeTypeIt && match(r.Labels()) {
			out = append(out, r.FullText())
		}
	}
	return out
}

// kitSeed is a seed of the kit as its texts write it (16 hex digits).
var kitSeed = regexp.MustCompile(`\bseed (0x[0-9a-f]{16})\b`)

// checkEnv requires the environment a command sets for a check: rapid's
// seed for the property spec, the kit's seed for a check that draws from
// one (the very seed its failure names, if it names one), nothing
// otherwise.
func checkEnv(t *testing.T, id, c string, r types.SpecReport) {
	t.Helper()
	env, _ := words(t, c)
	want := ""
	switch id {
	case conformance.CheckProjection:
		want = "RAPID_SEED="
	case conformance.CheckPrivacyProbes, conformance.CheckPrivacyEngine, conformance.CheckModel:
		want = spec.SeedEnv + "=0x"
		if m := kitSeed.FindStringSubmatch(r.Failure.Message); m != nil {
			want = spec.SeedEnv + "=" + m[1]
		}
	}
	if (want == "" && len(env) != 0) || (want != "" && (len(env) != 1 || !strings.HasPrefix(env[0], want))) {
		t.Errorf("%s: %q sets %q, want %q", id, c, env, want)
	}
}

// checkSelection requires, without running a command, that each command
// and the label of every failure of report select exactly its spec, its
// focus matched as Ginkgo matches it and its label as Ginkgo filters.
func checkSelection(t *testing.T, failed map[string]types.SpecReport, report types.Report, label bool) {
	t.Helper()
	for id, r := range failed {
		commands, l := rerunCommands(r.Failure.Message)
		for _, c := range commands {
			checkEnv(t, id, c, r)
			if got := focusSelects(t, focusOf(t, c), report); len(got) != 1 || got[0] != r.FullText() {
				t.Errorf("%s: the focus of %q selects %q, want exactly %q", id, c, got, r.FullText())
			}
		}
		if !label {
			continue
		}
		if l != "'"+id+"'" {
			t.Errorf("%s: the label hint is %s, want the check's own label %q", id, l, id)
			continue
		}
		if got := labelSelects(t, id, report); len(got) != 1 || got[0] != r.FullText() {
			t.Errorf("%s: --label-filter=%s selects %q, want exactly %q", id, l, got, r.FullText())
		}
	}
}

// stressed reports whether the long forms of the tests run
// (ADAPTERKIT_STRESS=1, as .ci/run sets it).
func stressed() bool { return os.Getenv("ADAPTERKIT_STRESS") == "1" }

// Every command a failure of a Describe package prints, pasted as it is in
// the module's root, selects exactly the spec that failed — also when the
// suite is nested in the adapter author's own labelled container: a go test
// command narrowed to the suite's test, and a Ginkgo CLI command; a seeded
// check's and the property spec's carry their seed. The label it names is
// the kit's own, and selects the check in every embedding: here, the one.
//
// By default every failure's commands and label are checked without
// running them — each focus, matched as Ginkgo matches it, and each label,
// filtered as Ginkgo filters, selects exactly its spec, and the go test
// command's focus and environment are the Ginkgo command's — and the
// commands of one check of each form (no seed, rapid's seed, the kit's
// seed) and the lifecycle label are run as go test and the Ginkgo CLI run
// the suite: its test binary, in its directory, with the flags translated
// (TestPrintedRerunCommandOfARunPackage runs one so, for real, and pastes
// it through the go command in the long form). ADAPTERKIT_STRESS=1 pastes
// every command of every failure through the go command and the Ginkgo
// CLI, the model spec's included, and runs the label filter through go
// test.
func TestPrintedRerunCommandsSelectExactlyTheFailedSpec(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command and the Ginkgo CLI")
	}
	failed, report := failures(t, rerunDir, "TestRerunSuite")
	if msg := failed[conformance.CaseLifecycle].Failure.Message; !strings.Contains(msg, "Shutdown did not return within 300ms") {
		t.Errorf("the lifecycle failure does not name the blocked call and its bound:\n%s", msg)
	}
	// The checks sampled below: no seed, rapid's seed, the kit's seed, the label.
	for _, id := range []string{conformance.CaseCanonicalHistory, conformance.CheckProjection, conformance.CheckPrivacyProbes, conformance.CaseLifecycle} {
		if _, ok := failed[id]; !ok {
			t.Fatalf("the broken adapter did not fail %s; failed: %v", id, keys(failed))
		}
	}
	for id, r := range failed {
		commands, _ := rerunCommands(r.Failure.Message)
		if len(commands) != 2 || !strings.Contains(commands[0], "go test "+rerunDir+" -run '^TestRerunSuite$' ") ||
			!strings.Contains(commands[1], "go run github.com/onsi/ginkgo/v2/ginkgo ") || !strings.HasSuffix(commands[1], " "+rerunDir) {
			t.Errorf("%s: commands %q, want a go test narrowed to TestRerunSuite and a Ginkgo one:\n%s", id, commands, r.Failure.Message)
			delete(failed, id)
			continue
		}
		goEnv, _ := words(t, commands[0])
		ginkgoEnv, _ := words(t, commands[1])
		if focusOf(t, commands[0]) != focusOf(t, commands[1]) || strings.Join(goEnv, " ") != strings.Join(ginkgoEnv, " ") {
			t.Errorf("%s: the go test command and the Ginkgo one differ in focus or environment: %q", id, commands)
		}
	}
	checkSelection(t, failed, report, true)
	for _, id := range []string{conformance.CaseCanonicalHistory, conformance.CheckProjection, conformance.CheckPrivacyProbes} {
		r, ok := failed[id]
		if !ok {
			continue
		}
		commands, _ := rerunCommands(r.Failure.Message)
		for _, c := range commands {
			runDry(t, id, c, r)
		}
	}
	got, _ := runReport(t, func(args ...string) *exec.Cmd { return suiteCommand(t, nil, rerunDir, args...) },
		"-ginkgo.label-filter="+conformance.CaseLifecycle, "-ginkgo.dry-run", "-ginkgo.json-report=REPORT")
	if len(selected(got.SpecReports)) != 1 || selected(got.SpecReports)[0] != failed[conformance.CaseLifecycle].FullText() {
		t.Errorf("--label-filter=%s selects %q", conformance.CaseLifecycle, selected(got.SpecReports))
	}
	if !stressed() {
		return
	}
	for id, r := range failed {
		commands, _ := rerunCommands(r.Failure.Message)
		for _, c := range commands {
			pasteDry(t, id, c, r)
		}
	}
	rs, _ := runGo(t, nil, "test", rerunDir, "-ginkgo.label-filter="+conformance.CaseLifecycle, "-ginkgo.dry-run", "-ginkgo.json-report=REPORT")
	if len(selected(rs)) != 1 || selected(rs)[0] != failed[conformance.CaseLifecycle].FullText() {
		t.Errorf("go test --label-filter=%s selects %q", conformance.CaseLifecycle, selected(rs))
	}
}

// A failure of a spec.Run package prints one command, go test narrowed to
// the test that runs the suite (the Ginkgo CLI would hand its focus to no
// test file there and run every spec); pasted, it selects exactly the
// failed spec and no other test, and a seeded check's reproduces the
// failure with the same seed.
//
// By default every failure's command is checked without running it (its
// focus selects exactly its spec, as Ginkgo matches it), canonical-history's
// is run dry as go test runs the suite (its test binary, in its directory,
// with the flags translated), and privacy-probes' is run so, for real.
// ADAPTERKIT_STRESS=1 pastes privacy-probes' through the go command, for
// real, and every other failure's command as a dry run.
func TestPrintedRerunCommandOfARunPackage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	failed, report := failures(t, plainDir, "TestConformance")
	for _, id := range []string{conformance.CaseCanonicalHistory, conformance.CheckPrivacyProbes} {
		if _, ok := failed[id]; !ok {
			t.Fatalf("the broken adapter did not fail %s; failed: %v", id, keys(failed))
		}
	}
	for id, r := range failed {
		commands, _ := rerunCommands(r.Failure.Message)
		if len(commands) != 1 || !strings.Contains(commands[0], "go test "+plainDir+" -run '^TestConformance$' ") {
			t.Errorf("%s: commands %q, want only go test narrowed to TestConformance:\n%s", id, commands, r.Failure.Message)
			delete(failed, id)
		}
	}
	checkSelection(t, failed, report, false)
	if r, ok := failed[conformance.CaseCanonicalHistory]; ok {
		commands, _ := rerunCommands(r.Failure.Message)
		runDry(t, conformance.CaseCanonicalHistory, commands[0], r)
	}
	if r, ok := failed[conformance.CheckPrivacyProbes]; ok {
		// Run, not dry: exactly the spec runs, and fails with the seed.
		commands, _ := rerunCommands(r.Failure.Message)
		again, out, env := runPasted(t, commands[0])
		seed := strings.TrimPrefix(env[0], spec.SeedEnv+"=")
		if f := failedOnly(again); len(f) != 1 || len(selected(again)) != 0 || f[0].FullText() != r.FullText() || !strings.Contains(f[0].Failure.Message, "seed "+seed) {
			t.Errorf("%q: failed %d specs, passed %d, want exactly %q failing with seed %s:\n%s", commands[0], len(f), len(selected(again)), r.FullText(), seed, out)
		}
		if strings.Contains(out, "TestOther") {
			t.Errorf("%q runs the package's other tests:\n%s", commands[0], out)
		}
	}
	if !stressed() {
		return
	}
	for id, r := range failed {
		if id == conformance.CheckPrivacyProbes {
			continue
		}
		commands, _ := rerunCommands(r.Failure.Message)
		pasteDry(t, id, commands[0], r)
	}
}

// runPasted runs a printed go test command, verbose and with a JSON report,
// and returns the report's specs, the output and the command's
// environment: by default as go test runs the suite (its test binary, in
// its directory, with the flags translated), in the long form
// (ADAPTERKIT_STRESS=1) through the go command, which links the test
// binary again for about 2 s of CPU.
func runPasted(t *testing.T, c string) ([]types.SpecReport, string, []string) {
	t.Helper()
	if stressed() {
		env, argv := words(t, c)
		again, out := runGo(t, env, append(argv[1:], "-count=1", "-v", "-ginkgo.no-color", "-ginkgo.json-report=REPORT")...)
		return again, out, env
	}
	env, dir, args, err := binaryArgs(t, c)
	if err != nil {
		t.Fatalf("%q: %v", c, err)
	}
	rep, out := runReport(t, func(args ...string) *exec.Cmd { return suiteCommand(t, env, dir, args...) },
		append(args, "-test.v", "-ginkgo.no-color", "-ginkgo.json-report=REPORT")...)
	return rep.SpecReports, out, env
}

// failedOnly returns the failed specs of a run.
func failedOnly(rs []types.SpecReport) []types.SpecReport {
	var out []types.SpecReport
	for _, r := range rs {
		if r.LeafNodeType == types.NodeTypeIt && r.State.Is(types.SpecStateFailureStates) {
			out = append(out, r)
		}
	}
	return out
}

func keys(m map[string]types.SpecReport) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// spec.Fuzz's seed corpus alone catches an adapter that drops a message,
// explaining the failure as the property spec does. It runs the fuzz
// target as go test -run '^FuzzBroken$' runs it: the package's test
// binary in its directory.
func TestFuzzCatchesABrokenAdapter(t *testing.T) {
	t.Parallel()
	out, err := suiteCommand(t, nil, rerunDir, "-test.run=^FuzzBroken$").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "projection-assertion-failed") || !strings.Contains(string(out), "rule:") {
		t.Fatalf("the fuzz target passed or did not explain (err %v):\n%s", err, out)
	}
	if conformance.ContainsProbe(out) || strings.Contains(string(out), "Inspect the reference project") {
		t.Fatalf("the fuzz failure shows history text:\n%s", out)
	}
}
