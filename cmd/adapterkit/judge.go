package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/release"
)

// registryFunc is one of this build's registry functions, callable: list
// for a release.RegistryList, test for a release.RegistryTest.
type registryFunc struct {
	release.Registry
	list func() any
	test func(string) bool
}

// verdict collects what verify-release found, part by part.
type verdict struct {
	stdout, stderr io.Writer
	target         string
	diffs          []string // differences from this build
	incomplete     bool     // something could not be judged
	// checkOpts are added to the options of every catalogue run judge
	// makes: none for verify-release; fewer model steps and histories in
	// the default form of the command's tests.
	checkOpts []conformance.Option
}

// part prints whether what was compared equals this build's, and keeps
// the differences for the list at the end.
func (v *verdict) part(what string, diffs []string) {
	if len(diffs) == 0 {
		fmt.Fprintf(v.stdout, "%s: equal to this build's\n", what)
	} else {
		noun := "differences"
		if len(diffs) == 1 {
			noun = "difference"
		}
		fmt.Fprintf(v.stdout, "%s: %d %s from this build's (listed below)\n", what, len(diffs), noun)
	}
	v.diffs = append(v.diffs, diffs...)
}

// broken records that a part could not be judged.
func (v *verdict) broken(what string, err error) {
	fmt.Fprintf(v.stderr, "adapterkit verify-release: %s of %s: %v\n", what, v.target, err)
	v.incomplete = true
}

// exit prints the verdict and returns the exit status: a difference is
// 1, whatever else happened; a part that could not be judged is 2.
func (v *verdict) exit() int {
	if len(v.diffs) > 0 {
		fmt.Fprintf(v.stdout, "\n%s: the compatibility boundary does not hold:\n", v.target)
		for _, d := range v.diffs {
			fmt.Fprintf(v.stdout, "  - %s\n", d)
		}
		return exitFail
	}
	if v.incomplete {
		fmt.Fprintf(v.stdout, "\n%s: the compatibility boundary could not be judged (see above)\n", v.target)
		return exitBroken
	}
	fmt.Fprintf(v.stdout, "\n%s: the compatibility boundary holds\n", v.target)
	return exitPass
}

// judge runs this build's whole catalogue of checks on the release's
// adapterkit command exe with args (a serve-reference command) over the
// bridge. With --embeddings, the embeddings capability is required, so
// its checks must pass rather than skip.
func (v *verdict) judge(ctx context.Context, exe string, args []string) {
	name := "adapterkit " + strings.Join(args, " ")
	opts := slices.Clone(v.checkOpts)
	if slices.Contains(args, "--embeddings") {
		opts = append(opts, conformance.WithRequiredCapabilities(contract.CapabilityEmbeddings))
	}
	settings := conformance.Resolve(opts...)
	factory := bridge.NewFactory(bridge.ExecConfig{Path: exe, Args: args, Stderr: v.stderr,
		Options: bridge.Options{CallTimeout: settings.CallTimeout}})
	rep := conformance.RunChecks(ctx, factory, opts...)
	if err := ctx.Err(); err != nil {
		v.broken("this build's checks on "+name, err)
		return
	}
	passed, failed, skipped := rep.Counts()
	what := fmt.Sprintf("this build's %d checks on the release's %s, over the bridge", len(rep.Checks), name)
	if slices.Contains(args, "--embeddings") {
		what += " (embeddings required)"
	}
	counts := fmt.Sprintf("%d passed", passed)
	if skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", skipped)
	}
	var diffs []string
	for _, c := range rep.Checks {
		if c.Status == conformance.StatusFail || c.Status == conformance.StatusError {
			diffs = append(diffs, fmt.Sprintf("%s: check %s fails: %s", name, c.ID, c.Failure.Code))
		}
	}
	for _, p := range rep.Problems {
		diffs = append(diffs, fmt.Sprintf("%s: %s", name, p))
	}
	if failed > 0 {
		fmt.Fprintf(v.stdout, "%s: %s, %d failed (listed below)\n", what, counts, failed)
	} else if len(diffs) == 0 {
		fmt.Fprintf(v.stdout, "%s: %s\n", what, counts)
	} else {
		fmt.Fprintf(v.stdout, "%s: %s, with problems (listed below)\n", what, counts)
	}
	v.diffs = append(v.diffs, diffs...)
}

// compareConstants compares the release's constants on every platform
// with this build's, which are the same on every platform.
func compareConstants(bs []release.Boundary) []string {
	build := map[string]string{}
	for _, c := range buildConstants {
		build[c.ID()] = constantText(c)
	}
	got := make([]map[string]string, len(bs))
	for i, b := range bs {
		got[i] = map[string]string{}
		for _, c := range b.Constants {
			got[i][c.ID()] = constantText(c)
		}
	}
	return compareByPlatform(bs, build, got, "constant")
}

// constantText is how a constant's type and value are compared and shown.
func constantText(c release.Constant) string {
	return clipText(c.Value) + " (" + c.Type + ")"
}

// compareRegistries compares the release's registry functions on every
// platform with this build's.
func compareRegistries(bs []release.Boundary) []string {
	build := map[string]string{}
	for _, r := range buildRegistries {
		build[r.ID()] = r.Signature
	}
	got := make([]map[string]string, len(bs))
	for i, b := range bs {
		got[i] = map[string]string{}
		for _, r := range b.Registries {
			got[i][r.ID()] = r.Signature
		}
	}
	return compareByPlatform(bs, build, got, "registry function")
}

// compareByPlatform compares what each platform's build of the release has
// (got[i] for bs[i]: name to text) with this build's, and describes every
// difference: a name whose text differs, is missing or is added, on which
// platforms, and whether the release itself differs between platforms.
func compareByPlatform(bs []release.Boundary, build map[string]string, got []map[string]string, noun string) []string {
	names := map[string]bool{}
	for name := range build {
		names[name] = true
	}
	for _, g := range got {
		for name := range g {
			names[name] = true
		}
	}
	const absent = "\x00absent"
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(names)) {
		want, inBuild := build[name]
		if !inBuild {
			want = absent
		}
		// The release's texts, in order of first platform, with their
		// platforms.
		var texts []string
		on := map[string][]release.Platform{}
		for i, g := range got {
			text, ok := g[name]
			if !ok {
				text = absent
			}
			if _, seen := on[text]; !seen {
				texts = append(texts, text)
			}
			on[text] = append(on[text], bs[i].Platform)
		}
		varies := ""
		if len(texts) > 1 {
			varies = " (the release differs between platforms)"
		}
		for _, text := range texts {
			if text == want {
				continue
			}
			where := platformsText(on[text], len(bs))
			switch {
			case text == absent:
				diffs = append(diffs, fmt.Sprintf("%s: missing from the release %s; this build has %s%s", name, where, want, varies))
			case !inBuild:
				diffs = append(diffs, fmt.Sprintf("%s: the release has %s %s; this build has no such %s%s", name, text, where, noun, varies))
			default:
				diffs = append(diffs, fmt.Sprintf("%s: the release has %s %s; this build has %s%s", name, text, where, want, varies))
			}
		}
	}
	return diffs
}

// platformsText says on which of all n platforms something is.
func platformsText(ps []release.Platform, n int) string {
	if len(ps) == n {
		return "on every platform"
	}
	return "on " + platformList(ps)
}

func platformList(ps []release.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// registryList names this build's registry functions.
func registryList() string {
	s := make([]string, len(buildRegistries))
	for i, r := range buildRegistries {
		s[i] = r.ID()
	}
	return strings.Join(s, ", ")
}

// relPackage returns an import path of the module relative to its root.
func relPackage(path string) string {
	if rel, ok := strings.CutPrefix(path, modulePath+"/"); ok {
		return rel
	}
	return path
}

// clipText cuts text from a download to a length a report can show.
func clipText(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// installRelease builds the release's adapterkit command into tmp with go
// install, and returns its file.
func installRelease(ctx context.Context, tmp string, mod downloaded) (string, error) {
	binDir := filepath.Join(tmp, "bin")
	var out bytes.Buffer
	install := goCommand(ctx, tmp, []string{"GOBIN=" + binDir}, "install", modulePath+"/cmd/adapterkit@"+mod.Version)
	install.Stdout, install.Stderr = &out, &out
	if err := install.Run(); err != nil {
		return "", fmt.Errorf("go install: %v: %s", err, lastLines(out.String(), 10))
	}
	return filepath.Join(binDir, exeName("adapterkit")), nil
}

// buildProbe builds, in tmp, a program calling against the release each
// registry function this build shares with the release's build for this
// platform, and returns its file with the functions it probes (none when
// they share none).
func buildProbe(ctx context.Context, tmp string, mod downloaded, bs []release.Boundary) (string, []release.Registry, error) {
	host := release.Platform{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	i := slices.IndexFunc(bs, func(b release.Boundary) bool { return b.Platform == host })
	var hostBoundary release.Boundary
	if i >= 0 {
		hostBoundary = bs[i]
	} else {
		loaded, err := release.Load(ctx, mod.Dir, nil, []release.Platform{host}, release.BoundaryPackages...)
		if err != nil {
			return "", nil, err
		}
		hostBoundary = loaded[0]
	}
	var shared []release.Registry
	for _, r := range buildRegistries {
		if slices.Contains(hostBoundary.Registries, r.Registry) {
			shared = append(shared, r.Registry)
		}
	}
	if len(shared) == 0 {
		return "", nil, nil
	}
	goVersion, err := releaseGoVersion(mod.Dir)
	if err != nil {
		return "", nil, err
	}
	src, err := probeSource(shared, probeStrings())
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(tmp, "probe")
	goMod := fmt.Sprintf("module adapterkit.invalid/probe\n\ngo %s\n\nrequire %s %s\n", goVersion, modulePath, mod.Version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	for name, data := range map[string][]byte{"go.mod": []byte(goMod), "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", nil, err
		}
	}
	var out bytes.Buffer
	probe := filepath.Join(tmp, "bin", exeName("probe"))
	build := goCommand(ctx, dir, nil, "build", "-mod=mod", "-o", probe, ".")
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		return "", nil, fmt.Errorf("go build: %v: %s", err, lastLines(out.String(), 10))
	}
	return probe, shared, nil
}

// exeName is the file name of a command on this system.
func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// releaseGoVersion reads the go line of the release's go.mod.
func releaseGoVersion(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return "", fmt.Errorf("the release's go.mod: %w", err)
	}
	if f.Go == nil {
		return "", errors.New("the release's go.mod has no go line")
	}
	return f.Go.Version, nil
}

// importAlias is the name a generated program imports a boundary package
// (relative to the module root) under.
func importAlias(pkg string) string { return strings.ReplaceAll(pkg, "/", "_") }

// probeSource is a program that prints, as one JSON object, what each
// registry function answers: a list function its list, a test function
// its answer for each probe (an object keyed by probe).
func probeSource(regs []release.Registry, probes []string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("// The registry probe of adapterkit verify-release.\npackage main\n\nimport (\n\t\"encoding/json\"\n\t\"os\"\n")
	var pkgs []string
	for _, r := range regs {
		if !slices.Contains(pkgs, r.Package) {
			pkgs = append(pkgs, r.Package)
		}
	}
	for _, p := range pkgs {
		fmt.Fprintf(&b, "\t%s %q\n", importAlias(p), modulePath+"/"+p)
	}
	b.WriteString(")\n\nfunc main() {\n\tprobes := []string{\n")
	for _, p := range probes {
		fmt.Fprintf(&b, "\t\t%q,\n", p)
	}
	b.WriteString("\t}\n\tanswers := map[string]any{}\n")
	for _, r := range regs {
		call := importAlias(r.Package) + "." + r.Name
		switch r.Kind {
		case release.RegistryList:
			fmt.Fprintf(&b, "\tanswers[%q] = %s()\n", r.ID(), call)
		case release.RegistryTest:
			fmt.Fprintf(&b, "\tanswers[%q] = test(%s, probes)\n", r.ID(), call)
		}
	}
	b.WriteString("\tif err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {\n\t\tos.Exit(1)\n\t}\n}\n\n")
	b.WriteString("func test(f func(string) bool, probes []string) map[string]bool {\n\tm := map[string]bool{}\n\tfor _, p := range probes {\n\t\tm[p] = f(p)\n\t}\n\treturn m\n}\n")
	return format.Source([]byte(b.String()))
}

// probeStrings are the strings the test registry functions are asked
// about: every string constant of this build's boundary, each also with
// a trailing space and in upper case, the empty string and a word no
// registry holds.
func probeStrings() []string {
	probes := []string{"", "telepathy"}
	for _, c := range buildConstants {
		if s, err := strconv.Unquote(c.Value); err == nil {
			probes = append(probes, s, s+" ", strings.ToUpper(s))
		}
	}
	slices.Sort(probes)
	return slices.Compact(probes)
}

// buildAnswers is what this build's registry functions answer, encoded as
// the probe program encodes them.
func buildAnswers(probes []string) (map[string]json.RawMessage, error) {
	answers := map[string]json.RawMessage{}
	for _, r := range buildRegistries {
		var v any
		if r.list != nil {
			v = r.list()
		} else {
			m := map[string]bool{}
			for _, p := range probes {
				m[p] = r.test(p)
			}
			v = m
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		answers[r.ID()] = b
	}
	return answers, nil
}

// probeRegistries runs the probe program and compares the release's
// answers with this build's. It returns the differences and the number of
// probes.
func probeRegistries(ctx context.Context, probe string) ([]string, int, error) {
	probes := probeStrings()
	want, err := buildAnswers(probes)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, probe)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 5))
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		return nil, 0, fmt.Errorf("the probe's output: %w", err)
	}
	var diffs []string
	for _, r := range buildRegistries {
		g, ok := got[r.ID()]
		if !ok {
			continue // not shared: compareRegistries names it
		}
		w := want[r.ID()]
		if bytes.Equal(bytes.TrimSpace(g), w) {
			continue
		}
		if r.list != nil {
			diffs = append(diffs, fmt.Sprintf("%s(): the release returns %s; this build %s", r.ID(), clipText(string(g)), clipText(string(w))))
			continue
		}
		var gm, wm map[string]bool
		if json.Unmarshal(g, &gm) != nil || json.Unmarshal(w, &wm) != nil {
			diffs = append(diffs, fmt.Sprintf("%s: the release's answers cannot be read", r.ID()))
			continue
		}
		var differing []string
		for _, p := range probes {
			if a, ok := gm[p]; !ok || a != wm[p] {
				differing = append(differing, fmt.Sprintf("%s (the release %t, this build %t)", strconv.Quote(clipText(p)), a, wm[p]))
			}
		}
		shown := differing[:min(len(differing), 5)]
		more := ""
		if len(differing) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(differing)-len(shown))
		}
		diffs = append(diffs, fmt.Sprintf("%s: the release answers otherwise than this build for %d of %d probes: %s%s", r.ID(), len(differing), len(probes), strings.Join(shown, ", "), more))
	}
	return diffs, len(probes), nil
}

// compareDeclarations names every package-level declaration of the
// release's packages a build of the boundary compiles that is not the same
// on every platform: declared otherwise on some, or on some only. This
// build's are the same on every platform, and verify-release runs the
// release (its probe, its reference adapter) on this platform only, so a
// declaration of one platform's build is judged by nothing else.
func compareDeclarations(bs []release.Boundary) []string {
	decls := make([]map[string]release.Declaration, len(bs))
	var ids []string
	seen := map[string]bool{}
	for i, b := range bs {
		decls[i] = map[string]release.Declaration{}
		for _, d := range b.Declarations {
			if !seen[d.ID()] {
				seen[d.ID()] = true
				ids = append(ids, d.ID())
			}
			decls[i][d.ID()] = d
		}
	}
	slices.Sort(ids)
	// The platforms' declarations of one id, grouped by digest ("" where
	// a platform does not declare it), in the order of the platforms.
	type group struct {
		digest string
		files  []string
		on     []release.Platform
	}
	var diffs []string
	for _, id := range ids {
		var gs []*group
		for i, b := range bs {
			d := decls[i][id]
			j := slices.IndexFunc(gs, func(g *group) bool { return g.digest == d.Digest })
			if j < 0 {
				gs = append(gs, &group{digest: d.Digest})
				j = len(gs) - 1
			}
			if d.File != "" && !slices.Contains(gs[j].files, d.File) {
				gs[j].files = append(gs[j].files, d.File)
			}
			gs[j].on = append(gs[j].on, b.Platform)
		}
		if len(gs) == 1 {
			continue
		}
		parts := make([]string, len(gs))
		for i, g := range gs {
			if g.digest == "" {
				parts[i] = "nowhere on " + platformList(g.on)
			} else {
				parts[i] = "in " + strings.Join(g.files, " or ") + " on " + platformList(g.on)
			}
		}
		diffs = append(diffs, fmt.Sprintf("%s: the release declares it differently by platform: %s", id, strings.Join(parts, "; ")))
	}
	return diffs
}

// unbuiltFiles names the files of the release's packages a build of the
// boundary compiles that no platform's build compiles (with cgo off): a
// build with cgo, with other tags or for another system would compile what
// they declare, which verify-release cannot see. This build has none.
func unbuiltFiles(bs []release.Boundary) []string {
	if len(bs) == 0 {
		return nil
	}
	var diffs []string
	for _, f := range bs[0].Ignored {
		everywhere := true
		for _, b := range bs[1:] {
			everywhere = everywhere && slices.Contains(b.Ignored, f)
		}
		if !everywhere {
			continue
		}
		why := "its file name"
		if f.Constraint != "" {
			why = "//go:build " + f.Constraint
		}
		diffs = append(diffs, fmt.Sprintf("%s: no platform's build compiles it (%s): a build with cgo, other tags or for another system would, and verify-release cannot see what it declares", f.File, why))
	}
	return diffs
}

// filesSummary says which files of the release's packages the builds of
// the boundary compile: how many, and those some platforms only compile.
func filesSummary(bs []release.Boundary) string {
	var all []string
	on := map[string][]release.Platform{}
	for _, b := range bs {
		for _, f := range b.Files {
			if _, ok := on[f]; !ok {
				all = append(all, f)
			}
			on[f] = append(on[f], b.Platform)
		}
	}
	var some []string
	for _, f := range all {
		if len(on[f]) < len(bs) {
			some = append(some, f+" ("+platformList(on[f])+")")
		}
	}
	s := fmt.Sprintf("%d files", len(all))
	if len(some) == 0 {
		return s + ", the same on every platform"
	}
	return fmt.Sprintf("%s, %d of them on some platforms only: %s", s, len(some), strings.Join(some, ", "))
}

// modulePackages counts the packages of the module whose declarations bs
// hold.
func modulePackages(bs []release.Boundary) int {
	pkgs := map[string]bool{}
	for _, b := range bs {
		for _, d := range b.Declarations {
			pkgs[d.Package] = true
		}
	}
	return len(pkgs)
}
