package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/tools/fixturegen/internal/build"
)

// dataDir is the fixtures data folder seen from this package's folder.
const dataDir = "../../fixtures/data"

// TestFixturesAreCurrent fails when the committed fixture files differ from
// what the generators produce: regenerate with go run ./tools/fixturegen.
func TestFixturesAreCurrent(t *testing.T) {
	files, err := build.Generate()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := build.Check(dataDir, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s (run go run ./tools/fixturegen from the module root)", p)
	}
}

func TestCheckFlagReportsEachKindOfProblem(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"-check", "-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("check of a fresh folder: exit %d: %s%s", code, out.String(), errOut.String())
	}

	// Make one file stale, remove one, add one nobody generates.
	stale := filepath.Join(dir, "index.json")
	if err := os.WriteFile(stale, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "conformance", "fixture-v1.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "histories", "hand-written.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"-check", "-dir", dir}, &out, &errOut); code != 1 {
		t.Fatalf("check of a damaged folder: exit %d, want 1", code)
	}
	want := "missing: conformance/fixture-v1.json\nextra: histories/hand-written.json\nstale: index.json\n"
	if out.String() != want {
		t.Errorf("check listed\n%s\nwant\n%s", out.String(), want)
	}

	// Regenerating repairs the folder, extra file included.
	if code := run([]string{"-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("regenerate: exit %d", code)
	}
	out.Reset()
	if code := run([]string{"-check", "-dir", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "current") {
		t.Errorf("after regeneration: exit %d, output %q", code, out.String())
	}
}

func TestBadArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-nosuchflag"}, &out, &errOut); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
	if code := run([]string{"extra"}, &out, &errOut); code != 2 {
		t.Errorf("positional argument: exit %d, want 2", code)
	}
	// The default folder is relative to the module root; from this
	// package's folder it does not exist, and nothing may be written.
	if code := run(nil, &out, &errOut); code != 2 {
		t.Errorf("default folder outside the module root: exit %d, want 2", code)
	}
	if _, err := os.Stat("fixtures"); err == nil {
		t.Error("a stray fixtures folder was written")
	}
}
