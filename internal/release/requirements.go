package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// DrawingPackages are the packages, relative to the module root, whose
// code draws what the checks hand an adapter and judges what it answers:
// the generators and the catalogue of checks. Every face of the catalogue
// (package spec, the conform command) runs their code, so another version
// of a module they import changes what a seed draws, or a verdict.
var DrawingPackages = []string{"contract/gen", "contract/conformance"}

// Requirement is one require line of a go.mod file.
type Requirement struct {
	Path, Version string
}

// Requirements returns the require lines of the go.mod file of the module
// whose root is dir, sorted by module path.
func Requirements(dir string) ([]Requirement, error) {
	name := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	f, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	reqs := make([]Requirement, 0, len(f.Require))
	for _, r := range f.Require {
		reqs = append(reqs, Requirement{Path: r.Mod.Path, Version: r.Mod.Version})
	}
	slices.SortFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Path, b.Path) })
	return reqs, nil
}

// ModulesOf returns the paths of the modules, other than the module whose
// root is dir and the standard library, that provide a package a build
// for this platform of pkgs (relative to the module root) compiles, sorted.
// env is the go command's environment (nil: this process's); GOFLAGS is
// cleared and workspaces are off, so that the module's own go.mod decides.
// A package of pkgs the module does not have is left out.
func ModulesOf(ctx context.Context, dir string, env []string, pkgs ...string) ([]string, error) {
	modPath, err := modulePathOf(dir)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = os.Environ()
	}
	env = append(slices.Clip(env), "GOWORK=off", "GOFLAGS=")
	patterns := make([]string, len(pkgs))
	for i, p := range pkgs {
		patterns[i] = "./" + p
	}
	args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Module,Error", "--"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("release: go list: %v: %s", err, lastLine(stderr.String()))
	}
	var mods []string
	dec := json.NewDecoder(&stdout)
	for {
		var lp struct {
			ImportPath string
			Module     *struct{ Path string }
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&lp); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("release: go list -json: %w", err)
		}
		if lp.Error != nil {
			if strings.HasPrefix(lp.ImportPath, "./") || strings.HasPrefix(lp.ImportPath, modPath) {
				continue // a package the module does not have
			}
			return nil, &CompileError{Package: lp.ImportPath, Err: errors.New(lp.Error.Err)}
		}
		if lp.Module != nil && lp.Module.Path != modPath {
			mods = append(mods, lp.Module.Path)
		}
	}
	slices.Sort(mods)
	return slices.Compact(mods), nil
}
