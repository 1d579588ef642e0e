package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/internal/release"
)

// compareRequirements compares the release's go.mod requirements with this
// build's (buildRequirements). A requirement of a module whose code the
// generators and checks run — this build's (buildDrawing) or the
// release's (drawing) — that differs is a difference: another version of
// it may change what a seed draws, or a verdict, and no probe can tell
// that it does not. Every other requirement that differs is a note.
func compareRequirements(reqs []release.Requirement, drawing []string) (diffs, notes []string) {
	build := map[string]string{}
	for _, r := range buildRequirements {
		build[r.Path] = r.Version
	}
	theirs := map[string]string{}
	for _, r := range reqs {
		theirs[r.Path] = r.Version
	}
	var paths []string
	for p := range build {
		paths = append(paths, p)
	}
	for p := range theirs {
		if _, ok := build[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		ours, inBuild := build[p]
		rel, inRelease := theirs[p]
		if inBuild && inRelease && ours == rel {
			continue
		}
		var d string
		switch {
		case !inBuild:
			d = fmt.Sprintf("%s: the release requires %s, this build does not require it", p, rel)
		case !inRelease:
			d = fmt.Sprintf("%s: the release does not require it, this build requires %s", p, ours)
		default:
			d = fmt.Sprintf("%s: the release requires %s, this build %s", p, rel, ours)
		}
		if slices.Contains(buildDrawing, p) || slices.Contains(drawing, p) {
			diffs = append(diffs, d+"; the generators and checks ("+strings.Join(release.DrawingPackages, ", ")+") run its code, so what they draw and judge may differ")
		} else {
			notes = append(notes, d+" (the generators and checks do not run its code)")
		}
	}
	return diffs, notes
}

// requirements judges the module requirements of the release whose module
// folder is dir: those of a module the generators and checks run must be
// this build's; the others that differ are listed as notes.
func (v *verdict) requirements(ctx context.Context, dir string) {
	reqs, err := release.Requirements(dir)
	if err != nil {
		v.broken("cannot read the module requirements", err)
		return
	}
	drawing, err := release.ModulesOf(ctx, dir, nil, release.DrawingPackages...)
	if err != nil {
		v.broken("cannot list the modules the generators and checks run", err)
		drawing = nil // this build's still decide
	}
	diffs, notes := compareRequirements(reqs, drawing)
	run := slices.Concat(buildDrawing, drawing)
	slices.Sort(run)
	v.part(fmt.Sprintf("module requirements: %d in the release's go.mod, %d differing from this build's, %d of them of a module the generators and checks run (%s)",
		len(reqs), len(diffs)+len(notes), len(diffs), strings.Join(slices.Compact(run), ", ")), diffs)
	for _, n := range notes {
		fmt.Fprintf(v.stdout, "  note: %s\n", n)
	}
}
