package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
)

// mutantEnv makes the test binary serve the reference adapter wrapped by
// the named mutant over the bridge, as a broken adapter process would.
const mutantEnv = "ADAPTERKIT_CLI_SERVE_MUTANT"

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
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
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
		if f := strings.Fields(line); len(f) >= 2 && (f[1] == "FAIL" || f[1] == "ERROR") {
			failed = append(failed, f[0])
		}
	}
	return failed
}

// A broken adapter process fails with exit status 1 and an explanation that
// names the check, its code and the rule — and never a probe; the report
// and JUnit file are written and agree with the exit status.
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
			args := []string{"--extended=" + map[bool]string{true: "true", false: "false"}[tc.extended], "--seed", "407704132775", "--report", reportFile, "--junit", junitFile, "--", "env", mutantEnv + "=" + tc.mutant, os.Args[0]}
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
	if code != exitPass || !strings.Contains(out, "generated histories leave out: multi-result, image, long-history") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if rep := readReport(t, reportFile); !slices.Equal(rep.LeftOut, []gen.Family{gen.FamilyMultiResult, gen.FamilyImage, gen.FamilyLongHistory}) {
		t.Fatalf("report leaves out %q", rep.LeftOut)
	}
	if code, _, errOut := runIt(t, reference.NewConformanceFactory(), "--leave-out", "telepathy"); code != exitBroken || !strings.Contains(errOut, "telepathy") {
		t.Fatalf("unknown family: exit %d, %q", code, errOut)
	}
}
