package release

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

	t.Run("README", func(t *testing.T) { readmeSteps(t, env) })
	t.Logf("release smoke test: %s", time.Since(start).Round(time.Second))
}

// copyMemadapter writes, into dir, the package examples/memadapter as an
// adapter repository copies it when the README says "copy it": its files
// but the tests, named package myadapter.
func copyMemadapter(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(moduleRoot, "examples", "memadapter", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/memadapter: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := strings.Replace(string(b), "package memadapter", "package myadapter", 1)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readmeSteps follows the README's "Check your own adapter" section in an
// empty module, as it is written: every Go file it shows (named by its
// first line's comment) is written where it says, and every command of its
// sh blocks runs, in the README's order; only the kit's version becomes the
// one published.
func readmeSteps(t *testing.T, env []string) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Check your own adapter\n")
	if !ok {
		t.Fatal("README.md has no section \"Check your own adapter\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	dir := filepath.Join(t.TempDir(), "myadapter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	goCmd(t, dir, env, "mod", "init", "example.com/myadapter")
	copyMemadapter(t, dir)
	pinned := ginkgoPin(t)
	var ran []string
	for _, block := range fencedBlocks(section) {
		switch block.lang {
		case "go":
			first, _, _ := strings.Cut(block.text, "\n")
			name, ok := strings.CutPrefix(first, "// ")
			if !ok || !strings.HasSuffix(name, ".go") {
				continue // a fragment, not a file
			}
			full := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(block.text), 0o644); err != nil {
				t.Fatal(err)
			}
		case "sh":
			for _, line := range strings.Split(block.text, "\n") {
				line, _, _ = strings.Cut(line, "#")
				args := strings.Fields(line)
				if len(args) == 0 {
					continue
				}
				if args[0] != "go" {
					t.Fatalf("README.md: a step that is no go command: %q", line)
				}
				for i, a := range args {
					switch {
					case strings.HasPrefix(a, ModulePath+"@"):
						if a != ModulePath+"@v0.2.0" {
							t.Fatalf("README.md gets %s; the smoke test publishes the checkout in place of v0.2.0", a)
						}
						args[i] = ModulePath + "@" + smokeVersion
					case strings.HasPrefix(a, "github.com/onsi/ginkgo/v2/ginkgo@"):
						if a != "github.com/onsi/ginkgo/v2/ginkgo@"+pinned {
							t.Errorf("README.md gets %s; the kit pins Ginkgo %s", a, pinned)
						}
					}
				}
				out := goCmd(t, dir, env, args[1:]...)
				if slices.Contains(args, "ginkgo") || slices.Contains(args, "./spec") {
					assertSpecsRan(t, line, out)
				}
				ran = append(ran, strings.Join(args[:2], " "))
			}
		}
	}
	for _, want := range []string{"go get", "go mod", "go tool", "go run"} {
		if !slices.Contains(ran, want) {
			t.Errorf("README.md: the steps ran %q, no %s", ran, want)
		}
	}
	for _, file := range []string{"conformance.json", "conformance.xml", "ginkgo.xml"} {
		if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
			t.Errorf("the README's steps wrote no %s: %v", file, err)
		}
	}
}

// fenced is a fenced code block of a Markdown text.
type fenced struct{ lang, text string }

// fencedBlocks returns the fenced code blocks of md, in order.
func fencedBlocks(md string) []fenced {
	var (
		out  []fenced
		cur  *fenced
		body []string
	)
	for _, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur, body = &fenced{lang: strings.TrimPrefix(line, "```")}, nil
		case cur != nil && line == "```":
			cur.text = strings.Join(body, "\n") + "\n"
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body = append(body, line)
		}
	}
	return out
}

// smokeEnvironment is OfflineEnv over the proxy at dir and the local
// module cache, with a module cache of the test's own.
func smokeEnvironment(t *testing.T, dir string) []string {
	t.Helper()
	own, err := ProxyURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cache, err := CacheProxy(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return OfflineEnv(nil, filepath.Join(t.TempDir(), "mod"), own, cache)
}

// goDeadline bounds one go command of the smoke test: a build of the kit
// and its dependencies with an empty build cache on a loaded machine.
const goDeadline = 8 * time.Minute

// goCmd runs the go command in dir and returns its combined output; a
// failure stops the test.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), goDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.WaitDelay = time.Second
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
