package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/golden"
	"github.com/ds4context/adapterkit/internal/release"
)

// moduleRoot is the root of this module, seen from the package folder.
const moduleRoot = "../.."

// verifyCLI runs verify-release in process with args and returns its exit
// status, stdout and stderr.
func verifyCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(deadline(t, 10*time.Minute), append([]string{"verify-release"}, args...), strings.NewReader(""), &out, &errOut)
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

// tableFile is the generated file holding this build's boundary.
const tableFile = "boundary_table.go"

// deadline bounds the go commands a test runs.
func deadline(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// samplePlatforms returns the platforms of ps the tests of the checkout's
// boundary load: all of them in the long form (ADAPTERKIT_STRESS=1); by
// default the host's (when in ps) and as few more as cover every GOOS and
// every pointer size of ps, in the order of ps (as internal/release's
// tests sample them). Each platform costs a type-check of the standard
// library the boundary packages import, most of release.Load's work. A
// file of the checkout that some platform's build leaves out is one that
// a sampled platform's build leaves out too (each GOOS is sampled), which
// unbuiltFiles or compareDeclarations names.
func samplePlatforms(ps []release.Platform) []release.Platform {
	if long() {
		return ps
	}
	return release.CoveringPlatforms(ps)
}

// checkout is the boundary of the checkout for samplePlatforms' platforms,
// loaded once for the tests that read it.
var checkout struct {
	once    sync.Once
	bs      []release.Boundary
	reqs    []release.Requirement
	drawing []string
	err     error
}

// loadCheckout loads the boundary of the checkout for samplePlatforms'
// platforms.
func loadCheckout(t *testing.T) []release.Boundary {
	t.Helper()
	checkout.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		ps, err := release.Platforms(ctx, nil)
		if err != nil {
			checkout.err = err
			return
		}
		ps = samplePlatforms(ps)
		if checkout.bs, checkout.err = release.Load(ctx, moduleRoot, nil, ps, release.BoundaryPackages...); checkout.err != nil {
			return
		}
		if checkout.reqs, checkout.err = release.Requirements(moduleRoot); checkout.err != nil {
			return
		}
		checkout.drawing, checkout.err = release.ModulesOf(ctx, moduleRoot, nil, release.DrawingPackages...)
	})
	if checkout.err != nil {
		t.Fatal(checkout.err)
	}
	return checkout.bs
}

// boundaryTable renders the generated file from the checkout's boundary,
// which must be the same on every platform, its requirements and the
// modules its generators and checks run.
func boundaryTable(t *testing.T, bs []release.Boundary, reqs []release.Requirement, drawing []string) []byte {
	t.Helper()
	for _, b := range bs[1:] {
		if !slices.Equal(b.Constants, bs[0].Constants) || !slices.Equal(b.Registries, bs[0].Registries) {
			t.Fatalf("this build's boundary on %s differs from the one on %s: a constant or registry must not depend on the platform", b.Platform, bs[0].Platform)
		}
	}
	var w strings.Builder
	w.WriteString("// Code generated by TestBoundaryTableIsCurrent from the boundary packages; DO NOT EDIT.\n")
	w.WriteString("// Regenerate: " + golden.UpdateEnv + "=1 go test ./cmd/adapterkit -run TestBoundaryTableIsCurrent\n\n")
	w.WriteString("package main\n\nimport (\n")
	var pkgs []string
	for _, r := range bs[0].Registries {
		if !slices.Contains(pkgs, r.Package) {
			pkgs = append(pkgs, r.Package)
		}
	}
	for _, p := range pkgs {
		fmt.Fprintf(&w, "\t%s %q\n", importAlias(p), modulePath+"/"+p)
	}
	w.WriteString("\t\"github.com/ds4context/adapterkit/internal/release\"\n)\n\n")
	w.WriteString("// buildConstants are this build's exported constants of the boundary\n// packages, the same on every platform.\nvar buildConstants = []release.Constant{\n")
	for _, c := range bs[0].Constants {
		fmt.Fprintf(&w, "\t{Package: %q, Name: %q, Type: %q, Value: %s},\n", c.Package, c.Name, c.Type, goString(c.Value))
	}
	w.WriteString("}\n\n// buildRegistries are this build's registry functions of the boundary\n// packages, the same on every platform.\nvar buildRegistries = []registryFunc{\n")
	for _, r := range bs[0].Registries {
		call := importAlias(r.Package) + "." + r.Name
		fn := "list: func() any { return " + call + "() }"
		if r.Kind == release.RegistryTest {
			fn = "test: " + call
		}
		fmt.Fprintf(&w, "\t{Registry: release.Registry{Package: %q, Name: %q, Kind: %q, Signature: %q}, %s},\n", r.Package, r.Name, r.Kind, r.Signature, fn)
	}
	w.WriteString("}\n\n// buildRequirements are the require lines of this build's go.mod.\nvar buildRequirements = []release.Requirement{\n")
	for _, r := range reqs {
		fmt.Fprintf(&w, "\t{Path: %q, Version: %q},\n", r.Path, r.Version)
	}
	w.WriteString("}\n\n// buildDrawing are the modules whose code this build's generators and\n// checks (release.DrawingPackages) run.\nvar buildDrawing = []string{\n")
	for _, m := range drawing {
		fmt.Fprintf(&w, "\t%q,\n", m)
	}
	w.WriteString("}\n")
	src, err := format.Source([]byte(w.String()))
	if err != nil {
		t.Fatalf("the generated table does not parse: %v\n%s", err, w.String())
	}
	return src
}

// goString writes s as a Go string literal, raw when it can be.
func goString(s string) string {
	if strconv.CanBackquote(s) {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}

// The table verify-release judges a release by is this build's boundary,
// generated from its source: no hand-kept list. By default the boundary
// is loaded for samplePlatforms' sample, every platform in the long form
// (ADAPTERKIT_STRESS=1).
func TestBoundaryTableIsCurrent(t *testing.T) {
	bs := loadCheckout(t)
	want := boundaryTable(t, bs, checkout.reqs, checkout.drawing)
	if golden.Updating() {
		if err := os.WriteFile(tableFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(tableFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not this build's boundary; regenerate it: %s=1 go test ./cmd/adapterkit -run TestBoundaryTableIsCurrent", tableFile, golden.UpdateEnv)
	}
}

// The checkout holds this build's boundary: on samplePlatforms' sample of
// the platforms by default, on every platform in the long form
// (ADAPTERKIT_STRESS=1).
func TestBoundaryOfTheCheckoutHolds(t *testing.T) {
	diffs, err := comparePin(moduleRoot)
	if err != nil || len(diffs) > 0 {
		t.Errorf("registry pin of the checkout: %q, %v", diffs, err)
	}
	bs := loadCheckout(t)
	if diffs := slices.Concat(compareConstants(bs), compareRegistries(bs), compareDeclarations(bs), unbuiltFiles(bs)); len(diffs) > 0 {
		t.Errorf("the checkout differs from this build's table:\n%s", strings.Join(diffs, "\n"))
	}
	if diffs, notes := compareRequirements(checkout.reqs, checkout.drawing); len(diffs)+len(notes) > 0 {
		t.Errorf("the checkout's requirements differ from this build's table: %q %q", diffs, notes)
	}
	if got := filesSummary(bs); !strings.HasSuffix(got, " files, the same on every platform") || modulePackages(bs) != 7 {
		t.Errorf("the checkout's files: %s, of %d packages", got, modulePackages(bs))
	}
	for _, id := range []string{"contract.CapabilityIDs", "contract.IsRegisteredCapability"} {
		if !slices.ContainsFunc(buildRegistries, func(r registryFunc) bool { return r.ID() == id }) {
			t.Errorf("the table has no registry function %s", id)
		}
	}
	answers, err := buildAnswers(probeStrings())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(answers["contract.CapabilityIDs"]); got != `["compaction","provider-continuation","embeddings","local-kv-reuse"]` {
		t.Errorf("this build's contract.CapabilityIDs answers %s", got)
	}
	var registered map[string]bool
	if err := json.Unmarshal(answers["contract.IsRegisteredCapability"], &registered); err != nil || !registered["embeddings"] || registered["telepathy"] || registered["embeddings "] {
		t.Errorf("this build's contract.IsRegisteredCapability answers %v (%v)", registered, err)
	}
}

// boundaryOn is a release boundary: the table's, edited per platform.
func boundaryOn(ps []release.Platform, edit func(release.Platform, *release.Boundary)) []release.Boundary {
	bs := make([]release.Boundary, len(ps))
	for i, p := range ps {
		bs[i] = release.Boundary{Platform: p, Constants: slices.Clone(buildConstants)}
		for _, r := range buildRegistries {
			bs[i].Registries = append(bs[i].Registries, r.Registry)
		}
		edit(p, &bs[i])
	}
	return bs
}

// setConstant sets a constant's value (and type, when not "") in b.
func setConstant(b *release.Boundary, id, typ, value string) {
	for i, c := range b.Constants {
		if c.ID() == id {
			b.Constants[i].Value = value
			if typ != "" {
				b.Constants[i].Type = typ
			}
		}
	}
}

func TestBoundaryDifferences(t *testing.T) {
	linux, darwin, windows := release.Platform{GOOS: "linux", GOARCH: "amd64"}, release.Platform{GOOS: "darwin", GOARCH: "arm64"}, release.Platform{GOOS: "windows", GOARCH: "amd64"}
	ps := []release.Platform{linux, darwin, windows}
	cases := []struct {
		name string
		edit func(release.Platform, *release.Boundary)
		want []string
	}{
		{"equal", func(release.Platform, *release.Boundary) {}, nil},
		{"build-tagged constant", func(p release.Platform, b *release.Boundary) {
			if p.GOOS == "linux" {
				setConstant(b, "contract.ContractVersion", "", `"runtime-adapter-v9-tampered"`)
			}
		}, []string{`contract.ContractVersion: the release has "runtime-adapter-v9-tampered" (untyped string) on linux/amd64; this build has "runtime-adapter-v1" (untyped string) (the release differs between platforms)`}},
		{"renamed diagnostic code", func(_ release.Platform, b *release.Boundary) {
			setConstant(b, "contract.DiagnosticAdapterClosed", "", `"adapter-shut"`)
		}, []string{`contract.DiagnosticAdapterClosed: the release has "adapter-shut" (untyped string) on every platform; this build has "adapter-closed" (untyped string)`}},
		{"typed differently", func(_ release.Platform, b *release.Boundary) {
			setConstant(b, "contract.CapabilityEmbeddings", "untyped string", `"embeddings"`)
		}, []string{`contract.CapabilityEmbeddings: the release has "embeddings" (untyped string) on every platform; this build has "embeddings" (contract.CapabilityID)`}},
		{"missing on one platform, added", func(p release.Platform, b *release.Boundary) {
			if p == windows {
				b.Constants = slices.DeleteFunc(b.Constants, func(c release.Constant) bool { return c.ID() == "contract.HistorySchemaVersion" })
			}
			b.Constants = append(b.Constants, release.Constant{Package: "contract/privacy", Name: "Backdoor", Type: "untyped bool", Value: "true"})
		}, []string{
			`contract.HistorySchemaVersion: missing from the release on windows/amd64; this build has "runtime-history-v1" (untyped string) (the release differs between platforms)`,
			`contract/privacy.Backdoor: the release has true (untyped bool) on every platform; this build has no such constant`,
		}},
		{"registry function gone and changed", func(p release.Platform, b *release.Boundary) {
			b.Registries = slices.DeleteFunc(b.Registries, func(r release.Registry) bool { return r.ID() == "contract.IsRegisteredCapability" })
			for i, r := range b.Registries {
				if r.ID() == "contract.CapabilityIDs" && p == darwin {
					b.Registries[i].Signature = "func() []string"
				}
			}
		}, []string{
			`contract.CapabilityIDs: the release has func() []string on darwin/arm64; this build has func() []contract.CapabilityID (the release differs between platforms)`,
			`contract.IsRegisteredCapability: missing from the release on every platform; this build has func(string) bool`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bs := boundaryOn(ps, tc.edit)
			got := append(compareConstants(bs), compareRegistries(bs)...)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A declaration a build for some platforms compiles otherwise, or only
// there, is a difference, named with the files and platforms; so is a file
// no platform compiles. Files some platforms only compile are listed.
func TestDeclarationDifferences(t *testing.T) {
	linux, darwin, windows := release.Platform{GOOS: "linux", GOARCH: "amd64"}, release.Platform{GOOS: "darwin", GOARCH: "arm64"}, release.Platform{GOOS: "windows", GOARCH: "amd64"}
	decl := func(name, file, digest string) release.Declaration {
		return release.Declaration{Package: "contract", Name: name, File: file, Digest: digest}
	}
	cgo := release.IgnoredFile{File: "contract/cgo.go", Constraint: "cgo"}
	bs := []release.Boundary{
		{Platform: linux, Files: []string{"contract/a.go", "contract/is_other.go"}, Ignored: []release.IgnoredFile{cgo, {File: "contract/is_windows.go"}},
			Declarations: []release.Declaration{decl("A", "contract/a.go", "1"), decl("Is", "contract/is_other.go", "2"), decl("Same", "contract/is_other.go", "3")}},
		{Platform: darwin, Files: []string{"contract/a.go", "contract/is_other.go"}, Ignored: []release.IgnoredFile{cgo, {File: "contract/is_windows.go"}},
			Declarations: []release.Declaration{decl("A", "contract/a.go", "1"), decl("Is", "contract/is_other.go", "2"), decl("Same", "contract/is_other.go", "3")}},
		{Platform: windows, Files: []string{"contract/a.go", "contract/is_windows.go"}, Ignored: []release.IgnoredFile{cgo, {File: "contract/is_other.go", Constraint: "!windows"}},
			Declarations: []release.Declaration{decl("A", "contract/a.go", "1"), decl("Extra", "contract/is_windows.go", "4"), decl("Is", "contract/is_windows.go", "5"), decl("Same", "contract/is_windows.go", "3")}},
	}
	want := []string{
		"contract.Extra: the release declares it differently by platform: nowhere on linux/amd64, darwin/arm64; in contract/is_windows.go on windows/amd64",
		"contract.Is: the release declares it differently by platform: in contract/is_other.go on linux/amd64, darwin/arm64; in contract/is_windows.go on windows/amd64",
		"contract/cgo.go: no platform's build compiles it (//go:build cgo): a build with cgo, other tags or for another system would, and verify-release cannot see what it declares",
	}
	if got := append(compareDeclarations(bs), unbuiltFiles(bs)...); !slices.Equal(got, want) {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantFiles := "3 files, 2 of them on some platforms only: contract/is_other.go (linux/amd64, darwin/arm64), contract/is_windows.go (windows/amd64)"
	if got := filesSummary(bs); got != wantFiles {
		t.Errorf("files: %s\nwant:  %s", got, wantFiles)
	}
}

// A requirement of a module the generators and checks run that differs
// from this build's is a difference; one of another module is a note.
func TestRequirementDifferences(t *testing.T) {
	edited := func(edit func([]release.Requirement) []release.Requirement) []release.Requirement {
		return edit(slices.Clone(buildRequirements))
	}
	setVersion := func(path, version string) func([]release.Requirement) []release.Requirement {
		return func(rs []release.Requirement) []release.Requirement {
			for i := range rs {
				if rs[i].Path == path {
					rs[i].Version = version
				}
			}
			return rs
		}
	}
	drawn := "; the generators and checks (contract/gen, contract/conformance) run its code, so what they draw and judge may differ"
	notRun := " (the generators and checks do not run its code)"
	for _, tc := range []struct {
		name         string
		reqs         []release.Requirement
		drawing      []string
		diffs, notes []string
	}{
		{"equal", buildRequirements, buildDrawing, nil, nil},
		{"another rapid", edited(setVersion("pgregory.net/rapid", "v1.3.1")), buildDrawing,
			[]string{"pgregory.net/rapid: the release requires v1.3.1, this build v1.3.0" + drawn}, nil},
		{"no rapid", edited(func(rs []release.Requirement) []release.Requirement {
			return slices.DeleteFunc(rs, func(r release.Requirement) bool { return r.Path == "pgregory.net/rapid" })
		}), nil, []string{"pgregory.net/rapid: the release does not require it, this build requires v1.3.0" + drawn}, nil},
		{"a new module the checks run", edited(func(rs []release.Requirement) []release.Requirement {
			return append(rs, release.Requirement{Path: "example.com/dice", Version: "v1.0.0"})
		}), []string{"example.com/dice", "pgregory.net/rapid"}, []string{"example.com/dice: the release requires v1.0.0, this build does not require it" + drawn}, nil},
		{"another gomega", edited(setVersion("github.com/onsi/gomega", "v1.45.0")), buildDrawing,
			nil, []string{"github.com/onsi/gomega: the release requires v1.45.0, this build v1.44.0" + notRun}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs, notes := compareRequirements(tc.reqs, tc.drawing)
			if !slices.Equal(diffs, tc.diffs) || !slices.Equal(notes, tc.notes) {
				t.Errorf("differences %q\nnotes %q\nwant %q\nand %q", diffs, notes, tc.diffs, tc.notes)
			}
		})
	}
}

// pinTree copies the checkout's registry pin into a new folder, edited.
func pinTree(t *testing.T, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot, registryPin))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, filepath.FromSlash(registryPin))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	content := edit(string(data))
	if content == string(data) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func replace(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

func TestPinDifferences(t *testing.T) {
	pinWhere := "registry pin " + registryPin + ": "
	cases := []struct {
		name string
		edit func(string) string
		want []string
		err  string
	}{
		{name: "pinned contract version", edit: replace(`"contractVersion": "runtime-adapter-v1"`, `"contractVersion": "runtime-adapter-v2"`),
			want: []string{pinWhere + `contractVersion: the release has "runtime-adapter-v2", this build has "runtime-adapter-v1"`}},
		{name: "pinned capability order", edit: replace("\"compaction\",\n    \"provider-continuation\"", "\"provider-continuation\",\n    \"compaction\""),
			want: []string{pinWhere + `capabilityIds: the release has ["provider-continuation", "compaction", "embeddings", "local-kv-reuse"], this build has ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"]`}},
		{name: "pinned release line", edit: replace(`"release": "0.2"`, `"release": 0.2`),
			want: []string{pinWhere + `release is not a string; this build has "0.2"`}},
		{name: "pin member missing and added", edit: replace(`"localKvDiagnosticsVersion"`, `"localKvDiagnosticVersion"`),
			want: []string{pinWhere + `localKvDiagnosticsVersion is missing; this build has "local-kv-diagnostics-v1"`, pinWhere + `"localKvDiagnosticVersion" is not in this build's pin`}},
		{name: "pin not an object", edit: func(string) string { return "[]\n" }, err: pinWhere + "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := comparePin(pinTree(t, tc.edit))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
	if _, err := comparePin(t.TempDir()); err == nil || err.Error() != "registry pin "+registryPin+": missing from the release" {
		t.Errorf("a release without the pin: %v", err)
	}
}

// The probe program is valid Go that calls every registry function it is
// given, by kind.
func TestProbeSource(t *testing.T) {
	var regs []release.Registry
	for _, r := range buildRegistries {
		regs = append(regs, r.Registry)
	}
	src, err := probeSource(regs, []string{"a", "b\"c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`answers["contract.CapabilityIDs"] = contract.CapabilityIDs()`, `answers["contract.IsRegisteredCapability"] = test(contract.IsRegisteredCapability, probes)`, `"b\"c",`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the probe has no %q:\n%s", want, src)
		}
	}
}

// tamper publishes the checkout as version into the proxy dir and edits
// it: edits rewrite existing files (old to new, once each), adds write new
// ones.
func tamper(t *testing.T, dir, version string, edits map[string][][2]string, adds map[string]string) release.Published {
	t.Helper()
	p, err := release.Publish(dir, moduleRoot, version, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, reps := range edits {
		if err := p.Rewrite(name, func(b []byte) ([]byte, error) {
			for _, r := range reps {
				if !bytes.Contains(b, []byte(r[0])) {
					return nil, fmt.Errorf("no %q in %s", r[0], name)
				}
				b = bytes.Replace(b, []byte(r[0]), []byte(r[1]), 1)
			}
			return b, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range adds {
		if err := p.Write(name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// wantLines fails the test unless out holds every line of want, whole.
// boundaryModulePackages counts the packages of this module that this
// build's boundary packages compile, as go list names them.
func boundaryModulePackages(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"list", "-deps", "-f", "{{with .Module}}{{if .Main}}{{$.ImportPath}}{{end}}{{end}}"}
	for _, p := range release.BoundaryPackages {
		args = append(args, modulePath+"/"+p)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list the boundary packages' dependencies: %v", err)
	}
	return len(strings.Fields(string(out)))
}

func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("%s: no line %q in its output:\n%s", what, w, out)
		}
	}
}

// TestVerifyReleaseEndToEnd runs verify-release against a file proxy
// holding the checkout and tampered copies of it, offline: a clean copy
// holds; a build-tagged constant, a registry function that accepts
// anything, a renamed diagnostic code, checks that grade themselves
// beside a reference adapter that leaks, a registry function that accepts
// anything on Windows only and another version of rapid each exit 1
// naming what differs; a release that does not build exits 2. It builds
// the published commands, so it runs with the release smoke test only.
func TestVerifyReleaseEndToEnd(t *testing.T) {
	if os.Getenv(release.SmokeEnv) != "1" {
		t.Skipf("set %s=1 to run verify-release end to end", release.SmokeEnv)
	}
	dir := t.TempDir()
	good := tamper(t, dir, "v0.2.0-verify.1", nil, nil)
	tagged := tamper(t, dir, "v0.2.0-tampered.1", map[string][][2]string{
		"contract/registry.go": {
			{"\t// ContractVersion names the adapter contract implemented by this module.\n\tContractVersion = \"runtime-adapter-v1\"\n", ""},
			{"\tswitch id {\n\tcase CapabilityCompaction, CapabilityProviderContinuation, CapabilityEmbeddings, CapabilityLocalKVReuse:\n\t\treturn true\n\t}\n\treturn false", "\treturn id != \"\""},
		},
		"contract/diagnostics.go": {{`DiagnosticAdapterClosed = "adapter-closed"`, `DiagnosticAdapterClosed = "adapter-shut"`}},
	}, map[string]string{
		"contract/version_linux.go": "//go:build linux\n\npackage contract\n\n// ContractVersion names the adapter contract implemented by this module.\nconst ContractVersion = \"runtime-adapter-v9-tampered\"\n",
		"contract/version_other.go": "//go:build !linux\n\npackage contract\n\n// ContractVersion names the adapter contract implemented by this module.\nconst ContractVersion = \"runtime-adapter-v1\"\n",
	})
	selfGrading := tamper(t, dir, "v0.2.0-selfgrading.1", map[string][][2]string{
		"contract/conformance/runner.go": {{"status, f, reason := result(c.ID, err)", "status, f, reason := result(c.ID, nil)"}},
		"reference/adapter.go":           {{"Destination: res.Destination, Payload: res.Payload}", "Destination: res.Destination, Payload: leak(req.Payload)}"}},
	}, map[string]string{
		"reference/leak.go": "package reference\n\nimport \"encoding/json\"\n\nfunc leak(v any) json.RawMessage { b, _ := json.Marshal(v); return b }\n",
	})
	broken := tamper(t, dir, "v0.2.0-broken.1", map[string][][2]string{"cmd/adapterkit/main.go": {{"func main() {", "func main() {{"}}}, nil)
	// A registry function that accepts anything on Windows only: the
	// probe, which runs here, cannot see it.
	isRegistered := "// IsRegisteredCapability reports whether id is in the registry.\nfunc IsRegisteredCapability(id string) bool {\n\tswitch id {\n\tcase CapabilityCompaction, CapabilityProviderContinuation, CapabilityEmbeddings, CapabilityLocalKVReuse:\n\t\treturn true\n\t}\n\treturn false\n}\n"
	windowsOnly := tamper(t, dir, "v0.2.0-windows.1", map[string][][2]string{
		"contract/registry.go": {{isRegistered, ""}},
	}, map[string]string{
		"contract/registry_other.go":   "//go:build !windows\n\npackage contract\n\n" + isRegistered,
		"contract/registry_windows.go": "package contract\n\n// IsRegisteredCapability reports whether id is in the registry.\nfunc IsRegisteredCapability(id string) bool { return id != \"\" }\n",
	})
	// Another version of the module the generators draw with: the same
	// code under another version, as the proxy serves it.
	cacheDir, err := release.CacheProxy(deadline(t, time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	sums := republish(t, cacheDir, dir, "pgregory.net/rapid", "v1.3.0", "v1.3.1")
	otherRapid := tamper(t, dir, "v0.2.0-requirement.1", map[string][][2]string{
		"go.mod": {{"pgregory.net/rapid v1.3.0", "pgregory.net/rapid v1.3.1"}},
		"go.sum": {{"pgregory.net/rapid v1.3.0 ", sums + "pgregory.net/rapid v1.3.0 "}},
	}, nil)
	goMod, err := os.ReadFile(filepath.Join(moduleRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherRapid.Mod, bytes.Replace(goMod, []byte("pgregory.net/rapid v1.3.0"), []byte("pgregory.net/rapid v1.3.1"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	url, err := release.ProxyURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := cacheDir
	offline(t, url, cache)
	ps, err := release.Platforms(deadline(t, time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	var linux, others []string
	for _, p := range ps {
		if p.GOOS == "linux" {
			linux = append(linux, p.String())
		} else {
			others = append(others, p.String())
		}
	}

	verify := func(p release.Published) (int, string, string) {
		t0 := time.Now()
		code, out, errOut := verifyCLI(t, p.Version)
		t.Logf("verify-release %s: exit %d in %s\n%s", p.Version, code, time.Since(t0).Round(time.Millisecond), out)
		return code, out, errOut
	}

	n := len(conformance.Checks())
	code, out, errOut := verify(good)
	if code != exitPass || !strings.HasSuffix(out, "\n"+modulePath+"@"+good.Version+": the compatibility boundary holds\n") {
		t.Errorf("verify-release %s: exit %d\nstdout:\n%s\nstderr:\n%s", good.Version, code, out, errOut)
	}
	wantLines(t, good.Version, out,
		"registry pin "+registryPin+": equal to this build's",
		fmt.Sprintf("constants: %d exported constants of contract, contract/privacy, contract/localkv on %d platforms (%s): equal to this build's", len(buildConstants), len(ps), platformList(ps)),
		fmt.Sprintf("registry functions: %s on %d platforms: equal to this build's", registryList(), len(ps)),
		fmt.Sprintf("registry answers: %d functions asked %d probes on %s/%s, in a program built against the release: equal to this build's", len(buildRegistries), len(probeStrings()), runtime.GOOS, runtime.GOARCH),
		fmt.Sprintf("this build's %d checks on the release's adapterkit serve-reference --embeddings, over the bridge (embeddings required): %d passed", n, n),
		fmt.Sprintf("module requirements: %d in the release's go.mod, 0 differing from this build's, 0 of them of a module the generators and checks run (%s): equal to this build's", len(buildRequirements), strings.Join(buildDrawing, ", ")),
	)
	if !strings.Contains(out, fmt.Sprintf("\ndeclarations: every package-level declaration of the %d packages of the module the boundary packages compile, on %d platforms (", boundaryModulePackages(t), len(ps))) ||
		!strings.Contains(out, " files, the same on every platform): equal to this build's\n") {
		t.Errorf("verify-release %s does not say the declarations of every platform agree:\n%s", good.Version, out)
	}
	if prefix := fmt.Sprintf("this build's %d checks on the release's adapterkit serve-reference, over the bridge: ", n); !strings.Contains(out, "\n"+prefix) || strings.Contains(out, "failed") {
		t.Errorf("verify-release %s does not say that this build's %d checks passed on the release's serve-reference:\n%s", good.Version, n, out)
	}

	code, out, errOut = verify(tagged)
	if code != exitFail || strings.Contains(out, "boundary holds") {
		t.Errorf("verify-release %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", tagged.Version, code, out, errOut)
	}
	wantLines(t, tagged.Version, out,
		`  - contract.ContractVersion: the release has "runtime-adapter-v9-tampered" (untyped string) on `+strings.Join(linux, ", ")+`; this build has "runtime-adapter-v1" (untyped string) (the release differs between platforms)`,
		`  - contract.DiagnosticAdapterClosed: the release has "adapter-shut" (untyped string) on every platform; this build has "adapter-closed" (untyped string)`,
		"  - contract.ContractVersion: the release declares it differently by platform: in contract/version_other.go on "+strings.Join(others, ", ")+"; in contract/version_linux.go on "+strings.Join(linux, ", "),
	)
	if !strings.Contains(out, "  - contract.IsRegisteredCapability: the release answers otherwise than this build for ") || !strings.Contains(out, `(the release true, this build false)`) {
		t.Errorf("verify-release %s does not name the registry function that accepts anything:\n%s", tagged.Version, out)
	}

	code, out, errOut = verify(selfGrading)
	if code != exitFail || strings.Contains(out, "boundary holds") {
		t.Errorf("verify-release %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", selfGrading.Version, code, out, errOut)
	}
	wantLines(t, selfGrading.Version, out,
		"  - adapterkit serve-reference: check privacy fails: privacy-assertion-failed",
		"  - adapterkit serve-reference --embeddings: check privacy fails: privacy-assertion-failed",
	)

	code, out, errOut = verify(windowsOnly)
	if code != exitFail || strings.Contains(out, "boundary holds") {
		t.Errorf("verify-release %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", windowsOnly.Version, code, out, errOut)
	}
	if !strings.Contains(out, "\n  - contract.IsRegisteredCapability: the release declares it differently by platform: ") || !strings.Contains(out, "in contract/registry_windows.go on windows/") {
		t.Errorf("verify-release %s does not name the registry function declared otherwise on Windows:\n%s", windowsOnly.Version, out)
	}

	code, out, errOut = verify(otherRapid)
	if code != exitFail || strings.Contains(out, "boundary holds") {
		t.Errorf("verify-release %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", otherRapid.Version, code, out, errOut)
	}
	wantLines(t, otherRapid.Version, out,
		"  - pgregory.net/rapid: the release requires v1.3.1, this build v1.3.0; the generators and checks (contract/gen, contract/conformance) run its code, so what they draw and judge may differ",
	)

	// A release whose command does not build cannot be judged: exit 2,
	// saying so, while what could be compared still matches.
	code, out, errOut = verify(broken)
	if code != exitBroken || !strings.Contains(errOut, "cannot build the release's adapterkit command of "+modulePath+"@"+broken.Version+": go install: ") ||
		!strings.Contains(out, "registry functions: ") || strings.Contains(out, "boundary holds") {
		t.Errorf("verify-release %s (does not build): exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 saying the release cannot be built", broken.Version, code, out, errOut)
	}
}

// judge runs this build's whole catalogue on an adapterkit command over
// the bridge (here the test binary acting as this build's command).
//
// By default every check of the catalogue runs, the model check on a few
// steps and the projection check on a few histories (sampleChecks); the
// long form (ADAPTERKIT_STRESS=1) runs them at their defaults, as
// verify-release does.
func TestJudgeRunsThisBuildsCatalogue(t *testing.T) {
	t.Setenv(asCommandEnv, "1")
	var out, errOut bytes.Buffer
	v := &verdict{stdout: &out, stderr: &errOut, target: "this build"}
	if !long() {
		v.checkOpts = []conformance.Option{conformance.WithModelSteps(sampleModelSteps), conformance.WithHistories(sampleHistories)}
	}
	v.judge(deadline(t, 2*time.Minute), os.Args[0], []string{"serve-reference"})
	want := fmt.Sprintf("this build's %d checks on the release's adapterkit serve-reference, over the bridge: %d passed, 1 skipped\n", len(conformance.Checks()), len(conformance.Checks())-1)
	if len(v.diffs) > 0 || v.incomplete || out.String() != want {
		t.Fatalf("judge: differences %q, incomplete %t\nstdout %q\nwant %q\nstderr %s", v.diffs, v.incomplete, out.String(), want, errOut.String())
	}
}

// A difference is exit 1 whatever else happened; a part that could not be
// judged, without a difference, is 2; neither is 0.
func TestVerdictExit(t *testing.T) {
	for _, tc := range []struct {
		diffs      []string
		incomplete bool
		code       int
		last       string
	}{
		{nil, false, exitPass, "x: the compatibility boundary holds"},
		{[]string{"a differs"}, true, exitFail, "  - a differs"},
		{nil, true, exitBroken, "x: the compatibility boundary could not be judged (see above)"},
	} {
		var out bytes.Buffer
		v := &verdict{stdout: &out, stderr: &out, target: "x", diffs: tc.diffs, incomplete: tc.incomplete}
		code := v.exit()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if code != tc.code || lines[len(lines)-1] != tc.last {
			t.Errorf("diffs %q, incomplete %t: exit %d, last line %q; want %d, %q", tc.diffs, tc.incomplete, code, lines[len(lines)-1], tc.code, tc.last)
		}
	}
}

// republish publishes into the file proxy proxyDir a copy of path@from,
// as the file proxy cacheURL (the module cache) serves it, under the
// version to, and returns the go.sum lines of the copy.
func republish(t *testing.T, cacheURL, proxyDir, path, from, to string) string {
	t.Helper()
	u, err := url.Parse(cacheURL)
	if err != nil {
		t.Fatal(err)
	}
	esc, err := module.EscapePath(path)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(filepath.FromSlash(u.Path), filepath.FromSlash(esc), "@v")
	dst := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(src, from+".zip"))
	if err != nil {
		t.Fatalf("%s@%s is not in the module cache (go mod download): %v", path, from, err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, path+"@"+from+"/")
		if !ok {
			t.Fatalf("%s in the zip of %s@%s", f.Name, path, from)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(path + "@" + to + "/" + name)
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(src, from+".mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf("{\"Version\":%q,\"Time\":%q}\n", to, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{to + ".zip": buf.Bytes(), to + ".mod": mod, to + ".info": []byte(info), "list": []byte(to + "\n")} {
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zipHash, err := dirhash.HashZip(filepath.Join(dst, to+".zip"), dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(mod)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", path, to, zipHash, path, to, modHash)
}
