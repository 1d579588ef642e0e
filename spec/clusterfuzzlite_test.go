package spec_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fuzzBuildEnv, when set, makes TestFuzzTargetsBuildForLibFuzzer fetch the
// converter the fuzzing services use and build the targets with it
// (.ci/run sets it).
const fuzzBuildEnv = "ADAPTERKIT_FUZZ_BUILD"

// fuzzBuildVersion is the version of github.com/AdamKorcz/go-118-fuzz-build
// the test builds with: the module proxy's latest.
const fuzzBuildVersion = "v0.0.0-20250520111509-a70c2aa677fa"

// compileLine is a compile_native_go_fuzzer line of build.sh: the package,
// the target and the fuzzer's name.
var compileLine = regexp.MustCompile(`(?m)^compile_native_go_fuzzer (\S+) (\S+) (\S+)$`)

// template is what docs/campaigns.md and docs/clusterfuzzlite say an
// adapter repository writes: the targets' file and the build script.
type template struct {
	target  string     // fuzz/fuzz_test.go
	pkg     string     // the package compile_native_go_fuzzer builds
	targets [][]string // each target's function and fuzzer name
	build   string
}

func readTemplate(t *testing.T) template {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := read("campaigns.md")
	_, rest, ok := strings.Cut(doc, "<!-- clusterfuzzlite-target -->\n```go\n")
	if !ok {
		t.Fatal("docs/campaigns.md has no target file after <!-- clusterfuzzlite-target -->")
	}
	tm := template{build: read("clusterfuzzlite/build.sh")}
	tm.target, _, _ = strings.Cut(rest, "```")
	for _, m := range compileLine.FindAllStringSubmatch(tm.build, -1) {
		if tm.pkg != "" && m[1] != tm.pkg {
			t.Fatalf("build.sh builds targets of %s and %s", tm.pkg, m[1])
		}
		tm.pkg = m[1]
		tm.targets = append(tm.targets, []string{m[2], m[3]})
	}
	return tm
}

// The ClusterFuzzLite template agrees with docs/campaigns.md: build.sh
// compiles exactly the targets the page's target file declares, from its
// package, after requiring the converter's testing package; the Dockerfile
// is the services' Go image running build.sh; project.yaml says Go; the
// page names every file.
func TestClusterFuzzLiteTemplate(t *testing.T) {
	tm := readTemplate(t)
	if !strings.HasPrefix(tm.target, "// fuzz/fuzz_test.go\npackage fuzz\n") || tm.pkg != "./fuzz" {
		t.Fatalf("the target file is not fuzz/fuzz_test.go of package fuzz, or build.sh builds %q:\n%s", tm.pkg, tm.target)
	}
	declared := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\) \{ spec\.(Fuzz|FuzzModel)\(f, `).FindAllStringSubmatch(tm.target, -1)
	if len(declared) != 2 || len(tm.targets) != len(declared) {
		t.Fatalf("the page declares %d targets of spec.Fuzz and spec.FuzzModel, build.sh compiles %d:\n%s\n%s", len(declared), len(tm.targets), tm.target, tm.build)
	}
	for i, d := range declared {
		if tm.targets[i][0] != d[1] {
			t.Errorf("build.sh compiles %s where the page declares %s", tm.targets[i][0], d[1])
		}
	}
	if !strings.Contains(tm.build, "\ngo get github.com/AdamKorcz/go-118-fuzz-build/testing\n") ||
		strings.Index(tm.build, "\ngo get ") > strings.Index(tm.build, "\ncompile_native_go_fuzzer ") {
		t.Errorf("build.sh does not require the converter's testing package before it compiles:\n%s", tm.build)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "docs", "clusterfuzzlite", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if d := read("Dockerfile"); !strings.Contains(d, "\nFROM gcr.io/oss-fuzz-base/base-builder-go\n") || !strings.Contains(d, "\nCOPY .clusterfuzzlite/build.sh $SRC/\n") {
		t.Errorf("the Dockerfile is not the Go builder image running build.sh:\n%s", d)
	}
	if p := read("project.yaml"); p != "language: go\n" {
		t.Errorf("project.yaml: %q", p)
	}
	if w := read("workflow.yml"); !strings.Contains(w, "google/clusterfuzzlite/actions/build_fuzzers@v1") || !strings.Contains(w, "google/clusterfuzzlite/actions/run_fuzzers@v1") || !strings.Contains(w, "language: go") {
		t.Errorf("workflow.yml does not build and run the fuzzers for Go:\n%s", w)
	}
	doc, _ := os.ReadFile(filepath.Join("..", "docs", "campaigns.md"))
	for _, name := range []string{"project.yaml", "Dockerfile", "build.sh", "compile_native_go_fuzzer", "build_fuzzers@v1", "run_fuzzers@v1"} {
		if !bytes.Contains(doc, []byte(name)) {
			t.Errorf("docs/campaigns.md does not name %s", name)
		}
	}
}

// brokenFactory is a factory the libFuzzer build test adds beside the
// template's targets: the conformant example adapter, whose snapshots lose
// their last message, so that a built target has something to catch.
const brokenFactory = `package fuzz

import (
	"context"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

func dropsTheLastMessage(f conformance.Factory) conformance.Factory {
	return conformance.NewFactory(f.Name(), func(ctx context.Context, s conformance.Setup) (conformance.Instance, error) {
		inst, err := f.Create(ctx, s)
		if err == nil {
			inst.Adapter = dropping{inst.Adapter}
		}
		return inst, err
	})
}

type dropping struct{ contract.Adapter }

func (d dropping) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := d.Adapter.SnapshotHistory(ctx)
	if err == nil && len(s.Messages) > 0 {
		s.Messages = s.Messages[:len(s.Messages)-1]
	}
	return s, err
}
`

// driver feeds a libFuzzer archive inputs as libFuzzer would: it calls
// LLVMFuzzerTestOneInput with pseudo-random inputs, and stands in for the
// coverage hooks libFuzzer provides (no-ops).
const driver = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __sanitizer_cov_8bit_counters_init(uint8_t *a, uint8_t *b) {}
void __sanitizer_cov_pcs_init(const uintptr_t *a, const uintptr_t *b) {}
void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b) {}
void __sanitizer_cov_trace_cmp2(uint16_t a, uint16_t b) {}
void __sanitizer_cov_trace_cmp4(uint32_t a, uint32_t b) {}
void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b) {}
void __sanitizer_cov_trace_const_cmp1(uint8_t a, uint8_t b) {}
void __sanitizer_cov_trace_const_cmp2(uint16_t a, uint16_t b) {}
void __sanitizer_cov_trace_const_cmp4(uint32_t a, uint32_t b) {}
void __sanitizer_cov_trace_const_cmp8(uint64_t a, uint64_t b) {}
void __sanitizer_weak_hook_strcmp(void *pc, const char *a, const char *b, int r) {}

extern int LLVMFuzzerTestOneInput(char *data, size_t size);

int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < n; i++) {
		size_t size = 64 + i * 37;
		char *buf = malloc(size);
		for (size_t j = 0; j < size; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[j] = (char)x;
		}
		LLVMFuzzerTestOneInput(buf, size);
		free(buf);
	}
	printf("%d inputs\n", n);
	return 0;
}
`

// The template's targets, on examples/memadapter, build for libFuzzer as
// ClusterFuzzLite and OSS-Fuzz build them — compile_native_go_fuzzer's
// rewrite of the target's file, then go-118-fuzz-build into a libFuzzer
// archive — and the archives, fed inputs as libFuzzer feeds them, pass the
// conformant adapter and catch a broken one.
func TestFuzzTargetsBuildForLibFuzzer(t *testing.T) {
	if os.Getenv(fuzzBuildEnv) == "" {
		t.Skip(fuzzBuildEnv + " is not set: fetching the converter and building with libFuzzer instrumentation takes minutes")
	}
	for _, tool := range []string{"gcc", "nm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: the archives need a C toolchain (cgo)", tool)
		}
	}
	tm := readTemplate(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	pkgDir := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(tm.pkg, "./")))
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := strings.NewReplacer(`"example.com/myadapter"`, `"github.com/ds4context/adapterkit/examples/memadapter"`,
		"myadapter.ConformanceFactory()", "memadapter.ConformanceFactory(memadapter.WithEmbeddings())").Replace(tm.target)
	target += "\nfunc FuzzBroken(f *testing.F) { spec.Fuzz(f, dropsTheLastMessage(memadapter.ConformanceFactory(memadapter.WithEmbeddings()))) }\n"
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"go.mod": "module example.com/myadapter\n\ngo 1.26\n\nrequire github.com/ds4context/adapterkit v0.0.0\n\nreplace github.com/ds4context/adapterkit => " + root + "\n",
		"go.sum": string(gosum), "driver.c": driver,
		filepath.Join(pkgDir, "fuzz_test.go"): target, filepath.Join(pkgDir, "broken.go"): brokenFactory,
	} {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(d time.Duration, env []string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), append([]string{"CGO_ENABLED=1", "GOFLAGS=-mod=mod"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	// What build.sh and the services' image do before compiling.
	run(5*time.Minute, []string{"GOBIN=" + bin}, "go", "install", "github.com/AdamKorcz/go-118-fuzz-build@"+fuzzBuildVersion)
	run(5*time.Minute, nil, "go", "get", "github.com/AdamKorcz/go-118-fuzz-build/testing@"+fuzzBuildVersion)
	file := filepath.Join(pkgDir, "fuzz_test.go")
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range append(tm.targets, []string{"FuzzBroken", "fuzz_broken"}) {
		fn, name := tg[0], tg[1]
		// compile_native_go_fuzzer: the target's file, copied to a
		// non-test file whose target takes the converter's F.
		sig := regexp.MustCompile(`func ` + fn + `\((\w*) \*testing\.F\)`)
		if !sig.Match(original) {
			t.Fatalf("no func %s(f *testing.F) in the target file", fn)
		}
		rewritten := sig.ReplaceAll(original, []byte("func "+fn+"($1 *go118fuzzbuildutils.F)"))
		rewritten = bytes.Replace(rewritten, []byte("import (\n"), []byte("import (\n\tgo118fuzzbuildutils \"github.com/AdamKorcz/go-118-fuzz-build/testing\"\n"), 1)
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file+"_fuzz_.go", rewritten, 0o644); err != nil {
			t.Fatal(err)
		}
		archive := filepath.Join(dir, name+".a")
		run(15*time.Minute, nil, filepath.Join(bin, "go-118-fuzz-build"), "-tags", "gofuzz", "-o", archive, "-func", fn, pkgDir)
		if err := os.Remove(file + "_fuzz_.go"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, original, 0o644); err != nil {
			t.Fatal(err)
		}
		// The archive, fed inputs.
		program := filepath.Join(dir, name)
		run(2*time.Minute, nil, "gcc", "-o", program, filepath.Join(dir, "driver.c"), archive, "-lpthread")
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		out, err := exec.CommandContext(ctx, program, "8").CombinedOutput()
		cancel()
		var ee *exec.ExitError
		switch {
		case fn == "FuzzBroken" && (!errors.As(err, &ee) || !bytes.Contains(out, []byte("projection-assertion-failed\nrule:"))):
			t.Fatalf("%s did not catch an adapter dropping a message (%v):\n%s", fn, err, out)
		case fn != "FuzzBroken" && (err != nil || !bytes.Contains(out, []byte("8 inputs"))):
			t.Fatalf("%s on the conformant adapter: %v\n%s", fn, err, out)
		}
		t.Logf("%s: built with go-118-fuzz-build %s and run on 8 inputs", fn, fuzzBuildVersion)
	}
}
