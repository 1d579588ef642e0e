package spec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ds4context/adapterkit/contract/conformance"
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

// goCommand is the go command in the module's root with the rerun child's
// environment and env, bounded by goDeadline.
func goCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), goDeadline)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.WaitDelay = time.Second
	cmd.Dir = ".."
	cmd.Env = append(append(os.Environ(), broken.ChildEnv+"=1", "RAPID_NOFAILFILE=1", "RAPID_SHRINKTIME=1s"), env...)
	return cmd
}

// runGo runs the go command and returns the JSON report written to a
// temporary file (REPORT in args) and the command's output.
func runGo(t *testing.T, env []string, args ...string) ([]types.SpecReport, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.json")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "REPORT", file)
	}
	cmd := goCommand(t, env, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("go %q: %v", args, err)
	}
	b, err := os.ReadFile(file)
	var rs []types.Report
	if err == nil {
		err = json.Unmarshal(b, &rs)
	}
	if err != nil || len(rs) != 1 {
		t.Fatalf("go %q wrote no report (%v):\n%s", args, err, out.String())
	}
	return rs[0].SpecReports, out.String()
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

// failures runs the broken suite in dir and returns its failed specs by
// check id.
func failures(t *testing.T, dir string) map[string]types.SpecReport {
	t.Helper()
	reports, _ := runGo(t, nil, "test", dir, "-count=1", "-ginkgo.no-color", "-ginkgo.json-report=REPORT")
	failed := map[string]types.SpecReport{}
	for _, r := range reports {
		if r.State.Is(types.SpecStateFailureStates) {
			id, _, _ := strings.Cut(r.LeafNodeText, ":")
			failed[id] = r
		}
	}
	return failed
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

// checkEnv requires the environment a command sets for a check: rapid's
// seed for the property spec, the kit's seed for a seeded check, nothing
// otherwise.
func checkEnv(t *testing.T, id, c string) {
	t.Helper()
	env, _ := words(t, c)
	want := map[string]string{conformance.CheckProjection: "RAPID_SEED=", conformance.CheckPrivacyProbes: spec.SeedEnv + "=0x"}[id]
	if (want == "" && len(env) != 0) || (want != "" && (len(env) != 1 || !strings.HasPrefix(env[0], want))) {
		t.Errorf("%s: %q sets %q, want %q", id, c, env, want)
	}
}

// Every command a failure of a Describe package prints, pasted as it is in
// the module's root, selects exactly the spec that failed — also when the
// suite is nested in the adapter author's own labelled container: a go test
// command narrowed to the suite's test, and a Ginkgo CLI command; a seeded
// check's and the property spec's carry their seed. The label it names is
// the kit's own.
func TestPrintedRerunCommandsSelectExactlyTheFailedSpec(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command and the Ginkgo CLI")
	}
	failed := failures(t, rerunDir)
	if msg := failed[conformance.CaseLifecycle].Failure.Message; !strings.Contains(msg, "Shutdown did not return within 300ms") {
		t.Errorf("the lifecycle failure does not name the blocked call and its bound:\n%s", msg)
	}
	// One check of each form: no seed, rapid's seed, the kit's seed.
	for _, id := range []string{conformance.CaseCanonicalHistory, conformance.CheckProjection, conformance.CheckPrivacyProbes} {
		r, ok := failed[id]
		if !ok {
			t.Fatalf("the broken adapter did not fail %s; failed: %v", id, keys(failed))
		}
		commands, label := rerunCommands(r.Failure.Message)
		if len(commands) != 2 || !strings.Contains(commands[0], "go test "+rerunDir+" -run '^TestRerunSuite$' ") {
			t.Errorf("%s: commands %q, want a go test narrowed to TestRerunSuite and a Ginkgo one:\n%s", id, commands, r.Failure.Message)
			continue
		}
		if label != "'"+id+"'" {
			t.Errorf("%s: the label hint is %s, want the check's own label %q", id, label, id)
		}
		for i, c := range commands {
			checkEnv(t, id, c)
			if i == 1 && id == conformance.CaseCanonicalHistory {
				continue // the Ginkgo CLI builds the suite again: those with a seed are enough
			}
			pasteDry(t, id, c, r)
		}
	}
	// The label selects the check in every embedding: here, the one.
	got, _ := runGo(t, nil, "test", rerunDir, "-ginkgo.label-filter="+conformance.CaseLifecycle, "-ginkgo.dry-run", "-ginkgo.json-report=REPORT")
	if len(selected(got)) != 1 || selected(got)[0] != failed[conformance.CaseLifecycle].FullText() {
		t.Errorf("--label-filter=%s selects %q", conformance.CaseLifecycle, selected(got))
	}
}

// A failure of a spec.Run package prints one command, go test narrowed to
// the test that runs the suite (the Ginkgo CLI would hand its focus to no
// test file there and run every spec); pasted, it selects exactly the
// failed spec and no other test, and a seeded check's reproduces the
// failure with the same seed.
func TestPrintedRerunCommandOfARunPackage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	failed := failures(t, plainDir)
	for _, id := range []string{conformance.CaseCanonicalHistory, conformance.CheckPrivacyProbes} {
		r, ok := failed[id]
		if !ok {
			t.Fatalf("the broken adapter did not fail %s; failed: %v", id, keys(failed))
		}
		commands, _ := rerunCommands(r.Failure.Message)
		if len(commands) != 1 || !strings.Contains(commands[0], "go test "+plainDir+" -run '^TestConformance$' ") {
			t.Errorf("%s: commands %q, want only go test narrowed to TestConformance:\n%s", id, commands, r.Failure.Message)
			continue
		}
		checkEnv(t, id, commands[0])
		if id != conformance.CheckPrivacyProbes {
			pasteDry(t, id, commands[0], r)
			continue
		}
		// Pasted for real: exactly the spec runs, and fails with the seed.
		env, argv := words(t, commands[0])
		again, out := runGo(t, env, append(argv[1:], "-count=1", "-v", "-ginkgo.no-color", "-ginkgo.json-report=REPORT")...)
		seed := strings.TrimPrefix(env[0], spec.SeedEnv+"=")
		if f := failedOnly(again); len(f) != 1 || len(selected(again)) != 0 || f[0].FullText() != r.FullText() || !strings.Contains(f[0].Failure.Message, "seed "+seed) {
			t.Errorf("%q: failed %d specs, passed %d, want exactly %q failing with seed %s:\n%s", commands[0], len(f), len(selected(again)), r.FullText(), seed, out)
		}
		if strings.Contains(out, "TestOther") {
			t.Errorf("%q runs the package's other tests:\n%s", commands[0], out)
		}
	}
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
// explaining the failure as the property spec does.
func TestFuzzCatchesABrokenAdapter(t *testing.T) {
	t.Parallel()
	out, err := goCommand(t, nil, "test", rerunDir, "-run", "^FuzzBroken$", "-count=1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "projection-assertion-failed") || !strings.Contains(string(out), "rule:") {
		t.Fatalf("the fuzz target passed or did not explain (err %v):\n%s", err, out)
	}
	if conformance.ContainsProbe(out) || strings.Contains(string(out), "Inspect the reference project") {
		t.Fatalf("the fuzz failure shows history text:\n%s", out)
	}
}
