package golden_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/golden"
)

func TestMarshalIsIndentedAndUnescaped(t *testing.T) {
	got, err := golden.Marshal(map[string]any{"b": []int{1}, "a": "<&>\u2028"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": \"<&>\\u2028\",\n  \"b\": [\n    1\n  ]\n}\n"
	if string(got) != want {
		t.Errorf("Marshal = %q, want %q", got, want)
	}
}

func TestCheckReportsMissingMismatchAndBadNames(t *testing.T) {
	t.Setenv(golden.UpdateEnv, "")
	dir := t.TempDir()
	if err := golden.Check(t, "absent", 1, golden.Dir(dir)); !errors.Is(err, golden.ErrMissing) {
		t.Errorf("missing golden: %v, want ErrMissing", err)
	}
	for _, name := range []string{"", "Upper", "../escape", "a/b", "-lead", "space here"} {
		if err := golden.Check(t, name, 1, golden.Dir(dir)); !errors.Is(err, golden.ErrInvalidName) {
			t.Errorf("name %q: %v, want ErrInvalidName", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "value.golden"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := golden.Check(t, "value", 1, golden.Dir(dir)); err != nil {
		t.Errorf("equal value: %v", err)
	}
	err := golden.Check(t, "value", 2, golden.Dir(dir), golden.Hint("a pinned hint"))
	if !errors.Is(err, golden.ErrMismatch) {
		t.Fatalf("different value: %v, want ErrMismatch", err)
	}
	for _, part := range []string{"a pinned hint", "-1", "+2"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("mismatch message lacks %q:\n%s", part, err)
		}
	}
	if err := golden.Check(t, "value", func() {}, golden.Dir(dir)); err == nil || errors.Is(err, golden.ErrMismatch) {
		t.Errorf("unencodable value: %v, want an encoding error", err)
	}
}

func TestUpdateEnvRewritesGoldens(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(golden.UpdateEnv, "1")
	if !golden.Updating() {
		t.Fatal("Updating() is false with the variable set")
	}
	rec := &recordingTB{TB: t}
	golden.Assert(rec, "created", []string{"x"}, golden.Dir(dir))
	golden.Assert(rec, "created", []string{"y"}, golden.Dir(dir))
	if rec.failed {
		t.Fatalf("updating failed: %q", rec.messages)
	}
	data, err := os.ReadFile(filepath.Join(dir, "created.golden"))
	if err != nil || string(data) != "[\n  \"y\"\n]\n" {
		t.Errorf("golden after update = %q, %v", data, err)
	}
	t.Setenv(golden.UpdateEnv, "0")
	if golden.Updating() {
		t.Error("Updating() is true with the variable set to 0")
	}
	golden.Assert(rec, "created", []string{"z"}, golden.Dir(dir))
	if !rec.failed {
		t.Error("without the variable a different value passed")
	}
}

// goldenNames are the goldens this package pins; each is asserted by name
// in one of its tests.
var goldenNames = []string{
	"conformance-report-reference",
	"fixture-histories",
	"invalid-snapshots",
	"localkv-eligibility-keys",
	"negotiation-matrix",
	"reference-jsonl-outcomes",
	"registry-0.2",
	"run-report-reference",
}

// TestNoOrphanGoldens checks that testdata holds exactly the goldens of
// goldenNames, and that each name is asserted by some test of this package
// (it appears as a string literal in a test file other than this list).
func TestNoOrphanGoldens(t *testing.T) {
	entries, err := os.ReadDir(golden.DefaultDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, strings.TrimSuffix(e.Name(), golden.Suffix))
		if !strings.HasSuffix(e.Name(), golden.Suffix) || e.IsDir() {
			t.Errorf("testdata/%s is not a golden file", e.Name())
		}
	}
	if !slices.Equal(files, goldenNames) {
		t.Errorf("testdata holds %q, want %q", files, goldenNames)
	}
	sources, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	literal := regexp.MustCompile(`golden\.Assert\(\w+, "([a-z0-9._-]+)"`)
	for _, src := range sources {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllSubmatch(b, -1) {
			used[string(m[1])] = true
		}
	}
	for _, name := range goldenNames {
		if !used[name] {
			t.Errorf("golden %s is asserted by no test", name)
		}
	}
}
