package cli

import (
	"os"
	"strings"
	"testing"
)

// TestDocsOptionTableNamesEveryFlag requires every flag that sets an
// option to have its row in the option table of docs/conformance.md, and
// every flag that table names to be one of them.
func TestDocsOptionTableNamesEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../docs/conformance.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| option | flag of `conform` | default | effect |\n")
	if !ok {
		t.Fatal("docs/conformance.md has no option table")
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) != 6 {
			t.Errorf("docs/conformance.md: the option row %q has %d cells, want 4", line, len(cells)-2)
			continue
		}
		if flag := strings.Trim(strings.TrimSpace(cells[2]), "`"); flag != "" {
			documented[strings.TrimPrefix(flag, "--")] = true
		}
	}
	known := map[string]bool{}
	for _, f := range optionFlags {
		known[f.name] = true
		if !documented[f.name] {
			t.Errorf("docs/conformance.md: the option table has no row for --%s", f.name)
		}
	}
	for name := range documented {
		if !known[name] {
			t.Errorf("docs/conformance.md: the option table names --%s, which sets no option", name)
		}
	}
}
