package release

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/internal/testgc"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// moduleRoot is the root of this module, seen from the package folder.
const moduleRoot = "../.."

// zipNames lists the files of a module zip, without the path@version/ prefix.
func zipNames(t *testing.T, p Published) []string {
	t.Helper()
	zr, err := zip.OpenReader(p.Zip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	prefix := p.Path + "@" + p.Version + "/"
	var names []string
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			t.Fatalf("zip entry %q lacks the prefix %q", f.Name, prefix)
		}
		names = append(names, name)
	}
	return names
}

func TestPublishTheCheckout(t *testing.T) {
	proxy := t.TempDir()
	at := time.Date(2026, 12, 1, 9, 30, 15, 500, time.UTC)
	p, err := Publish(proxy, moduleRoot, "v0.2.0-test.1", at)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != ModulePath {
		t.Errorf("module path %q, want %q", p.Path, ModulePath)
	}
	vdir := filepath.Join(proxy, "github.com", "ds4context", "adapterkit", "@v")
	for _, f := range []string{p.Zip, p.Mod, p.Info} {
		if filepath.Dir(f) != vdir {
			t.Errorf("%s is not in %s", f, vdir)
		}
	}

	if _, err := modzip.CheckZip(module.Version{Path: p.Path, Version: p.Version}, p.Zip); err != nil {
		t.Errorf("the zip is not a valid module zip: %v", err)
	}
	names := zipNames(t, p)
	for _, want := range []string{"go.mod", "go.sum", "contract/registry.go", "golden/testdata/registry-0.2.golden", "internal/release/release.go", "cmd/adapterkit/main.go"} {
		if !slices.Contains(names, want) {
			t.Errorf("the zip lacks %s", want)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "testdata/consumer/") || name == ".git" || strings.HasPrefix(name, ".git/") || strings.Contains(name, "/testdata/rapid/") {
			t.Errorf("the zip holds %s, which a release leaves out", name)
		}
	}

	goMod, err := os.ReadFile(filepath.Join(moduleRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if mod, _ := os.ReadFile(p.Mod); !bytes.Equal(mod, goMod) {
		t.Error("the .mod file differs from go.mod")
	}
	var info struct {
		Version string
		Time    time.Time
	}
	data, _ := os.ReadFile(p.Info)
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatalf("the .info file: %v", err)
	}
	if info.Version != p.Version || !info.Time.Equal(at.Truncate(time.Second)) {
		t.Errorf(".info = %+v, want version %s at %s", info, p.Version, at.Truncate(time.Second))
	}

	// The list of versions does not depend on what the zips hold: a
	// module of one file with the checkout's path publishes the others.
	small := t.TempDir()
	if err := os.WriteFile(filepath.Join(small, "go.mod"), []byte("module "+ModulePath+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(proxy, small, "v0.1.9", at); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(proxy, small, "v0.2.0-test.1", at); err != nil {
		t.Fatal(err)
	}
	list, _ := os.ReadFile(filepath.Join(vdir, "list"))
	if string(list) != "v0.1.9\nv0.2.0-test.1\n" {
		t.Errorf("list = %q, want both versions once, in semver order", list)
	}
}

// published is the checkout published once for the tests that only read
// or edit a copy of it (publishing zips the whole checkout).
var published struct {
	once sync.Once
	dir  string // the proxy, removed by TestMain
	p    Published
	err  error
}

func TestMain(m *testing.M) {
	code := testgc.Run(m)
	if published.dir != "" {
		os.RemoveAll(published.dir)
	}
	os.Exit(code)
}

// publishedCopy returns a copy of the checkout published as
// v0.2.0-test.2, in a file proxy of the test's own, and that proxy.
func publishedCopy(t *testing.T) (Published, string) {
	t.Helper()
	published.once.Do(func() {
		if published.dir, published.err = os.MkdirTemp("", "release-test-proxy-"); published.err == nil {
			published.p, published.err = Publish(published.dir, moduleRoot, "v0.2.0-test.2", time.Now())
		}
	})
	if published.err != nil {
		t.Fatal(published.err)
	}
	src := filepath.Dir(published.p.Zip)
	rel, err := filepath.Rel(published.dir, src)
	if err != nil {
		t.Fatal(err)
	}
	proxy := t.TempDir()
	dst := filepath.Join(proxy, rel)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	p := published.p
	for _, f := range []*string{&p.Zip, &p.Mod, &p.Info, new(filepath.Join(src, "list"))} {
		data, err := os.ReadFile(*f)
		if err != nil {
			t.Fatal(err)
		}
		*f = filepath.Join(dst, filepath.Base(*f))
		if err := os.WriteFile(*f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p, proxy
}

// TestGoModDownloadServesThePublishedZip has the go command fetch the
// published version through the file proxy, offline, and checks that it
// extracts the checkout's files with the zip's hash.
func TestGoModDownloadServesThePublishedZip(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	p, proxy := publishedCopy(t)
	url, err := ProxyURL(proxy)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", ModulePath+"@"+p.Version)
	cmd.Dir = t.TempDir()
	cmd.Env = OfflineEnv(nil, filepath.Join(t.TempDir(), "mod"), url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	var got struct{ Version, Dir, Sum, GoModSum, Error string }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("go mod download -json: %v\n%s", err, out)
	}
	want, err := dirhash.HashZip(p.Zip, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error != "" || got.Version != p.Version || got.Sum != want {
		t.Fatalf("go mod download = %+v, want version %s with sum %s", got, p.Version, want)
	}
	for _, name := range []string{"contract/registry.go", "golden/testdata/registry-0.2.golden"} {
		a, _ := os.ReadFile(filepath.Join(moduleRoot, filepath.FromSlash(name)))
		b, err := os.ReadFile(filepath.Join(got.Dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s as downloaded differs from the checkout (%v)", name, err)
		}
	}
}

// TestPublishOutsideGit covers a module folder that is no git work tree:
// every file is published except nested modules and VCS folders.
func TestPublishOutsideGit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("m.go", "package m\n")
	write("notes.txt", "kept\n")
	write("sub/go.mod", "module example.com/m/sub\n")
	write("sub/s.go", "package sub\n")
	write(".hg/store", "x")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--is-inside-work-tree").Output(); err == nil {
		t.Skip("the temp folder is inside a git work tree")
	}
	p, err := Publish(t.TempDir(), dir, "v1.0.0", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := zipNames(t, p), []string{"go.mod", "m.go", "notes.txt"}; !slices.Equal(sorted(got), want) {
		t.Errorf("zip holds %q, want %q", got, want)
	}
}

// TestPublishInGitLeavesIgnoredFilesOut covers a git work tree: tracked and
// untracked files are published, ignored ones are not.
func TestPublishInGitLeavesIgnoredFilesOut(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":                "module example.com/m\n\ngo 1.26\n",
		"m.go":                  "package m\n",
		".gitignore":            "*.test\ntestdata/rapid/\n",
		"m.test":                "binary",
		"testdata/rapid/x.fail": "fail file",
		"new.go":                "package m\n",
	} {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "go.mod", "m.go", ".gitignore")
	git("commit", "-q", "-m", "m")
	p, err := Publish(t.TempDir(), dir, "v1.0.0", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(zipNames(t, p)), []string{".gitignore", "go.mod", "m.go", "new.go"}; !slices.Equal(got, want) {
		t.Errorf("zip holds %q, want %q", got, want)
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestPublishRejectsBadInput(t *testing.T) {
	for _, v := range []string{"latest", "v0.2", "0.2.0", "v2.0.0", ""} {
		if _, err := Publish(t.TempDir(), moduleRoot, v, time.Now()); err == nil {
			t.Errorf("version %q was published", v)
		}
	}
	if _, err := Publish(t.TempDir(), t.TempDir(), "v1.0.0", time.Now()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder without go.mod: %v, want a missing-file error", err)
	}
}

func TestRewrite(t *testing.T) {
	p, _ := publishedCopy(t)
	before, crcs := zipNames(t, p), zipCRCs(t, p)
	err := p.Rewrite("golden/testdata/registry-0.2.golden", func(b []byte) ([]byte, error) {
		return bytes.Replace(b, []byte(`"0.2"`), []byte(`"0.3"`), 1), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := zipNames(t, p); !slices.Equal(after, before) {
		t.Error("Rewrite changed the zip's file list")
	}
	for name, crc := range zipCRCs(t, p) {
		if changed := crc != crcs[name]; changed != (name == "golden/testdata/registry-0.2.golden") {
			t.Errorf("%s: changed %t by the rewrite of golden/testdata/registry-0.2.golden", name, changed)
		}
	}
	if _, err := modzip.CheckZip(module.Version{Path: p.Path, Version: p.Version}, p.Zip); err != nil {
		t.Errorf("the rewritten zip is not a valid module zip: %v", err)
	}
	zr, err := zip.OpenReader(p.Zip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.Open(p.Path + "@" + p.Version + "/golden/testdata/registry-0.2.golden")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(f)
	f.Close()
	if !strings.Contains(buf.String(), `"release": "0.3"`) {
		t.Errorf("the rewritten file does not hold the edit:\n%s", buf.String())
	}
	if err := p.Rewrite("no/such/file.go", func(b []byte) ([]byte, error) { return b, nil }); err == nil {
		t.Error("rewriting a missing file succeeded")
	}
	boom := errors.New("boom")
	if err := p.Rewrite("go.mod", func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a failing edit: %v, want it wrapped", err)
	}
}

func TestOfflineEnv(t *testing.T) {
	env := OfflineEnv([]string{"HOME=/h", "GOPROXY=https://proxy.golang.org,direct", "GOPRIVATE=github.com/ds4context/*", "GOFLAGS=-x"}, "/m", "file:///a", "file:///b")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s is set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{
		"HOME": "/h", "GOPROXY": "file:///a,file:///b", "GOPRIVATE": "", "GONOPROXY": "", "GOSUMDB": "off",
		"GOTOOLCHAIN": "local", "GOENV": "off", "GOMODCACHE": "/m", "GOFLAGS": "-mod=mod -modcacherw -trimpath",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
}

func TestProxyURL(t *testing.T) {
	u, err := ProxyURL(filepath.Join(t.TempDir(), "a b"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, "file:///") || !strings.HasSuffix(u, "/a%20b") {
		t.Errorf("ProxyURL = %q, want an escaped file URL", u)
	}
}

// zipCRCs returns the CRC-32 of each file's content in p's zip, by name
// (without the path@version/ prefix), as read back from the content.
func zipCRCs(t *testing.T, p Published) map[string]uint32 {
	t.Helper()
	zr, err := zip.OpenReader(p.Zip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	crcs := map[string]uint32{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc) // checks the stored CRC-32 at the end
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		crcs[strings.TrimPrefix(f.Name, p.Path+"@"+p.Version+"/")] = crc32.ChecksumIEEE(data)
	}
	return crcs
}

// zipFile returns the content of the file name in p's zip, and whether it
// is there.
func zipFile(t *testing.T, p Published, name string) (string, bool) {
	t.Helper()
	zr, err := zip.OpenReader(p.Zip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.Open(p.Path + "@" + p.Version + "/" + name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return buf.String(), true
}

func TestWrite(t *testing.T) {
	p, _ := publishedCopy(t)
	before := zipNames(t, p)
	if err := p.Write("contract/version_linux.go", []byte("package contract\n")); err != nil {
		t.Fatal(err)
	}
	if err := p.Write("go.mod", []byte("module "+ModulePath+"\n")); err != nil {
		t.Fatal(err)
	}
	if after := zipNames(t, p); !slices.Equal(after, append(before, "contract/version_linux.go")) {
		t.Errorf("Write of a new file: the zip lists %d files, want the %d before and the new one", len(after), len(before))
	}
	if got, ok := zipFile(t, p, "contract/version_linux.go"); !ok || got != "package contract\n" {
		t.Errorf("the new file holds %q (there: %t)", got, ok)
	}
	if got, _ := zipFile(t, p, "go.mod"); got != "module "+ModulePath+"\n" {
		t.Errorf("the replaced file holds %q", got)
	}
	for _, bad := range []string{"", "/etc/passwd", "../outside.go", "a/../../b.go"} {
		if err := p.Write(bad, nil); err == nil {
			t.Errorf("Write(%q) succeeded", bad)
		}
	}
}
