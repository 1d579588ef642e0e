package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/internal/release"
)

// moduleRoot is the root of this module, seen from the package folder.
const moduleRoot = "../.."

// verifyCLI runs verify-release in process with args and returns its exit
// status, stdout and stderr.
func verifyCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"verify-release"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// publish publishes the checkout as version to a new file proxy and
// returns it with the proxy's GOPROXY entry.
func publish(t *testing.T, version string) (release.Published, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := release.Publish(dir, moduleRoot, version, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	url, err := release.ProxyURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p, url
}

// offline sets this process's environment to release.OfflineEnv over
// proxies, with a module cache of the test's own, for the rest of the test.
func offline(t *testing.T, proxies ...string) {
	t.Helper()
	for _, kv := range release.OfflineEnv(nil, filepath.Join(t.TempDir(), "mod"), proxies...) {
		k, v, _ := strings.Cut(kv, "=")
		if cur, ok := os.LookupEnv(k); !ok || cur != v {
			t.Setenv(k, v)
		}
	}
}

func TestVerifyReleaseUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"v0.2.0", "v0.2.1"}, {"latest"}, {"v0.2"}, {"0.2.0"}, {"--no-such-flag", "v0.2.0"}} {
		code, out, errOut := verifyCLI(t, args...)
		if code != exitBroken || out != "" || errOut == "" {
			t.Errorf("verify-release %q: exit %d, stdout %q, stderr %q; want exit 2 with an explanation on stderr", args, code, out, errOut)
		}
	}
	if code, _, errOut := verifyCLI(t, "-h"); code != exitPass || !strings.Contains(errOut, "usage: adapterkit verify-release VERSION") {
		t.Errorf("verify-release -h: exit %d, stderr %q", code, errOut)
	}
}

// TestVerifyReleaseCannotFetch covers a version the proxy does not have and
// a proxy without the module: both exit 2, saying what could not be
// fetched.
func TestVerifyReleaseCannotFetch(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	_, url := publish(t, "v0.2.0-verify.1")
	empty, err := release.ProxyURL(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, proxy := range []string{url, empty} {
		offline(t, proxy)
		code, out, errOut := verifyCLI(t, "v0.2.0-missing.1")
		if code != exitBroken || !strings.Contains(errOut, "cannot fetch "+modulePath+"@v0.2.0-missing.1") || out != "" {
			t.Errorf("GOPROXY=%s: exit %d, stdout %q, stderr %q; want exit 2 saying it cannot fetch the version", proxy, code, out, errOut)
		}
	}
}

func TestBoundaryOfTheCheckoutHolds(t *testing.T) {
	diffs, err := comparePin(moduleRoot)
	if err != nil || len(diffs) > 0 {
		t.Errorf("registry pin of the checkout: %q, %v", diffs, err)
	}
	diffs, err = compareConstants(moduleRoot)
	if err != nil || len(diffs) > 0 {
		t.Errorf("contract constants of the checkout: %q, %v", diffs, err)
	}
}

// releaseTree copies what the boundary checks read from the checkout — the
// non-test files of package contract and the registry pin — into a new
// folder, applying edits (file name to edit) on the way.
func releaseTree(t *testing.T, edits map[string]func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	files := []string{filepath.FromSlash(registryPin)}
	matches, err := filepath.Glob(filepath.Join(moduleRoot, "contract", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		if !strings.HasSuffix(m, "_test.go") {
			files = append(files, filepath.Join("contract", filepath.Base(m)))
		}
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(moduleRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		content := string(data)
		if edit, ok := edits[filepath.ToSlash(name)]; ok {
			content = edit(content)
			if content == string(data) {
				t.Fatalf("the edit of %s changed nothing", name)
			}
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func replace(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

func TestBoundaryDifferences(t *testing.T) {
	const pin = "golden/testdata/registry-0.2.golden"
	const src = "contract/registry.go"
	pinWhere := "registry pin " + pin + ": "
	cases := []struct {
		name  string
		edits map[string]func(string) string
		want  []string // differences, in order
		err   string   // an error of comparePin or compareConstants
	}{
		{name: "pinned contract version", edits: map[string]func(string) string{pin: replace(`"contractVersion": "runtime-adapter-v1"`, `"contractVersion": "runtime-adapter-v2"`)},
			want: []string{pinWhere + `contractVersion: the release has "runtime-adapter-v2", this build has "runtime-adapter-v1"`}},
		{name: "pinned capability order", edits: map[string]func(string) string{pin: replace("\"compaction\",\n    \"provider-continuation\"", "\"provider-continuation\",\n    \"compaction\"")},
			want: []string{pinWhere + `capabilityIds: the release has ["provider-continuation", "compaction", "embeddings", "local-kv-reuse"], this build has ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"]`}},
		{name: "pinned release line", edits: map[string]func(string) string{pin: replace(`"release": "0.2"`, `"release": 0.2`)},
			want: []string{pinWhere + `release is not a string; this build has "0.2"`}},
		{name: "pin member missing and added", edits: map[string]func(string) string{pin: replace(`"localKvDiagnosticsVersion"`, `"localKvDiagnosticVersion"`)},
			want: []string{pinWhere + `localKvDiagnosticsVersion is missing; this build has "local-kv-diagnostics-v1"`, pinWhere + `"localKvDiagnosticVersion" is not in this build's pin`}},
		{name: "pin not an object", edits: map[string]func(string) string{pin: func(string) string { return "[]\n" }},
			err: pinWhere + "not a JSON object"},
		{name: "contract version", edits: map[string]func(string) string{src: replace(`ContractVersion = "runtime-adapter-v1"`, `ContractVersion = "runtime-adapter-v1.1"`)},
			want: []string{`contract.ContractVersion: the release has "runtime-adapter-v1.1", this build has "runtime-adapter-v1"`}},
		{name: "local KV version", edits: map[string]func(string) string{src: replace(`"local-kv-runtime-port-v1"`, `"local-kv-runtime-port-v2"`)},
			want: []string{`contract.LocalKVRuntimePortVersion: the release has "local-kv-runtime-port-v2", this build has "local-kv-runtime-port-v1"`}},
		{name: "capability id", edits: map[string]func(string) string{src: replace(`CapabilityID = "embeddings"`, `CapabilityID = "embedding"`)},
			want: []string{`contract.CapabilityEmbeddings: the release has "embedding", this build has "embeddings"`,
				`contract.CapabilityIDs(): the release has ["compaction", "provider-continuation", "embedding", "local-kv-reuse"], this build has ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"]`}},
		{name: "capability order", edits: map[string]func(string) string{src: replace("{CapabilityCompaction, CapabilityProviderContinuation,", "{CapabilityProviderContinuation, CapabilityCompaction,")},
			want: []string{`contract.CapabilityIDs(): the release has ["provider-continuation", "compaction", "embeddings", "local-kv-reuse"], this build has ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"]`}},
		{name: "capability removed", edits: map[string]func(string) string{src: replace(", CapabilityEmbeddings, CapabilityLocalKVReuse}", ", CapabilityLocalKVReuse}")},
			want: []string{`contract.CapabilityIDs(): the release has ["compaction", "provider-continuation", "local-kv-reuse"], this build has ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"]`}},
		{name: "constant renamed", edits: map[string]func(string) string{src: replace("HistorySchemaVersion = ", "HistoryVersion = ")},
			want: []string{`contract.HistorySchemaVersion: not found in the release; this build has "runtime-history-v1"`}},
		{name: "constant not a literal", edits: map[string]func(string) string{src: replace(`ConformanceVersion = "runtime-adapter-conformance-v1"`, `ConformanceVersion = ContractVersion + "-conformance"`)},
			want: []string{`contract.ConformanceVersion: not a string literal in the release; this build has "runtime-adapter-conformance-v1"`}},
		{name: "capability list computed", edits: map[string]func(string) string{src: replace("return []CapabilityID{CapabilityCompaction, CapabilityProviderContinuation, CapabilityEmbeddings, CapabilityLocalKVReuse}", "return registry[:]")},
			err: "contract.CapabilityIDs() of the release: does not return a list literal"},
		{name: "source that does not parse", edits: map[string]func(string) string{src: replace("package contract", "package contract(")},
			err: "package contract of the release: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := releaseTree(t, tc.edits)
			pinDiffs, pinErr := comparePin(dir)
			constDiffs, constErr := compareConstants(dir)
			got := append(pinDiffs, constDiffs...)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			var errs []string
			for _, err := range []error{pinErr, constErr} {
				if err != nil {
					errs = append(errs, err.Error())
				}
			}
			switch {
			case tc.err == "" && len(errs) > 0:
				t.Errorf("unexpected errors %q", errs)
			case tc.err != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0], tc.err)):
				t.Errorf("errors %q, want one starting with %q", errs, tc.err)
			}
		})
	}

	dir := t.TempDir()
	if _, err := comparePin(dir); err == nil || err.Error() != "registry pin "+pin+": missing from the release" {
		t.Errorf("a release without the pin: %v", err)
	}
	if _, err := compareConstants(dir); err == nil || !strings.HasPrefix(err.Error(), "package contract of the release: ") {
		t.Errorf("a release without package contract: %v", err)
	}
}

// TestVerifyReleaseEndToEnd runs verify-release against a file proxy
// holding the checkout and a tampered copy of it, offline. It builds the
// published command, so it runs with the release smoke test only.
func TestVerifyReleaseEndToEnd(t *testing.T) {
	if os.Getenv(release.SmokeEnv) != "1" {
		t.Skipf("set %s=1 to run verify-release end to end", release.SmokeEnv)
	}
	dir := t.TempDir()
	good, err := release.Publish(dir, moduleRoot, "v0.2.0-verify.1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bad, err := release.Publish(dir, moduleRoot, "v0.2.0-tampered.1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Rewrite(registryPin, func(b []byte) ([]byte, error) {
		return bytes.Replace(b, []byte(`"local-kv-eligibility-v1"`), []byte(`"local-kv-eligibility-v2"`), 1), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := bad.Rewrite("contract/registry.go", func(b []byte) ([]byte, error) {
		return bytes.Replace(b, []byte(`LocalKVEligibilityVersion = "local-kv-eligibility-v1"`), []byte(`LocalKVEligibilityVersion = "local-kv-eligibility-v2"`), 1), nil
	}); err != nil {
		t.Fatal(err)
	}
	broken, err := release.Publish(dir, moduleRoot, "v0.2.0-broken.1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := broken.Rewrite("cmd/adapterkit/main.go", func(b []byte) ([]byte, error) {
		return append(b, "\nfunc {\n"...), nil
	}); err != nil {
		t.Fatal(err)
	}
	url, err := release.ProxyURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := release.CacheProxy(nil)
	if err != nil {
		t.Fatal(err)
	}
	offline(t, url, cache)

	code, out, errOut := verifyCLI(t, good.Version)
	t.Logf("verify-release %s: exit %d\n%s", good.Version, code, out)
	if code != exitPass || !strings.Contains(out, "registry pin "+registryPin+": equal to this build's\n") ||
		!strings.Contains(out, "contract constants: equal to this build's\n") ||
		!strings.Contains(out, "ds4-context-reference-adapter-go (in process)") ||
		!strings.HasSuffix(out, modulePath+"@"+good.Version+": the compatibility boundary holds\n") {
		t.Errorf("verify-release %s: exit %d\nstdout:\n%s\nstderr:\n%s", good.Version, code, out, errOut)
	}

	code, out, errOut = verifyCLI(t, bad.Version)
	t.Logf("verify-release %s (tampered): exit %d\n%s", bad.Version, code, out)
	want := "\n" + modulePath + "@" + bad.Version + ": the compatibility boundary does not hold:\n" +
		"  - registry pin " + registryPin + `: localKvEligibilityVersion: the release has "local-kv-eligibility-v2", this build has "local-kv-eligibility-v1"` + "\n" +
		`  - contract.LocalKVEligibilityVersion: the release has "local-kv-eligibility-v2", this build has "local-kv-eligibility-v1"` + "\n"
	if code != exitFail || !strings.HasSuffix(out, want) || !strings.Contains(out, "contract constants: differ from this build's (listed below)\n") {
		t.Errorf("verify-release %s (tampered): exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 and stdout ending in:\n%s", bad.Version, code, out, errOut, want)
	}

	// A release whose command does not build cannot be checked: exit 2,
	// saying so, while the values it could compare still match.
	code, out, errOut = verifyCLI(t, broken.Version)
	t.Logf("verify-release %s (does not build): exit %d\n%s%s", broken.Version, code, out, errOut)
	if code != exitBroken || !strings.Contains(errOut, "cannot run the reference conformance of "+modulePath+"@"+broken.Version+": go install: ") ||
		!strings.Contains(out, "contract constants: equal to this build's\n") || strings.Contains(out, "boundary holds") {
		t.Errorf("verify-release %s (does not build): exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 saying the conformance cannot be built", broken.Version, code, out, errOut)
	}
}
