package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// BoundaryPackages are the packages, relative to the module root, whose
// exported constants form the compatibility boundary of a release: the
// contract's types and registry, its privacy rules and its local KV rules.
var BoundaryPackages = []string{"contract", "contract/privacy", "contract/localkv"}

// Platform is a target of the go command.
type Platform struct{ GOOS, GOARCH string }

// String returns GOOS/GOARCH.
func (p Platform) String() string { return p.GOOS + "/" + p.GOARCH }

// Platforms returns the platforms the kit supports: the first-class ports
// of the go command of env (nil: this process's environment), as go tool
// dist list reports them, in its order.
func Platforms(ctx context.Context, env []string) ([]Platform, error) {
	cmd := exec.CommandContext(ctx, "go", "tool", "dist", "list", "-json")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("release: go tool dist list: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var ports []struct {
		GOOS, GOARCH string
		FirstClass   bool
	}
	if err := json.Unmarshal(out, &ports); err != nil {
		return nil, fmt.Errorf("release: go tool dist list -json: %w", err)
	}
	var ps []Platform
	for _, p := range ports {
		if p.FirstClass {
			ps = append(ps, Platform{p.GOOS, p.GOARCH})
		}
	}
	if len(ps) == 0 {
		return nil, errors.New("release: go tool dist list names no first-class port")
	}
	return ps, nil
}

// Constant is one exported package-level constant as a build for one
// platform compiles it: its package (relative to the module root), name,
// type (package-qualified the same way, "untyped string" for an untyped
// one) and exact value (a Go literal: strings quoted, numbers exact).
type Constant struct {
	Package, Name, Type, Value string
}

// ID returns package.Name.
func (c Constant) ID() string { return c.Package + "." + c.Name }

// Registry kinds: what a registry function does.
const (
	// RegistryList is a function of no argument that lists values of a
	// basic type: func() []T.
	RegistryList = "list"
	// RegistryTest is a function that tells whether a string is in a
	// registry: func(string) bool.
	RegistryTest = "test"
)

// Registry is one exported package-level function that is a registry (see
// RegistryList and RegistryTest), by package, name, kind and signature
// (qualified as Constant.Type is).
type Registry struct {
	Package, Name, Kind, Signature string
}

// ID returns package.Name.
func (r Registry) ID() string { return r.Package + "." + r.Name }

// Boundary is what a build for one platform compiles of the boundary
// packages: their exported constants and registry functions, each sorted
// by package and name; and of the packages of the module a build of them
// compiles — they and the packages of the module they import — the files
// it compiles and leaves out, and every package-level declaration.
type Boundary struct {
	Platform   Platform
	Constants  []Constant
	Registries []Registry
	// Files are the files the build compiles, relative to the module root
	// and slash-separated, sorted.
	Files []string
	// Ignored are the files of those packages the build leaves out for
	// their build constraints (test files and //go:build ignore files
	// aside), sorted.
	Ignored []IgnoredFile
	// Declarations are the package-level declarations of those packages,
	// sorted by package and name.
	Declarations []Declaration
}

// IgnoredFile is a file a build leaves out for its build constraint.
type IgnoredFile struct {
	File       string // relative to the module root, slash-separated
	Constraint string // its //go:build expression
}

// Declaration is one package-level declaration as a build compiles it: its
// package (relative to the module root, "." for the root), its name —
// "F" for a function, "T.M" for a method, each name of a constant,
// variable or type, "init" and "_" numbered by file and position — the
// file declaring it, and a digest of its tokens (comments and layout
// aside: two declarations with one digest compile alike).
type Declaration struct {
	Package, Name, File, Digest string
}

// ID returns package.Name.
func (d Declaration) ID() string { return d.Package + "." + d.Name }

// Load loads the packages (relative to the module whose root is dir) as a
// build for each platform sees them — the files its build constraints
// select, with cgo off — type-checks them and every package they import
// from source, and returns their boundary for each platform, in the order
// of platforms. Nothing of the packages runs: go/types evaluates every
// constant expression. env is the go command's environment (nil: this
// process's); GOOS, GOARCH and CGO_ENABLED are set for each platform, and
// GOFLAGS is cleared, so that no build tag of the caller's applies. A
// package that does not type-check is a *CompileError.
func Load(ctx context.Context, dir string, env []string, platforms []Platform, pkgs ...string) ([]Boundary, error) {
	modPath, err := modulePathOf(dir)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = os.Environ()
	}
	l := &loader{fset: token.NewFileSet(), parsed: map[string]*ast.File{}, decls: map[string][]Declaration{}}
	out := make([]Boundary, len(platforms))
	for i, p := range platforms {
		if out[i], err = l.load(ctx, dir, modPath, env, p, pkgs); err != nil {
			var ce *CompileError
			if errors.As(err, &ce) {
				ce.Platform = p
				return nil, ce
			}
			return nil, fmt.Errorf("release: %s: %w", p, err)
		}
	}
	return out, nil
}

// CompileError is a package of the module (or one it imports) that does
// not compile for a platform: it does not type-check, or is not there.
type CompileError struct {
	Platform Platform
	Package  string // import path
	Err      error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("package %s does not compile for %s: %v", e.Package, e.Platform, e.Err)
}

func (e *CompileError) Unwrap() error { return e.Err }

// loader type-checks packages for several platforms, parsing each file
// once: most files are the same on every platform.
type loader struct {
	fset   *token.FileSet
	parsed map[string]*ast.File
	decls  map[string][]Declaration // by file path
}

func (l *loader) load(ctx context.Context, dir, modPath string, env []string, platform Platform, pkgs []string) (Boundary, error) {
	b := Boundary{Platform: platform}
	// GOFLAGS is cleared so that no -tags of the caller's chooses files:
	// a platform's build is its GOOS and GOARCH.
	env = append(slices.Clip(env), "GOOS="+platform.GOOS, "GOARCH="+platform.GOARCH, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	patterns := make([]string, len(pkgs))
	for i, p := range pkgs {
		patterns[i] = "./" + p
	}
	listed, err := goList(ctx, dir, modPath, env, patterns)
	if err != nil {
		return b, err
	}
	sizes := types.SizesFor("gc", platform.GOARCH)
	if sizes == nil {
		return b, fmt.Errorf("no type sizes for GOARCH %s", platform.GOARCH)
	}
	qualify := func(p *types.Package) string {
		if r, ok := strings.CutPrefix(p.Path(), modPath+"/"); ok {
			return r
		}
		return p.Path()
	}
	checked := map[string]*types.Package{"unsafe": types.Unsafe}
	for _, lp := range listed {
		if lp.ImportPath == "unsafe" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return b, err
		}
		pkg, err := l.check(sizes, lp, checked)
		if err != nil {
			return b, err
		}
		checked[lp.ImportPath] = pkg
		rel, ok := strings.CutPrefix(lp.ImportPath, modPath+"/")
		if lp.ImportPath == modPath {
			rel, ok = ".", true
		}
		if !ok {
			continue
		}
		if err := l.record(&b, rel, lp); err != nil {
			return b, err
		}
		if !slices.Contains(pkgs, rel) {
			continue
		}
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			switch obj := obj.(type) {
			case *types.Const:
				b.Constants = append(b.Constants, Constant{Package: rel, Name: name, Type: types.TypeString(obj.Type(), qualify), Value: obj.Val().ExactString()})
			case *types.Func:
				if kind := registryKind(obj.Signature()); kind != "" {
					b.Registries = append(b.Registries, Registry{Package: rel, Name: name, Kind: kind, Signature: signature(obj.Signature(), qualify)})
				}
			}
		}
	}
	for _, p := range pkgs {
		if !slices.ContainsFunc(listed, func(lp listedPackage) bool { return lp.ImportPath == modPath+"/"+p }) {
			return b, &CompileError{Package: modPath + "/" + p, Err: errors.New("not in the module")}
		}
	}
	slices.SortFunc(b.Constants, func(x, y Constant) int { return strings.Compare(x.Package+"\x00"+x.Name, y.Package+"\x00"+y.Name) })
	slices.SortFunc(b.Registries, func(x, y Registry) int { return strings.Compare(x.Package+"\x00"+x.Name, y.Package+"\x00"+y.Name) })
	slices.SortFunc(b.Declarations, func(x, y Declaration) int { return strings.Compare(x.Package+"\x00"+x.Name, y.Package+"\x00"+y.Name) })
	slices.Sort(b.Files)
	slices.SortFunc(b.Ignored, func(x, y IgnoredFile) int { return strings.Compare(x.File, y.File) })
	return b, nil
}

// record adds to b the files of the module's package lp (rel to the module
// root), those it compiles and those it leaves out, and its declarations.
func (l *loader) record(b *Boundary, rel string, lp listedPackage) error {
	fileOf := func(name string) string {
		if rel == "." {
			return name
		}
		return rel + "/" + name
	}
	for _, name := range lp.GoFiles {
		path := filepath.Join(lp.Dir, name)
		ds, ok := l.decls[path]
		if !ok {
			src, err := os.ReadFile(path)
			if err != nil {
				return &CompileError{Package: lp.ImportPath, Err: err}
			}
			ds = declarations(l.fset, l.parsed[path], src, rel, fileOf(name))
			l.decls[path] = ds
		}
		b.Files = append(b.Files, fileOf(name))
		b.Declarations = append(b.Declarations, ds...)
	}
	for _, name := range lp.IgnoredGoFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		expr, err := buildConstraint(filepath.Join(lp.Dir, name))
		if err != nil {
			return &CompileError{Package: lp.ImportPath, Err: err}
		}
		if expr != "ignore" {
			b.Ignored = append(b.Ignored, IgnoredFile{File: fileOf(name), Constraint: expr})
		}
	}
	return nil
}

// signature writes sig without its parameter names, which a caller never
// sees: func(string) bool.
func signature(sig *types.Signature, qualify types.Qualifier) string {
	tuple := func(t *types.Tuple) string {
		s := make([]string, t.Len())
		for i := range t.Len() {
			s[i] = types.TypeString(t.At(i).Type(), qualify)
		}
		return strings.Join(s, ", ")
	}
	out := "func(" + tuple(sig.Params()) + ")"
	switch sig.Results().Len() {
	case 0:
	case 1:
		out += " " + tuple(sig.Results())
	default:
		out += " (" + tuple(sig.Results()) + ")"
	}
	return out
}

// registryKind returns the kind of registry a function of signature sig
// is, or "".
func registryKind(sig *types.Signature) string {
	if sig.TypeParams() != nil || sig.Variadic() || sig.Results().Len() != 1 {
		return ""
	}
	res := sig.Results().At(0).Type().Underlying()
	switch sig.Params().Len() {
	case 0:
		if s, ok := res.(*types.Slice); ok {
			if _, ok := s.Elem().Underlying().(*types.Basic); ok {
				return RegistryList
			}
		}
	case 1:
		param, ok := types.Unalias(sig.Params().At(0).Type()).(*types.Basic)
		result, ok2 := res.(*types.Basic)
		if ok && ok2 && param.Kind() == types.String && result.Kind() == types.Bool {
			return RegistryTest
		}
	}
	return ""
}

// listedPackage is what go list -json says of one package.
type listedPackage struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	ImportMap      map[string]string
	Error          *struct{ Err string }
}

// goList lists patterns (relative to the root of module modPath) and every
// package they import, dependencies first, in the module folder dir.
func goList(ctx context.Context, dir, modPath string, env, patterns []string) ([]listedPackage, error) {
	args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,IgnoredGoFiles,ImportMap,Error", "--"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, lastLine(stderr.String()))
	}
	var listed []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var lp listedPackage
		if err := dec.Decode(&lp); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -json: %w", err)
		}
		if lp.Error != nil {
			path := lp.ImportPath
			if rel, ok := strings.CutPrefix(path, "./"); ok {
				path = modPath + "/" + rel // a pattern go list found no package for
			}
			return nil, &CompileError{Package: path, Err: errors.New(lp.Error.Err)}
		}
		listed = append(listed, lp)
	}
	return listed, nil
}

// check parses and type-checks one listed package, whose imports are in
// checked. Function bodies are left out: no constant is declared in one
// that another package could see.
func (l *loader) check(sizes types.Sizes, lp listedPackage, checked map[string]*types.Package) (*types.Package, error) {
	if len(lp.CgoFiles) > 0 {
		return nil, &CompileError{Package: lp.ImportPath, Err: errors.New("needs cgo, which a build with cgo off leaves out")}
	}
	files := make([]*ast.File, 0, len(lp.GoFiles))
	for _, name := range lp.GoFiles {
		path := filepath.Join(lp.Dir, name)
		f, ok := l.parsed[path]
		if !ok {
			var err error
			if f, err = parser.ParseFile(l.fset, path, nil, parser.SkipObjectResolution); err != nil {
				return nil, &CompileError{Package: lp.ImportPath, Err: err}
			}
			l.parsed[path] = f
		}
		files = append(files, f)
	}
	var firstErr error
	conf := types.Config{
		IgnoreFuncBodies: true,
		Sizes:            sizes,
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if mapped, ok := lp.ImportMap[path]; ok {
				path = mapped
			}
			if p, ok := checked[path]; ok {
				return p, nil
			}
			return nil, fmt.Errorf("%s is not among the packages go list gave", path)
		}),
		Error: func(err error) {
			if firstErr == nil {
				firstErr = err
			}
		},
	}
	pkg, _ := conf.Check(lp.ImportPath, l.fset, files, nil)
	if firstErr != nil {
		return nil, &CompileError{Package: lp.ImportPath, Err: firstErr}
	}
	return pkg, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// modulePathOf reads the module path from dir's go.mod.
func modulePathOf(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	if path := modfile.ModulePath(data); path != "" {
		return path, nil
	}
	return "", fmt.Errorf("release: %s has no module line", filepath.Join(dir, "go.mod"))
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
