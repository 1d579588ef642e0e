package release

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
)

// smokeVersion is the version the smoke test publishes.
const smokeVersion = "v0.2.0-smoke.1"

// TestReleaseSmoke publishes the checkout to a file proxy and consumes it
// as an adapter repository does, offline: go get, go test ./... (spec.Run),
// ginkgo ./spec through the Ginkgo CLI the module pins, and go run of the
// published adapterkit command.
func TestReleaseSmoke(t *testing.T) {
	if os.Getenv(SmokeEnv) != "1" {
		t.Skipf("set %s=1 to run the release smoke test", SmokeEnv)
	}
	start := time.Now()
	proxy := t.TempDir()
	if _, err := Publish(proxy, moduleRoot, smokeVersion, start); err != nil {
		t.Fatal(err)
	}
	env := smokeEnvironment(t, proxy)

	consumer := filepath.Join(t.TempDir(), "consumer")
	copyTree(t, consumer, filepath.Join(moduleRoot, "testdata", "consumer"))
	requireVersion(t, filepath.Join(consumer, "go.mod"), smokeVersion)

	goCmd(t, consumer, env, "get", ModulePath+"@"+smokeVersion)
	got := strings.Fields(goCmd(t, consumer, env, "list", "-m", "-f", "{{.Version}} {{.Dir}}", ModulePath))
	if len(got) != 2 || got[0] != smokeVersion || !strings.HasPrefix(got[1], envValue(env, "GOMODCACHE")) {
		t.Fatalf("the consumer builds against %q, want %s from the test's module cache", got, smokeVersion)
	}

	out := goCmd(t, consumer, env, "test", "-count=1", "-v", "./...")
	for _, want := range []string{"--- PASS: TestConformance", "--- PASS: TestSpec", "ok  \texample.com/consumer\t", "ok  \texample.com/consumer/spec\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test ./... in the consumer: no %q in its output:\n%s", want, out)
		}
	}
	assertSpecsRan(t, "go test ./...", out)

	pinned := ginkgoPin(t)
	if v := strings.TrimSpace(goCmd(t, consumer, env, "list", "-m", "-f", "{{.Version}}", "github.com/onsi/ginkgo/v2")); v != pinned {
		t.Errorf("the consumer resolves Ginkgo %s, the module pins %s", v, pinned)
	}
	out = goCmd(t, consumer, env, "run", "github.com/onsi/ginkgo/v2/ginkgo", "./spec")
	assertSpecsRan(t, "ginkgo ./spec", out)

	out = goCmd(t, consumer, env, "run", ModulePath+"/cmd/adapterkit@"+smokeVersion, "conform")
	if !strings.Contains(out, "reference") {
		t.Errorf("adapterkit conform does not name the reference adapter:\n%s", out)
	}
	t.Logf("release smoke test: %s", time.Since(start).Round(time.Second))
}

// smokeEnvironment is OfflineEnv over the proxy at dir and the local
// module cache, with a module cache of the test's own.
func smokeEnvironment(t *testing.T, dir string) []string {
	t.Helper()
	own, err := ProxyURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cache, err := CacheProxy(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return OfflineEnv(nil, filepath.Join(t.TempDir(), "mod"), own, cache)
}

// goCmd runs the go command in dir and returns its combined output; a
// failure, or a command still running after ten minutes, stops the test.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	t.Logf("go %s: %s", strings.Join(args, " "), time.Since(began).Round(100*time.Millisecond))
	return out.String()
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

var ranSpecs = regexp.MustCompile(`Ran ([0-9]+) of [0-9]+ Specs`)

// assertSpecsRan checks that a Ginkgo run's output reports a non-zero
// number of specs run.
func assertSpecsRan(t *testing.T, what, out string) {
	t.Helper()
	m := ranSpecs.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Errorf("%s: no Ginkgo summary in its output:\n%s", what, out)
	}
	for _, s := range m {
		if s[1] == "0" {
			t.Errorf("%s ran no specs:\n%s", what, out)
		}
	}
}

// ginkgoPin is the Ginkgo version this module's go.mod requires.
func ginkgoPin(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == "github.com/onsi/ginkgo/v2" {
			return r.Mod.Version
		}
	}
	t.Fatal("go.mod does not require github.com/onsi/ginkgo/v2")
	return ""
}

// requireVersion rewrites the consumer's placeholder requirement of this
// module to version.
func requireVersion(t *testing.T, goMod, version string) {
	t.Helper()
	data, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(goMod, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AddRequire(ModulePath, version); err != nil {
		t.Fatal(err)
	}
	out, err := f.Format()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goMod, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, dst, src string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
