package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// deadline is the bound of the go commands a test of Load runs.
func deadline(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func platforms(t *testing.T, ctx context.Context) []Platform {
	t.Helper()
	ps, err := Platforms(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// stressEnv, set to 1, runs the long forms of this package's tests (the CI
// script sets it).
const stressEnv = "ADAPTERKIT_STRESS"

// samplePlatforms returns the platforms of ps a test of the checkout's
// boundary loads: all of them under stressEnv=1; by default the host's
// (when in ps) and as few more as cover every GOOS and every pointer size
// of ps, in the order of ps. Each platform costs a type-check of the
// standard library the boundary packages import, most of Load's work. A
// file of the checkout that some platform's build leaves out is a file the
// host's or another sampled platform's build leaves out (each GOOS is
// sampled), so the sample still finds it.
func samplePlatforms(ps []Platform) []Platform {
	if os.Getenv(stressEnv) == "1" {
		return ps
	}
	return CoveringPlatforms(ps)
}

// The default sample covers every GOOS and pointer size with fewer
// platforms than all, the host's among them.
func TestSamplePlatforms(t *testing.T) {
	ps := []Platform{{"darwin", "amd64"}, {"darwin", "arm64"}, {"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"}, {"windows", "386"}, {"windows", "amd64"}}
	got := CoveringPlatforms(ps)
	host := Platform{runtime.GOOS, runtime.GOARCH}
	if slices.Contains(ps, host) && !slices.Contains(got, host) {
		t.Errorf("the sample %v lacks the host's platform %s", got, host)
	}
	if len(got) > 3 {
		t.Errorf("the sample %v takes more than one platform for each GOOS", got)
	}
	for _, goos := range []string{"darwin", "linux", "windows"} {
		if !slices.ContainsFunc(got, func(p Platform) bool { return p.GOOS == goos }) {
			t.Errorf("the sample %v has no %s platform", got, goos)
		}
	}
	for _, arches := range [][]string{{"386", "arm"}, {"amd64", "arm64"}} {
		if !slices.ContainsFunc(got, func(p Platform) bool { return slices.Contains(arches, p.GOARCH) }) {
			t.Errorf("the sample %v has no platform of %q", got, arches)
		}
	}
}

func TestPlatformsAreTheFirstClassPorts(t *testing.T) {
	ps := platforms(t, deadline(t))
	for _, want := range []Platform{{"linux", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}} {
		if !slices.Contains(ps, want) {
			t.Errorf("platforms %v lack %s", ps, want)
		}
	}
	if slices.Contains(ps, Platform{"plan9", "386"}) {
		t.Errorf("platforms %v hold a port that is not first-class", ps)
	}
}

// The checkout's boundary is the same on every platform, and holds the
// registry the golden file pins. By default it loads samplePlatforms'
// sample of the platforms; the long form (ADAPTERKIT_STRESS=1) every
// platform.
func TestLoadTheCheckout(t *testing.T) {
	ctx := deadline(t)
	ps := samplePlatforms(platforms(t, ctx))
	bs, err := Load(ctx, moduleRoot, nil, ps, BoundaryPackages...)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != len(ps) {
		t.Fatalf("%d boundaries for %d platforms", len(bs), len(ps))
	}
	first := bs[0]
	for _, b := range bs {
		if !slices.Equal(b.Constants, first.Constants) || !slices.Equal(b.Registries, first.Registries) ||
			!slices.Equal(b.Files, first.Files) || !slices.Equal(b.Declarations, first.Declarations) {
			t.Errorf("the boundary on %s differs from the one on %s", b.Platform, first.Platform)
		}
		if len(b.Ignored) > 0 {
			t.Errorf("%s leaves out %+v", b.Platform, b.Ignored)
		}
	}
	if !slices.Contains(first.Files, "internal/jsonw/scan.go") || !slices.ContainsFunc(first.Declarations, func(d Declaration) bool {
		return d.ID() == "contract.IsRegisteredCapability" && d.File == "contract/registry.go"
	}) {
		t.Errorf("the checkout's files %q and declarations lack what the boundary packages compile", first.Files)
	}
	for _, want := range []Constant{
		{Package: "contract", Name: "ContractVersion", Type: "untyped string", Value: `"runtime-adapter-v1"`},
		{Package: "contract", Name: "CapabilityEmbeddings", Type: "contract.CapabilityID", Value: `"embeddings"`},
		{Package: "contract", Name: "DiagnosticAdapterClosed", Type: "untyped string", Value: `"adapter-closed"`},
	} {
		if !slices.Contains(first.Constants, want) {
			t.Errorf("no constant %+v among %d", want, len(first.Constants))
		}
	}
	pkgs := map[string]bool{}
	for _, c := range first.Constants {
		pkgs[c.Package] = true
	}
	for _, p := range BoundaryPackages {
		if !pkgs[p] {
			t.Errorf("no constant of package %s", p)
		}
	}
	for _, want := range []Registry{
		{Package: "contract", Name: "CapabilityIDs", Kind: RegistryList, Signature: "func() []contract.CapabilityID"},
		{Package: "contract", Name: "IsRegisteredCapability", Kind: RegistryTest, Signature: "func(string) bool"},
	} {
		if !slices.Contains(first.Registries, want) {
			t.Errorf("no registry %+v among %+v", want, first.Registries)
		}
	}
}

// writeModule writes a module of the given files (path to content) into a
// new folder and returns it.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/boundary\n\ngo 1.26\n"
	for name, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Build constraints are applied per platform: a constant a build-tagged
// file declares has that file's value on its platforms only, and constant
// expressions are evaluated with the platform's sizes.
func TestLoadAppliesBuildConstraints(t *testing.T) {
	ctx := deadline(t)
	dir := writeModule(t, map[string]string{
		"contract/version_linux.go": "//go:build linux\n\npackage contract\n\nconst Version = \"v9-tampered\"\n",
		"contract/version_other.go": "//go:build !linux\n\npackage contract\n\nconst Version = \"v1\"\n",
		"contract/size.go":          "package contract\n\nimport \"unsafe\"\n\n// Word is the size of a pointer.\nconst Word = unsafe.Sizeof(uintptr(0)) * 8\n\nconst hidden = 1\n\nfunc Names() []string { return nil }\n\nfunc Is(s string) bool { return s == \"\" }\n\nfunc NotARegistry(n int) bool { return n > 0 }\n",
	})
	ps := []Platform{{"linux", "amd64"}, {"linux", "386"}, {"windows", "amd64"}}
	bs, err := Load(ctx, dir, nil, ps, "contract")
	if err != nil {
		t.Fatal(err)
	}
	want := map[Platform][]Constant{
		ps[0]: {{"contract", "Version", "untyped string", `"v9-tampered"`}, {"contract", "Word", "uintptr", "64"}},
		ps[1]: {{"contract", "Version", "untyped string", `"v9-tampered"`}, {"contract", "Word", "uintptr", "32"}},
		ps[2]: {{"contract", "Version", "untyped string", `"v1"`}, {"contract", "Word", "uintptr", "64"}},
	}
	for _, b := range bs {
		if !slices.Equal(b.Constants, want[b.Platform]) {
			t.Errorf("%s: constants %+v, want %+v", b.Platform, b.Constants, want[b.Platform])
		}
		if got := b.Registries; len(got) != 2 || got[0].Name != "Is" || got[0].Kind != RegistryTest || got[1].Name != "Names" || got[1].Kind != RegistryList {
			t.Errorf("%s: registries %+v, want Is (test) and Names (list)", b.Platform, got)
		}
	}
}

// A package that does not compile on one platform is a CompileError
// naming the package and the platform; so is a package that is missing.
func TestLoadNamesWhatDoesNotCompile(t *testing.T) {
	ctx := deadline(t)
	dir := writeModule(t, map[string]string{
		"contract/a.go":         "package contract\n\nconst A = B\n",
		"contract/b_windows.go": "package contract\n\nconst B = 1\n",
	})
	_, err := Load(ctx, dir, nil, []Platform{{"windows", "amd64"}, {"darwin", "arm64"}}, "contract")
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Platform != (Platform{"darwin", "arm64"}) || ce.Package != "example.com/boundary/contract" || !strings.Contains(err.Error(), "undefined: B") {
		t.Fatalf("Load: %v, want a CompileError of the package on darwin/arm64 saying B is undefined", err)
	}
	_, err = Load(ctx, dir, nil, []Platform{{"windows", "amd64"}}, "contract", "contract/privacy")
	if !errors.As(err, &ce) || ce.Package != "example.com/boundary/contract/privacy" {
		t.Fatalf("Load of a missing package: %v, want a CompileError naming it", err)
	}
}

// Load records, per platform, the files of the module's packages a build
// compiles and leaves out, and every package-level declaration with a
// digest that layout and comments do not change and a literal does.
func TestLoadRecordsFilesAndDeclarations(t *testing.T) {
	ctx := deadline(t)
	dir := writeModule(t, map[string]string{
		"contract/registry.go":      "package contract\n\nimport \"example.com/boundary/internal/helper\"\n\nconst A = helper.H\n\ntype T struct{}\n\nfunc (*T) M() {}\n\nfunc init() {}\n\nvar _ = A\n",
		"contract/pick_windows.go":  "package contract\n\nfunc Pick(s string) bool { return s != \"\" }\n\nfunc Same(s string) bool { return s == \"a  b\" }\n\nfunc Lit() string { return \"a b\" }\n",
		"contract/pick_other.go":    "//go:build !windows\n\npackage contract\n\n// Pick picks.\nfunc Pick(s string) bool {\n\treturn s == \"\"\n}\n\n// Same is Same, laid out otherwise.\nfunc Same(s string) bool {\n\treturn s == \"a  b\" // a comment\n}\n\nfunc Lit() string { return \"a  b\" }\n",
		"contract/cgo.go":           "//go:build cgo\n\npackage contract\n\nfunc Cgo() {}\n",
		"contract/generate.go":      "//go:build ignore\n\npackage main\n",
		"contract/tagged_test.go":   "//go:build linux\n\npackage contract\n",
		"internal/helper/helper.go": "package helper\n\n// H is the helper's constant.\nconst H = 1\n",
	})
	linux, windows := Platform{"linux", "amd64"}, Platform{"windows", "amd64"}
	bs, err := Load(ctx, dir, nil, []Platform{linux, windows}, "contract")
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := map[Platform][]string{
		linux:   {"contract/pick_other.go", "contract/registry.go", "internal/helper/helper.go"},
		windows: {"contract/pick_windows.go", "contract/registry.go", "internal/helper/helper.go"},
	}
	// A file of another system is left out by its name, or its
	// constraint; the file no platform compiles is left out by both.
	cgo := IgnoredFile{File: "contract/cgo.go", Constraint: "cgo"}
	wantIgnored := map[Platform][]IgnoredFile{
		linux:   {cgo, {File: "contract/pick_windows.go"}},
		windows: {cgo, {File: "contract/pick_other.go", Constraint: "!windows"}},
	}
	digests := map[string]map[Platform]string{}
	for _, b := range bs {
		if !slices.Equal(b.Files, wantFiles[b.Platform]) {
			t.Errorf("%s: files %q, want %q", b.Platform, b.Files, wantFiles[b.Platform])
		}
		if !slices.Equal(b.Ignored, wantIgnored[b.Platform]) {
			t.Errorf("%s: ignored %+v, want %+v", b.Platform, b.Ignored, wantIgnored[b.Platform])
		}
		var ids []string
		for _, d := range b.Declarations {
			ids = append(ids, d.ID())
			if digests[d.ID()] == nil {
				digests[d.ID()] = map[Platform]string{}
			}
			digests[d.ID()][b.Platform] = d.Digest
		}
		want := []string{"contract.A", "contract.Lit", "contract.Pick", "contract.Same", "contract.T", "contract.T.M",
			"contract._#1 (contract/registry.go)", "contract.init#1 (contract/registry.go)", "internal/helper.H"}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: declarations %q, want %q", b.Platform, ids, want)
		}
	}
	for id, same := range map[string]bool{"contract.Pick": false, "contract.Lit": false, "contract.Same": true, "contract.A": true, "internal/helper.H": true} {
		if got := digests[id][linux] == digests[id][windows]; got != same || digests[id][linux] == "" {
			t.Errorf("%s: digests %q on linux and %q on windows; want them equal: %t", id, digests[id][linux], digests[id][windows], same)
		}
	}
}

// The module's requirements are its go.mod's require lines; the modules the
// generators and checks run are those their packages import from.
func TestRequirementsAndDrawingModules(t *testing.T) {
	reqs, err := Requirements(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(reqs, Requirement{Path: "pgregory.net/rapid", Version: "v1.3.0"}) ||
		!slices.IsSortedFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("requirements %+v: want rapid v1.3.0 among them, sorted", reqs)
	}
	ctx := deadline(t)
	mods, err := ModulesOf(ctx, moduleRoot, nil, DrawingPackages...)
	if err != nil || !slices.Equal(mods, []string{"pgregory.net/rapid"}) {
		t.Errorf("the modules the generators and checks run: %q, %v; want rapid only", mods, err)
	}
	dir := writeModule(t, map[string]string{"contract/gen/gen.go": "package gen\n\nimport \"strings\"\n\nvar X = strings.ToUpper\n"})
	if mods, err := ModulesOf(ctx, dir, nil, DrawingPackages...); err != nil || len(mods) != 0 {
		t.Errorf("a module whose generators import the standard library only, and no checks: %q, %v", mods, err)
	}
}
