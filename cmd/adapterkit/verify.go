package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/ds4context/adapterkit/contract"
)

// modulePath is the module verify-release fetches.
const modulePath = "github.com/ds4context/adapterkit"

// registryRelease is the release line whose compatibility registry this
// build pins, and registryPin the golden file, inside the module, that
// pins it.
const (
	registryRelease = "0.2"
	registryPin     = "golden/testdata/registry-" + registryRelease + ".golden"
)

// namedValue is one value of the compatibility boundary.
type namedValue struct {
	name  string
	value any // string or []string
}

// boundaryConstants are this build's registry constants of package
// contract, by their names in the source.
func boundaryConstants() []namedValue {
	return []namedValue{
		{"ContractVersion", contract.ContractVersion},
		{"HistorySchemaVersion", contract.HistorySchemaVersion},
		{"ConformanceVersion", contract.ConformanceVersion},
		{"LocalKVEligibilityVersion", contract.LocalKVEligibilityVersion},
		{"LocalKVRuntimePortVersion", contract.LocalKVRuntimePortVersion},
		{"LocalKVDiagnosticsVersion", contract.LocalKVDiagnosticsVersion},
		{"CapabilityCompaction", contract.CapabilityCompaction},
		{"CapabilityProviderContinuation", contract.CapabilityProviderContinuation},
		{"CapabilityEmbeddings", contract.CapabilityEmbeddings},
		{"CapabilityLocalKVReuse", contract.CapabilityLocalKVReuse},
		{"CapabilityIDs()", contract.CapabilityIDs()},
	}
}

// boundaryPin is this build's registry pin, member by member, in the
// order of the golden file.
func boundaryPin() []namedValue {
	return []namedValue{
		{"release", registryRelease},
		{"contractVersion", contract.ContractVersion},
		{"historySchemaVersion", contract.HistorySchemaVersion},
		{"conformanceVersion", contract.ConformanceVersion},
		{"capabilityIds", contract.CapabilityIDs()},
		{"localKvEligibilityVersion", contract.LocalKVEligibilityVersion},
		{"localKvRuntimePortVersion", contract.LocalKVRuntimePortVersion},
		{"localKvDiagnosticsVersion", contract.LocalKVDiagnosticsVersion},
	}
}

// downloaded is what go mod download -json reports for one module.
type downloaded struct {
	Path, Version, Error, Dir, Sum string
}

// verifyRelease fetches modulePath@VERSION through the configured GOPROXY
// and checks its compatibility boundary against this build.
func verifyRelease(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("adapterkit verify-release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: adapterkit verify-release VERSION

Fetches `+modulePath+`@VERSION through the configured GOPROXY (as
go mod download does), checks that its `+registryRelease+` registry pin and contract constants
equal this build's, and runs the reference adapter's conformance from the
downloaded source. Exit status: 0 when the boundary holds, 1 when something
differs, 2 when the release cannot be fetched, or its conformance cannot be
built or run to a verdict (and nothing else differs).
`)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitBroken
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitBroken
	}
	version := fs.Arg(0)
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		fmt.Fprintf(stderr, "adapterkit verify-release: %q is not a canonical semantic version such as v0.2.0\n", version)
		return exitBroken
	}
	target := modulePath + "@" + version
	tmp, err := os.MkdirTemp("", "adapterkit-verify-")
	if err != nil {
		fmt.Fprintln(stderr, "adapterkit verify-release:", err)
		return exitBroken
	}
	defer os.RemoveAll(tmp)

	mod, err := download(ctx, tmp, target)
	if err != nil {
		fmt.Fprintf(stderr, "adapterkit verify-release: cannot fetch %s: %v\n", target, err)
		return exitBroken
	}
	fmt.Fprintf(stdout, "fetched %s (%s)\n", target, mod.Sum)

	var diffs []string
	pinDiffs, pinErr := comparePin(mod.Dir)
	diffs = append(diffs, pinDiffs...)
	if pinErr == nil && len(pinDiffs) == 0 {
		fmt.Fprintf(stdout, "registry pin %s: equal to this build's\n", registryPin)
	} else {
		fmt.Fprintf(stdout, "registry pin %s: differs from this build's (listed below)\n", registryPin)
	}
	constDiffs, constErr := compareConstants(mod.Dir)
	diffs = append(diffs, constDiffs...)
	if constErr == nil && len(constDiffs) == 0 {
		fmt.Fprintln(stdout, "contract constants: equal to this build's")
	} else {
		fmt.Fprintln(stdout, "contract constants: differ from this build's (listed below)")
	}
	for _, err := range []error{pinErr, constErr} {
		if err != nil {
			diffs = append(diffs, err.Error())
		}
	}

	fmt.Fprintf(stdout, "reference conformance of %s:\n", target)
	passed, err := conformRelease(ctx, tmp, version, stdout, stderr)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "adapterkit verify-release: cannot run the reference conformance of %s: %v\n", target, err)
	case !passed:
		diffs = append(diffs, "the reference adapter of the release fails its conformance checks (table above)")
	}

	if len(diffs) > 0 {
		fmt.Fprintf(stdout, "\n%s: the compatibility boundary does not hold:\n", target)
		for _, d := range diffs {
			fmt.Fprintf(stdout, "  - %s\n", d)
		}
		return exitFail
	}
	if err != nil {
		return exitBroken
	}
	fmt.Fprintf(stdout, "\n%s: the compatibility boundary holds\n", target)
	return exitPass
}

// goCommand returns the go command run in dir with this process's
// environment (its GOPROXY, GOFLAGS, module cache), outside any workspace.
func goCommand(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	return cmd
}

// download runs go mod download -json for target in dir.
func download(ctx context.Context, dir, target string) (downloaded, error) {
	var stdout, stderr bytes.Buffer
	cmd := goCommand(ctx, dir, nil, "mod", "download", "-json", target)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var mod downloaded
	if err := json.Unmarshal(stdout.Bytes(), &mod); err != nil {
		if runErr != nil {
			return mod, fmt.Errorf("go mod download: %v: %s", runErr, lastLines(stderr.String(), 5))
		}
		return mod, fmt.Errorf("go mod download -json: %w", err)
	}
	switch {
	case mod.Error != "":
		return mod, errors.New(mod.Error)
	case runErr != nil:
		return mod, fmt.Errorf("go mod download: %v: %s", runErr, lastLines(stderr.String(), 5))
	case mod.Dir == "":
		return mod, errors.New("go mod download reported no module folder")
	}
	return mod, nil
}

// lastLines returns the last n non-empty lines of s, joined by "; ".
func lastLines(s string, n int) string {
	lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(s), "\n"), func(l string) bool { return strings.TrimSpace(l) == "" })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// comparePin compares the release's registry pin, the golden file in the
// module folder dir, with this build's. It returns the differences, and an
// error when the file cannot be read as a JSON object.
func comparePin(dir string) ([]string, error) {
	where := "registry pin " + registryPin
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(registryPin)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: missing from the release", where)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return nil, fmt.Errorf("%s: not a JSON object", where)
	}
	var diffs []string
	want := boundaryPin()
	for _, w := range want {
		raw, ok := members[w.name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s is missing; this build has %s", where, w.name, show(w.value)))
			continue
		}
		var got any
		switch w.value.(type) {
		case string:
			var s string
			if json.Unmarshal(raw, &s) != nil {
				diffs = append(diffs, fmt.Sprintf("%s: %s is not a string; this build has %s", where, w.name, show(w.value)))
				continue
			}
			got = s
		case []string:
			var ss []string
			if json.Unmarshal(raw, &ss) != nil {
				diffs = append(diffs, fmt.Sprintf("%s: %s is not a list of strings; this build has %s", where, w.name, show(w.value)))
				continue
			}
			got = ss
		}
		if d := differs(where, w, got); d != "" {
			diffs = append(diffs, d)
		}
	}
	var extra []string
	for name := range members {
		if !slices.ContainsFunc(want, func(w namedValue) bool { return w.name == name }) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		diffs = append(diffs, fmt.Sprintf("%s: %s is not in this build's pin", where, show(name)))
	}
	return diffs, nil
}

// compareConstants reads the registry constants from the source of package
// contract in the module folder dir — parsed, never run — and compares
// them with this build's.
func compareConstants(dir string) ([]string, error) {
	src, err := readRegistry(filepath.Join(dir, "contract"))
	if err != nil {
		return nil, err
	}
	var diffs []string
	for _, w := range boundaryConstants() {
		var got any
		s, found := src.consts[w.name]
		switch {
		case w.name == "CapabilityIDs()" && src.ids != nil:
			got = src.ids
		case w.name == "CapabilityIDs()":
			diffs = append(diffs, fmt.Sprintf("contract.%s: not found in the release; this build has %s", w.name, show(w.value)))
			continue
		case src.computed[w.name]:
			diffs = append(diffs, fmt.Sprintf("contract.%s: not a string literal in the release; this build has %s", w.name, show(w.value)))
			continue
		case !found:
			diffs = append(diffs, fmt.Sprintf("contract.%s: not found in the release; this build has %s", w.name, show(w.value)))
			continue
		default:
			got = s
		}
		if d := differs("contract", w, got); d != "" {
			diffs = append(diffs, d)
		}
	}
	return diffs, nil
}

// differs describes how got differs from w's value, or returns "".
func differs(where string, w namedValue, got any) string {
	var equal bool
	switch v := w.value.(type) {
	case string:
		equal = got == v
	case []string:
		g, _ := got.([]string)
		equal = slices.Equal(g, v)
	}
	if equal {
		return ""
	}
	sep := ": "
	if where == "contract" {
		sep = "."
	}
	return fmt.Sprintf("%s%s%s: the release has %s, this build has %s", where, sep, w.name, show(got), show(w.value))
}

// show quotes a value of the boundary for the report, shortening long
// strings: the values come from a download.
func show(v any) string {
	const limit = 80
	quote := func(s string) string {
		if len(s) > limit {
			s = s[:limit] + "..."
		}
		return strconv.Quote(s)
	}
	switch v := v.(type) {
	case string:
		return quote(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprintf("%T", v)
}

// registrySource is what readRegistry finds in a package's source.
type registrySource struct {
	consts   map[string]string // top-level constants given as a string literal
	computed map[string]bool   // top-level constants given by any other expression
	ids      []string          // what func CapabilityIDs returns; nil without one
}

// readRegistry parses the non-test Go files of the package folder dir for
// its top-level constants and the constants (resolved to their values)
// that func CapabilityIDs returns.
func readRegistry(dir string) (registrySource, error) {
	src := registrySource{consts: map[string]string{}, computed: map[string]bool{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return src, fmt.Errorf("package contract of the release: %w", err)
	}
	fset := token.NewFileSet()
	var idsFunc *ast.FuncDecl
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return src, fmt.Errorf("package contract of the release: %w", err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if s, ok := valueAt(vs.Values, i); ok {
							src.consts[n.Name] = s
						} else {
							src.computed[n.Name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "CapabilityIDs" {
					idsFunc = d
				}
			}
		}
	}
	if idsFunc != nil {
		if src.ids, err = returnedList(idsFunc, src.consts); err != nil {
			return src, fmt.Errorf("contract.CapabilityIDs() of the release: %w", err)
		}
	}
	return src, nil
}

// valueAt returns values[i] when it is a string literal.
func valueAt(values []ast.Expr, i int) (string, bool) {
	if i >= len(values) {
		return "", false
	}
	return stringLit(values[i])
}

// returnedList reads the composite literal that a function of one return
// statement returns, resolving identifiers among consts.
func returnedList(fn *ast.FuncDecl, consts map[string]string) ([]string, error) {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return nil, errors.New("not a single return statement")
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, errors.New("not a single return statement")
	}
	lit, ok := ret.Results[0].(*ast.CompositeLit)
	if !ok {
		return nil, errors.New("does not return a list literal")
	}
	ids := []string{}
	for _, elt := range lit.Elts {
		if s, ok := stringLit(elt); ok {
			ids = append(ids, s)
			continue
		}
		id, ok := elt.(*ast.Ident)
		if !ok {
			return nil, errors.New("returns an element that is neither a constant nor a string")
		}
		s, ok := consts[id.Name]
		if !ok {
			return nil, fmt.Errorf("returns %s, which is not a string constant of the package", id.Name)
		}
		ids = append(ids, s)
	}
	return ids, nil
}

// stringLit returns the value of a string literal expression.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// conformRelease builds the release's adapterkit command with go install
// and runs its conform command, which checks the release's reference
// adapter; the table goes to stdout. passed is its verdict; err says that
// it could not be built or run to a verdict.
func conformRelease(ctx context.Context, tmp, version string, stdout, stderr io.Writer) (passed bool, err error) {
	bin := filepath.Join(tmp, "bin")
	var out bytes.Buffer
	install := goCommand(ctx, tmp, []string{"GOBIN=" + bin}, "install", modulePath+"/cmd/adapterkit@"+version)
	install.Stdout, install.Stderr = &out, &out
	if err := install.Run(); err != nil {
		return false, fmt.Errorf("go install: %v: %s", err, lastLines(out.String(), 10))
	}
	exe := filepath.Join(bin, "adapterkit")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	cmd := exec.CommandContext(ctx, exe, "conform")
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == exitFail:
		return false, nil
	}
	return false, fmt.Errorf("adapterkit conform: %w", err)
}
