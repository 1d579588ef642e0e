package release

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// ModulePath is the path of the module this package publishes.
const ModulePath = "github.com/ds4context/adapterkit"

// SmokeEnv is the environment variable that turns on the tests that
// consume a published copy of the checkout (the release smoke test, and
// verify-release end to end): set it to "1". They build a consumer against
// the published module, which takes a minute or two on a cold build cache,
// so plain go test leaves them out; .ci/run turns them on.
const SmokeEnv = "ADAPTERKIT_RELEASE_SMOKE"

// Published names the files of one module version in a file proxy.
type Published struct {
	Path    string // module path
	Version string // module version
	Zip     string // the module zip
	Mod     string // the go.mod file
	Info    string // the version's JSON info
}

// Publish writes version of the module whose root is dir into the file
// proxy rooted at proxyDir, in the layout the go command reads:
// <escaped path>/@v/{list,VERSION.info,VERSION.mod,VERSION.zip}. The
// version is added to the list file (kept sorted, without duplicates), and
// at is the time the .info file records.
//
// The zip holds the files a commit of the checkout would publish: when dir
// is in a git work tree, the files git tracks or would track (ignored files
// are left out), otherwise every file under dir; in both cases nested
// modules (such as testdata/consumer), VCS folders and irregular files are
// left out, as golang.org/x/mod/zip does.
func Publish(proxyDir, dir, version string, at time.Time) (Published, error) {
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return Published{}, fmt.Errorf("release: %w", err)
	}
	path := modfile.ModulePath(goMod)
	if path == "" {
		return Published{}, fmt.Errorf("release: %s has no module line", filepath.Join(dir, "go.mod"))
	}
	if err := module.Check(path, version); err != nil {
		return Published{}, fmt.Errorf("release: %w", err)
	}
	if module.CanonicalVersion(version) != version {
		return Published{}, fmt.Errorf("release: version %q is not canonical (want %q)", version, module.CanonicalVersion(version))
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return Published{}, fmt.Errorf("release: %w", err)
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return Published{}, fmt.Errorf("release: %w", err)
	}
	vdir := filepath.Join(proxyDir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return Published{}, fmt.Errorf("release: %w", err)
	}
	p := Published{
		Path:    path,
		Version: version,
		Zip:     filepath.Join(vdir, escVersion+".zip"),
		Mod:     filepath.Join(vdir, escVersion+".mod"),
		Info:    filepath.Join(vdir, escVersion+".info"),
	}

	var buf bytes.Buffer
	if err := writeZip(&buf, module.Version{Path: path, Version: version}, dir); err != nil {
		return Published{}, err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, at.UTC().Truncate(time.Second)})
	if err != nil {
		return Published{}, fmt.Errorf("release: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{p.Zip, buf.Bytes()}, {p.Mod, goMod}, {p.Info, append(info, '\n')}} {
		if err := os.WriteFile(f.name, f.data, 0o644); err != nil {
			return Published{}, fmt.Errorf("release: %w", err)
		}
	}
	if err := addToList(filepath.Join(vdir, "list"), version); err != nil {
		return Published{}, err
	}
	return p, nil
}

// addToList adds version to a proxy's list file.
func addToList(list, version string) error {
	data, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release: %w", err)
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	if err := os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// writeZip writes the module zip of m from the module root dir.
func writeZip(w io.Writer, m module.Version, dir string) error {
	names, inGit, err := gitFiles(dir)
	if err != nil {
		return err
	}
	if !inGit {
		if err := modzip.CreateFromDir(w, m, dir); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		return nil
	}
	var files []modzip.File
	for _, name := range names {
		full := filepath.Join(dir, filepath.FromSlash(name))
		fi, err := os.Lstat(full)
		if errors.Is(err, os.ErrNotExist) {
			continue // tracked, but deleted in the work tree
		}
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if !fi.Mode().IsRegular() || isVCSPath(name) {
			continue
		}
		files = append(files, diskFile{name: name, full: full, info: fi})
	}
	if err := modzip.Create(w, m, files); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// commandDeadline bounds each git or go command this package runs.
const commandDeadline = time.Minute

// gitFiles lists, relative to dir and slash-separated, the files git tracks
// or would track under dir. inGit is false when dir is not in a git work
// tree (or git is not installed).
func gitFiles(dir string) (names []string, inGit bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandDeadline)
	defer cancel()
	check := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--is-inside-work-tree")
	if out, err := check.Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		return nil, false, nil
	}
	var stderr bytes.Buffer
	ls := exec.CommandContext(ctx, "git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Stderr = &stderr
	out, err := ls.Output()
	if err != nil {
		return nil, true, fmt.Errorf("release: git ls-files in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	for name := range strings.SplitSeq(string(out), "\x00") {
		if name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), true, nil
}

// isVCSPath reports whether a slash-separated path lies in a VCS folder,
// which CreateFromDir leaves out too.
func isVCSPath(name string) bool {
	for elem := range strings.SplitSeq(name, "/") {
		switch elem {
		case ".bzr", ".git", ".hg", ".svn":
			return true
		}
	}
	return false
}

// diskFile is a file of the work tree, as golang.org/x/mod/zip reads it.
type diskFile struct {
	name, full string
	info       os.FileInfo
}

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (os.FileInfo, error)  { return f.info, nil }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }

// ProxyURL returns the GOPROXY entry of the file proxy rooted at dir.
func ProxyURL(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter: file:///C:/...
	}
	return (&url.URL{Scheme: "file", Path: p}).String(), nil
}

// CacheProxy returns the GOPROXY entry that serves the modules already in
// the local module cache ($GOMODCACHE/cache/download), as the go command
// of the given environment (nil: this process's) sees it; ctx bounds the
// go command.
func CacheProxy(ctx context.Context, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMODCACHE")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("release: go env GOMODCACHE: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", errors.New("release: go env GOMODCACHE is empty")
	}
	return ProxyURL(filepath.Join(dir, "cache", "download"))
}

// OfflineEnv returns env (nil: this process's environment) with the
// settings under which the go command resolves modules only from the given
// GOPROXY entries — with file:// entries, it never reaches a network: no
// "direct" fallback to version control, no checksum database, no
// private-module exceptions (which would go direct), no toolchain download,
// and no go env file that could bring any of them back. modCache becomes GOMODCACHE,
// so that a published test version never lands in the shared module
// cache; it is left writable (-modcacherw) so that it can be removed, and
// builds use -trimpath so that they share the build cache across module
// caches. GOFLAGS also carries -mod=mod.
func OfflineEnv(env []string, modCache string, proxies ...string) []string {
	if env == nil {
		env = os.Environ()
	}
	set := map[string]string{
		"GOPROXY":     strings.Join(proxies, ","),
		"GOSUMDB":     "off",
		"GONOSUMDB":   "",
		"GOPRIVATE":   "",
		"GONOPROXY":   "",
		"GOINSECURE":  "",
		"GOTOOLCHAIN": "local",
		"GOENV":       "off",
		"GOWORK":      "off",
		"GOFLAGS":     "-mod=mod -modcacherw -trimpath",
		"GOMODCACHE":  modCache,
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out
}

// Rewrite replaces the content of the file name (a path inside the
// module, such as "contract/registry.go") in the published zip with edit's
// result, keeping every other entry as it is. It exists to test what the
// checks of a published release do when its bytes differ from the source.
func (p Published) Rewrite(name string, edit func([]byte) ([]byte, error)) error {
	found, err := p.edit(name, edit, false)
	if err == nil && !found {
		err = fmt.Errorf("release: %s holds no file %s", p.Zip, name)
	}
	return err
}

// Write puts a file name (a path inside the module) with content data into
// the published zip, replacing the file of that name if there is one. It
// exists, as Rewrite does, to test the checks of a published release.
func (p Published) Write(name string, data []byte) error {
	_, err := p.edit(name, func([]byte) ([]byte, error) { return data, nil }, true)
	return err
}

// edit rewrites the zip with name's content replaced by edit's result
// (added, when create is set and there is none); found says whether the
// zip held name.
func (p Published) edit(name string, edit func([]byte) ([]byte, error), create bool) (found bool, err error) {
	if name == "" || strings.HasPrefix(name, "/") || slices.Contains(strings.Split(name, "/"), "..") {
		return false, fmt.Errorf("release: %q is not a path inside the module", name)
	}
	zr, err := zip.OpenReader(p.Zip)
	if err != nil {
		return found, fmt.Errorf("release: %w", err)
	}
	defer zr.Close()
	target := p.Path + "@" + p.Version + "/" + name
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if f.Name != target {
			// Every other entry is copied as it is, still compressed.
			if err := zw.Copy(f); err != nil {
				return found, fmt.Errorf("release: %w", err)
			}
			continue
		}
		found = true
		rc, err := f.Open()
		if err != nil {
			return found, fmt.Errorf("release: %w", err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return found, fmt.Errorf("release: %w", err)
		}
		if data, err = edit(data); err != nil {
			return found, fmt.Errorf("release: editing %s: %w", name, err)
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			return found, fmt.Errorf("release: %w", err)
		}
		if _, err := w.Write(data); err != nil {
			return found, fmt.Errorf("release: %w", err)
		}
	}
	if !found && create {
		data, err := edit(nil)
		if err != nil {
			return found, fmt.Errorf("release: editing %s: %w", name, err)
		}
		w, err := zw.Create(target)
		if err != nil {
			return found, fmt.Errorf("release: %w", err)
		}
		if _, err := w.Write(data); err != nil {
			return found, fmt.Errorf("release: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return found, fmt.Errorf("release: %w", err)
	}
	if !found && !create {
		return false, nil
	}
	if err := os.WriteFile(p.Zip, buf.Bytes(), 0o644); err != nil {
		return found, fmt.Errorf("release: %w", err)
	}
	return found, nil
}
