package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/testgc"
	"github.com/ds4context/adapterkit/reference"
)

// asCommandEnv makes the test binary act as the command, so that it can
// serve the reference adapter to a conform run over the bridge.
const asCommandEnv = "ADAPTERKIT_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) != "" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Children inherit this: a race-enabled child would otherwise sleep a
	// second at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(testgc.Run(m))
}

// stressEnv, set to 1, runs the long forms of this package's tests (the CI
// script sets it).
const stressEnv = "ADAPTERKIT_STRESS"

// long reports whether stressEnv asks for the long forms.
func long() bool { return os.Getenv(stressEnv) == "1" }

// The model steps and generated histories of the default form of the
// tests about a face of the command (how it runs the catalogue, not what
// the model or projection check finds): enough that both checks run,
// over the bridge too, and pass; their long forms (long) run the
// defaults, 1,000 steps and 20 histories.
const (
	sampleModelSteps = 10
	sampleHistories  = 2
)

// sampleArgs are the conform flags of sampleModelSteps and
// sampleHistories; none in the long form.
func sampleArgs() []string {
	if long() {
		return nil
	}
	return []string{"--model-steps", strconv.Itoa(sampleModelSteps), "--histories", strconv.Itoa(sampleHistories)}
}

// runCLI runs the command with args in a child process and returns its exit
// status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
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

// conform on the reference adapter in process passes every check, writes
// the report and JUnit file, and its seven-case report is
// conformance.Run's. By default the model and projection checks run on
// sampleArgs; the long form (ADAPTERKIT_STRESS=1) runs them at their
// defaults.
func TestConformReference(t *testing.T) {
	dir := t.TempDir()
	reportFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	code, out, errOut := runInProcess(t, append([]string{"conform", "--report", reportFile, "--junit", junitFile}, sampleArgs()...)...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range conformance.Checks() {
		if !regexp.MustCompile(`\n` + regexp.QuoteMeta(c.ID) + ` +` + string(c.Kind) + ` +(pass|skip)`).MatchString(out) {
			t.Errorf("the table has no passing row for %s:\n%s", c.ID, out)
		}
	}
	if !regexp.MustCompile(`\nPASS  \d+ of \d+ checks passed, 1 skipped`).MatchString(out) {
		t.Errorf("no verdict line:\n%s", out)
	}
	want, err := conformance.Run(context.Background(), reference.NewConformanceFactory())
	if err != nil {
		t.Fatal(err)
	}
	var got conformance.RunReport
	b, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Passed || got.Version != conformance.RunReportVersion || len(got.Checks) != len(conformance.Checks()) || got.Conformance == nil {
		t.Fatalf("report: passed %t, version %q, %d checks, conformance %v", got.Passed, got.Version, len(got.Checks), got.Conformance)
	}
	if g, w := mustJSON(t, got.Conformance), mustJSON(t, want); g != w {
		t.Errorf("the report's seven-case report\n got %s\nwant %s", g, w)
	}
	if x, err := os.ReadFile(junitFile); err != nil || !bytes.Contains(x, []byte(`<testsuites name="adapterkit"`)) {
		t.Errorf("JUnit file: %v\n%s", err, x)
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
//
// By default both runs are of a sample of the catalogue: the seven
// contract cases (whose report is compared), the cases in order, a local
// KV check (the port crosses the bridge) and the model and projection
// checks on sampleArgs; every check of the catalogue passing over the
// bridge, as each does in process (TestConformReference), is
// TestJudgeRunsThisBuildsCatalogue's. The long form (ADAPTERKIT_STRESS=1)
// runs the whole catalogue at its defaults, 1,000 model steps and 20
// histories, both ways.
func TestConformExecServeReference(t *testing.T) {
	t.Setenv(asCommandEnv, "1") // the adapter command is this binary too
	dir := t.TempDir()
	inProcess, overBridge := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	sample := sampleArgs()
	if !long() {
		checks := append(conformance.CaseIDs(), conformance.CheckInOrder, conformance.CheckLocalKVHit, conformance.CheckModel, conformance.CheckProjection)
		sample = append(sample, "--check", strings.Join(checks, ","))
	}
	if code, out, errOut := runInProcess(t, append([]string{"conform", "--timeout", "2m", "--report", inProcess}, sample...)...); code != exitPass {
		t.Fatalf("in process: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, append([]string{"conform", "--timeout", "2m", "--report", overBridge, "--exec", shellQuote(os.Args[0]) + " serve-reference"}, sample...)...)
	if code != exitPass {
		t.Fatalf("over the bridge: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "conformance of process ") {
		t.Errorf("the table does not say it ran a process:\n%s", out)
	}
	if !regexp.MustCompile(`\nlocal-kv-hit +feature +pass\n`).MatchString(out) {
		t.Errorf("the local KV checks did not run over the bridge (the port crosses it):\n%s", out)
	}
	var a, b conformance.RunReport
	for file, rep := range map[string]*conformance.RunReport{inProcess: &a, overBridge: &b} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, rep); err != nil {
			t.Fatal(err)
		}
	}
	if mustJSON(t, a.Conformance) != mustJSON(t, b.Conformance) || len(a.Checks) != len(b.Checks) {
		t.Errorf("reports differ:\n%s\n%s", mustJSON(t, a), mustJSON(t, b))
	}
	for i := range a.Checks {
		if i < len(b.Checks) && (a.Checks[i].ID != b.Checks[i].ID || a.Checks[i].Status != b.Checks[i].Status) {
			t.Errorf("check %s: %s in process, %s over the bridge", a.Checks[i].ID, a.Checks[i].Status, b.Checks[i].Status)
		}
	}
	// The command may follow --, unquoted.
	if code, out, errOut := runInProcess(t, "conform", "--extended=false", "--histories", "0", "--", os.Args[0], "serve-reference"); code != exitPass || !strings.Contains(out, "8 of 8 checks passed") {
		t.Fatalf("after --: exit %d\n%s%s", code, out, errOut)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

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
// embedding port, so the embedding check passes rather than skips (the
// whole catalogue over the bridge is TestConformExecServeReference's).
func TestServeReferenceEmbeddings(t *testing.T) {
	t.Setenv(asCommandEnv, "1") // the adapter command is this binary too
	code, out, errOut := runCLI(t, "conform", "--timeout", "2m", "--check", conformance.CheckEmbeddingPort, "--exec", shellQuote(os.Args[0])+" serve-reference --embeddings")
	if code != exitPass {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`\nembedding-port +feature +pass\n`).MatchString(out) {
		t.Errorf("the embedding check did not pass over the bridge:\n%s", out)
	}
	if code, _, errOut := runInProcess(t, "serve-reference", "--no-such-flag"); code != exitBroken || !strings.Contains(errOut, "no-such-flag") {
		t.Errorf("a bad flag: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runInProcess(t, "serve-reference", "extra"); code != exitBroken || !strings.Contains(errOut, "unexpected arguments") {
		t.Errorf("an extra argument: exit %d, %q", code, errOut)
	}
}

// Every subcommand the usage names answers -h, -help and --help with a
// usage of its own, naming the command and its flags, and exit status 0;
// so does the command itself.
func TestEverySubcommandHasHelp(t *testing.T) {
	var subcommands []string
	for _, line := range strings.Split(usage, "\n") {
		if rest, ok := strings.CutPrefix(line, "  adapterkit "); ok {
			subcommands = append(subcommands, strings.Fields(rest)[0])
		}
	}
	want := map[string][]string{
		"conform":         {"usage: conform [flags]", "-histories", "-shard", "checks:"},
		"merge-reports":   {"usage: merge-reports", "-report", "-junit"},
		"serve-reference": {"usage: adapterkit serve-reference [--embeddings]", "-embeddings"},
		"verify-release":  {"usage: adapterkit verify-release VERSION"},
	}
	if len(subcommands) != len(want) {
		t.Fatalf("the usage names the subcommands %q; this test knows %d", subcommands, len(want))
	}
	for _, sub := range subcommands {
		if want[sub] == nil {
			t.Errorf("the usage names %q, which this test does not know", sub)
		}
		for _, h := range []string{"-h", "-help", "--help"} {
			code, out, errOut := runInProcess(t, sub, h)
			help := out + errOut
			if code != exitPass || strings.Contains(help, "Usage of") {
				t.Errorf("%s %s: exit %d, want 0 and a usage of its own\n%s", sub, h, code, help)
			}
			for _, w := range want[sub] {
				if !strings.Contains(help, w) {
					t.Errorf("%s %s does not say %q:\n%s", sub, h, w, help)
				}
			}
		}
	}
	for _, h := range []string{"help", "-h", "-help", "--help"} {
		if code, out, _ := runInProcess(t, h); code != exitPass || out != usage {
			t.Errorf("adapterkit %s: exit %d\n%s", h, code, out)
		}
	}
}

// The command runs the catalogue directly: no test framework is linked in.
func TestCommandDoesNotLinkGinkgo(t *testing.T) {
	out, err := exec.CommandContext(deadline(t, time.Minute), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/onsi/") {
			t.Errorf("cmd/adapterkit depends on %s", pkg)
		}
	}
}
