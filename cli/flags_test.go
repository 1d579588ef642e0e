package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
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

// TestDocsBridgeTimeoutIsTheCLIs requires docs/bridge.md to give conform's
// default call bound, the one the flag's option has.
func TestDocsBridgeTimeoutIsTheCLIs(t *testing.T) {
	b, err := os.ReadFile("../docs/bridge.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "| `--timeout D` | bound on each call to the process (default `" + conformance.DefaultCallTimeout.String() + "`) |"
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/bridge.md has no row %q", want)
	}
	if !strings.Contains(string(b), fmt.Sprintf("`adapterkit conform --timeout`, %d s by default", int(conformance.DefaultCallTimeout.Seconds()))) {
		t.Errorf("docs/bridge.md does not say conform bounds every call by %s by default", conformance.DefaultCallTimeout)
	}
}
