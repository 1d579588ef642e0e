package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
)

// asCommandEnv makes the test binary act as the command: with arguments
// "serve-mutant NAME" it serves the reference adapter wrapped by a mutant,
// otherwise it runs the command with its arguments. The tests run the
// command in a child process because Ginkgo runs its suite once per process.
const asCommandEnv = "ADAPTERKIT_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) != "" {
		if len(os.Args) == 3 && os.Args[1] == "serve-mutant" {
			os.Exit(serveMutant(os.Args[2]))
		}
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Children inherit this: a race-enabled child would otherwise sleep a
	// second at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func serveMutant(name string) int {
	for _, mu := range mutants.Catalogue() {
		if mu.Name == name {
			if err := bridge.Serve(context.Background(), mu.Factory(reference.NewConformanceFactory()), os.Stdin, os.Stdout); err != nil {
				return exitBroken
			}
			return exitPass
		}
	}
	return exitBroken
}

// runCLI runs the command with args in a child process and returns its exit
// status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCommandEnv+"=1")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// runInProcess runs the command in this process, for runs that never reach
// the Ginkgo suite.
func runInProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestConformReference(t *testing.T) {
	dir := t.TempDir()
	reportFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	code, out, errOut := runCLI(t, "conform", "--report", reportFile, "--junit", junitFile)
	if code != exitPass {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	rows := 0
	for _, id := range append(conformance.CaseIDs(), "negotiation", "diagnostics-privacy", "closed", "bounded-diagnostics", "concurrency", "embedding-port", "local-kv-hit", "projection") {
		if !regexp.MustCompile(`\n` + id + ` +(pass|skip)`).MatchString(out) {
			t.Errorf("the table has no passing row for %s:\n%s", id, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && (f[1] == "pass" || f[1] == "skip") {
			rows++
		}
	}
	if !regexp.MustCompile(`\nPASS  \d+ of \d+ checks passed, 1 skipped`).MatchString(out) {
		t.Errorf("no verdict line:\n%s", out)
	}
	want, err := conformance.Run(context.Background(), reference.NewConformanceFactory())
	if err != nil {
		t.Fatal(err)
	}
	var got conformance.Report
	b, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("report file\n got %s\nwant %s", g, w)
	}
	var suites junitSuites
	x, err := os.ReadFile(junitFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(x, &suites); err != nil {
		t.Fatalf("JUnit XML does not parse: %v", err)
	}
	if suites.Tests != rows || suites.Failures != 0 || suites.Skipped != 1 || len(suites.Suites) != 1 || len(suites.Suites[0].Cases) != rows {
		t.Errorf("JUnit: %d tests, %d failures, %d skipped, %d suites", suites.Tests, suites.Failures, suites.Skipped, len(suites.Suites))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The reference adapter served by the command itself over the bridge gets
// the report it gets in process.
func TestConformExecServeReference(t *testing.T) {
	t.Setenv(asCommandEnv, "1") // the adapter command is this binary too
	dir := t.TempDir()
	inProcess, overBridge := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if code, out, errOut := runCLI(t, "conform", "--report", inProcess); code != exitPass {
		t.Fatalf("in process: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, "conform", "--report", overBridge, "--exec", shellQuote(os.Args[0])+" serve-reference")
	if code != exitPass {
		t.Fatalf("over the bridge: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "conformance of process ") {
		t.Errorf("the table does not say it ran a process:\n%s", out)
	}
	if !regexp.MustCompile(`\nlocal-kv-hit +pass\n`).MatchString(out) {
		t.Errorf("the local KV checks did not run over the bridge (the port crosses it):\n%s", out)
	}
	a, _ := os.ReadFile(inProcess)
	b, _ := os.ReadFile(overBridge)
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("reports differ:\n%s\n%s", a, b)
	}
	// The command may follow --, unquoted.
	if code, out, errOut := runInProcess(t, "conform", "--extended=false", "--histories", "0", "--", os.Args[0], "serve-reference"); code != exitPass || !strings.Contains(out, "7 of 7") {
		t.Fatalf("after --: exit %d\n%s%s", code, out, errOut)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// A broken adapter process (this binary serving a mutant; the adapter
// command inherits the child's environment) fails with exit status 1 and an explanation that
// names the case, its code and the rule — and never a probe.
func TestConformCatchesMutants(t *testing.T) {
	for _, tc := range []struct {
		mutant   string
		extended bool
		failed   []string
		code     string
	}{
		{"forwards-unsanitised-payload", false, []string{conformance.CasePrivacy}, "privacy-assertion-failed"},
		{"panics-in-identity", false, []string{conformance.CaseIdentity}, "identity-threw"},
		{"splits-parallel-batch", false, []string{"projection"}, "projection-assertion-failed"},
		{"leaks-probe-into-diagnostic", true, []string{"diagnostics-privacy"}, "diagnostics-privacy-assertion-failed"},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			t.Parallel()
			if !slices.ContainsFunc(mutants.Catalogue(), func(m mutants.Mutant) bool { return m.Name == tc.mutant }) {
				t.Fatalf("no mutant %s", tc.mutant)
			}
			junitFile := filepath.Join(t.TempDir(), "junit.xml")
			code, out, errOut := runCLI(t, "conform", "--extended="+strconv.FormatBool(tc.extended), "--junit", junitFile,
				"--exec", shellQuote(os.Args[0])+" serve-mutant "+tc.mutant)
			if code != exitFail {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitFail, out, errOut)
			}
			var failed []string
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[1] == "FAIL" {
					failed = append(failed, f[0])
				}
			}
			if !slices.Equal(failed, tc.failed) {
				t.Errorf("failed rows %q, want %q\n%s", failed, tc.failed, out)
			}
			if tc.failed[0] == "projection" && !strings.Contains(out, "(history seed ") {
				t.Errorf("the projection failure does not name its history's seed:\n%s", out)
			}
			if !strings.Contains(out, tc.code) || !strings.Contains(out, "rule:") || !strings.Contains(out, "expected:") {
				t.Errorf("no explanation with %s:\n%s", tc.code, out)
			}
			x, _ := os.ReadFile(junitFile)
			for _, text := range []string{out, errOut, string(x)} {
				if conformance.ContainsProbe([]byte(text)) {
					t.Errorf("output holds a probe")
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"bogus"},
		{"conform", "--no-such-flag"},
		{"conform", "--exec", "'unbalanced"},
		{"conform", "--exec", "  "},
		{"conform", "--exec", "x", "--", "y"},
		{"conform", "--exec", filepath.Join(os.TempDir(), "no-such-adapter-command")},
	} {
		if code, _, errOut := runInProcess(t, args...); code != exitBroken || errOut == "" {
			t.Errorf("%q: exit %d with stderr %q, want %d and a message", args, code, errOut, exitBroken)
		}
	}
	if code, out, _ := runInProcess(t, "help"); code != exitPass || !strings.Contains(out, "serve-reference") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

func TestServeReferenceSpeaksTheProtocol(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"serve-reference"}, inR, outW, io.Discard)
		outW.Close()
	}()
	c := bridge.NewClient(outR, inW, bridge.Options{})
	name, err := c.Hello(context.Background())
	if err != nil || name != reference.AdapterName {
		t.Fatalf("hello: %q, %v", name, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != exitPass {
		t.Fatalf("serve-reference exit %d", code)
	}
}

// With --embeddings the reference adapter served over the bridge has an
// embedding port, so the embedding check passes rather than skips.
func TestServeReferenceEmbeddings(t *testing.T) {
	t.Setenv(asCommandEnv, "1") // the adapter command is this binary too
	code, out, errOut := runCLI(t, "conform", "--histories", "0", "--exec", shellQuote(os.Args[0])+" serve-reference --embeddings")
	if code != exitPass {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`\nembedding-port +pass\n`).MatchString(out) {
		t.Errorf("the embedding check did not pass over the bridge:\n%s", out)
	}
	if code, _, errOut := runInProcess(t, "serve-reference", "--no-such-flag"); code != exitBroken || !strings.Contains(errOut, "no-such-flag") {
		t.Errorf("a bad flag: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runInProcess(t, "serve-reference", "extra"); code != exitBroken || !strings.Contains(errOut, "unexpected arguments") {
		t.Errorf("an extra argument: exit %d, %q", code, errOut)
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
