package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
	"github.com/ds4context/adapterkit/internal/release"
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
// and judges its compatibility boundary with this build: its registry pin,
// the constants and registry functions of the boundary packages as every
// supported platform compiles them, and this build's whole catalogue of
// checks run on its reference adapter over the bridge.
func verifyRelease(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("adapterkit verify-release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: adapterkit verify-release VERSION

Fetches `+modulePath+`@VERSION through the configured GOPROXY (as
go mod download does) and judges it with this build:
  - its `+registryRelease+` registry pin (`+registryPin+`) equals this build's;
  - every exported constant of `+strings.Join(release.BoundaryPackages, ", ")+`,
    loaded with build constraints applied and type-checked (never run) for
    every first-class platform of the go command, has this build's type and
    value on every platform, and no constant is missing or added;
  - the registry functions of those packages (func() []T, func(string) bool)
    exist with this build's signatures, and answer this build's probes as
    this build does (in a program built against the release);
  - every package-level declaration of those packages, and of the packages
    of the module they import, is the same, token for token, in every
    platform's build (none declared otherwise under a build constraint, or
    on some platforms only), and no file of them is left out by every
    platform's build;
  - the release's go.mod requires this build's version of every module the
    generators and checks (`+strings.Join(release.DrawingPackages, ", ")+`) run; other
    requirements that differ are listed as notes;
  - this build's whole catalogue of checks passes on the release's
    reference adapter (its adapterkit serve-reference, with and without
    --embeddings), run over the bridge.
The release's own checks are not asked: they could vouch for anything.
Not seen: a function body that misbehaves on an input no probe or check
tries, registry answers outside the probes, and what a build with cgo or
other tags would compile beyond the files named.
Exit status: 0 when the boundary holds, 1 when something differs, 2 when
the release cannot be fetched, built or run to a verdict (and nothing
else differs).
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

	v := &verdict{stdout: stdout, stderr: stderr, target: target}
	pinDiffs, pinErr := comparePin(mod.Dir)
	if pinErr != nil {
		pinDiffs = append(pinDiffs, pinErr.Error())
	}
	v.part("registry pin "+registryPin, pinDiffs)

	platforms, err := release.Platforms(ctx, nil)
	if err != nil {
		v.broken("cannot list the platforms", err)
		return v.exit()
	}
	bs, err := release.Load(ctx, mod.Dir, nil, platforms, release.BoundaryPackages...)
	var ce *release.CompileError
	switch {
	case errors.As(err, &ce):
		v.part("boundary packages", []string{fmt.Sprintf("%s of the release does not compile for %s: %s", relPackage(ce.Package), ce.Platform, clipText(ce.Err.Error()))})
	case err != nil:
		v.broken("cannot load the boundary packages", err)
	default:
		v.part(fmt.Sprintf("constants: %d exported constants of %s on %d platforms (%s)", len(buildConstants),
			strings.Join(release.BoundaryPackages, ", "), len(platforms), platformList(platforms)), compareConstants(bs))
		v.part(fmt.Sprintf("registry functions: %s on %d platforms", registryList(), len(platforms)), compareRegistries(bs))
		v.part(fmt.Sprintf("declarations: every package-level declaration of the %d packages of the module the boundary packages compile, on %d platforms (%s)",
			modulePackages(bs), len(platforms), filesSummary(bs)), append(compareDeclarations(bs), unbuiltFiles(bs)...))
	}
	v.requirements(ctx, mod.Dir)

	if bs != nil {
		probe, probed, err := buildProbe(ctx, tmp, mod, bs)
		switch {
		case err != nil:
			v.broken("cannot build the probe of the registry functions", err)
		case probe != "":
			diffs, n, err := probeRegistries(ctx, probe)
			if err != nil {
				v.broken("cannot run the probe of the registry functions", err)
			} else {
				v.part(fmt.Sprintf("registry answers: %d functions asked %d probes on %s/%s, in a program built against the release",
					len(probed), n, runtime.GOOS, runtime.GOARCH), diffs)
			}
		}
	}
	exe, err := installRelease(ctx, tmp, mod)
	if err != nil {
		v.broken("cannot build the release's adapterkit command", err)
		return v.exit()
	}
	for _, args := range [][]string{{"serve-reference"}, {"serve-reference", "--embeddings"}} {
		v.judge(ctx, exe, args)
	}
	return v.exit()
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
	return fmt.Sprintf("%s: %s: the release has %s, this build has %s", where, w.name, show(got), show(w.value))
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
