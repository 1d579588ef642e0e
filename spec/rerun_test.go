package spec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ds4context/adapterkit/contract/conformance"
)

const rerunDir = "./spec/testdata/rerun"

// runGo runs the go command in the module's root with the rerun child's
// environment and returns the JSON report written to a temporary file.
func runGo(t *testing.T, env []string, args ...string) []types.SpecReport {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.json")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "REPORT", file)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	cmd.Env = append(append(os.Environ(), "ADAPTERKIT_RERUN_CHILD=1", "RAPID_NOFAILFILE=1", "RAPID_SHRINKTIME=1s"), env...)
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
	return rs[0].SpecReports
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

// Every command a failure prints, pasted as it is in the module's root,
// selects exactly the spec that failed — also when the suite is nested in
// the adapter author's own labelled container — and the label it names is
// the kit's own.
func TestPrintedRerunCommandsSelectExactlyTheFailedSpec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command and the Ginkgo CLI")
	}
	reports := runGo(t, nil, "test", rerunDir, "-count=1", "-ginkgo.no-color", "-ginkgo.json-report=REPORT")
	failed := map[string]types.SpecReport{}
	for _, r := range reports {
		if r.State.Is(types.SpecStateFailureStates) {
			id, _, _ := strings.Cut(r.LeafNodeText, ":")
			failed[id] = r
		}
	}
	for _, id := range []string{conformance.CaseCanonicalHistory, conformance.CaseLifecycle, conformance.CheckProjection} {
		if _, ok := failed[id]; !ok {
			t.Fatalf("the broken adapter did not fail %s; failed: %v", id, keys(failed))
		}
	}
	if msg := failed[conformance.CaseLifecycle].Failure.Message; !strings.Contains(msg, "Shutdown did not return within 300ms") {
		t.Errorf("the lifecycle failure does not name the blocked call and its bound:\n%s", msg)
	}
	ginkgoRuns := 0
	for id, r := range failed {
		lines := strings.Split(r.Failure.Message, "\n")
		var commands []string
		label := ""
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
		if len(commands) != 2 {
			t.Errorf("%s: %d rerun commands, want a go test and a Ginkgo one:\n%s", id, len(commands), r.Failure.Message)
			continue
		}
		if label != "'"+id+"'" {
			t.Errorf("%s: the label hint is %s, want the check's own label %q", id, label, id)
		}
		for _, c := range commands {
			env, argv := words(t, c)
			if id == conformance.CheckProjection && (len(env) != 1 || !strings.HasPrefix(env[0], "RAPID_SEED=")) {
				t.Errorf("%s: %q sets no rapid seed", id, c)
			}
			switch {
			case len(argv) > 2 && argv[0] == "go" && argv[1] == "test":
				argv = append(argv[1:], "-ginkgo.dry-run", "-ginkgo.json-report=REPORT")
			case len(argv) > 3 && argv[0] == "go" && argv[1] == "run" && argv[2] == "github.com/onsi/ginkgo/v2/ginkgo":
				if ginkgoRuns++; ginkgoRuns > 2 && id != conformance.CheckProjection {
					continue // the Ginkgo CLI builds the suite again: two are enough
				}
				dir := argv[len(argv)-1]
				argv = append(append(argv[1:len(argv)-1], "--dry-run", "--no-color", "--json-report=REPORT"), dir)
			default:
				t.Errorf("%s: unexpected command %q", id, c)
				continue
			}
			if got := selected(runGo(t, env, argv...)); len(got) != 1 || got[0] != r.FullText() {
				t.Errorf("%s: %q selects %q, want exactly %q", id, c, got, r.FullText())
			}
		}
	}
	// The label selects the check in every embedding: here, the one.
	got := selected(runGo(t, nil, "test", rerunDir, "-ginkgo.label-filter="+conformance.CaseLifecycle, "-ginkgo.dry-run", "-ginkgo.json-report=REPORT"))
	if len(got) != 1 || got[0] != failed[conformance.CaseLifecycle].FullText() {
		t.Errorf("--label-filter=%s selects %q", conformance.CaseLifecycle, got)
	}
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
	cmd := exec.Command("go", "test", rerunDir, "-run", "^FuzzBroken$", "-count=1")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "ADAPTERKIT_RERUN_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "projection-assertion-failed") || !strings.Contains(string(out), "rule:") {
		t.Fatalf("the fuzz target passed or did not explain (err %v):\n%s", err, out)
	}
	if conformance.ContainsProbe(out) || strings.Contains(string(out), "Inspect the reference project") {
		t.Fatalf("the fuzz failure shows history text:\n%s", out)
	}
}
