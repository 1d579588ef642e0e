package adapterkit_test

import (
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// mdTable is one Markdown table: its header cells and its rows, each with
// the line it starts on.
type mdTable struct {
	file   string
	line   int
	header []string
	rows   []mdRow
}

type mdRow struct {
	line  int
	cells []string
}

// readTables returns every table of a Markdown file: runs of lines that
// start with "|", the second of which is the delimiter row.
func readTables(t *testing.T, file string) []mdTable {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var (
		tables []mdTable
		cur    *mdTable
		fence  bool
	)
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "|") {
			cur = nil
			continue
		}
		cells := splitRow(line)
		switch {
		case cur == nil:
			tables = append(tables, mdTable{file: file, line: i + 1, header: cells})
			cur = &tables[len(tables)-1]
		case len(cur.rows) == 0 && cur.line == i && isDelimiter(cells):
			// the delimiter row under the header
		default:
			cur.rows = append(cur.rows, mdRow{line: i + 1, cells: cells})
		}
	}
	return tables
}

// splitRow splits a table row into its trimmed cells; "\|" is a bar inside
// a cell.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var (
		cells []string
		cell  strings.Builder
	)
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

func isDelimiter(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// codeSpan matches a name in backticks: a check id or a mutant name.
var codeSpan = regexp.MustCompile("`([a-z0-9]+(?:-[a-z0-9]+)*)`")

// names returns the names in backticks in a cell.
func names(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDocsTablesHaveTheirColumns requires every row of every table in the
// module's Markdown to have as many cells as its header.
func TestDocsTablesHaveTheirColumns(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md", "CONTRIBUTING.md")
	n := 0
	for _, file := range files {
		for _, tab := range readTables(t, file) {
			n++
			for _, r := range tab.rows {
				if len(r.cells) != len(tab.header) {
					t.Errorf("%s:%d: %d cells in a table of %d columns (%q)", file, r.line, len(r.cells), len(tab.header), tab.header)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no tables found")
	}
}

// conformanceTable returns the table of docs/conformance.md with this
// header.
func conformanceTable(t *testing.T, header ...string) mdTable {
	t.Helper()
	for _, tab := range readTables(t, "docs/conformance.md") {
		if slices.Equal(tab.header, header) {
			return tab
		}
	}
	t.Fatalf("docs/conformance.md has no table headed %q", header)
	return mdTable{}
}

// TestDocsCheckTableListsEveryCheck requires the check table of
// docs/conformance.md to have exactly one row per check of the catalogue,
// with the check's kind and capability, and no row for anything else.
func TestDocsCheckTableListsEveryCheck(t *testing.T) {
	tab := conformanceTable(t, "id", "kind", "capability", "checks")
	rows := map[string]int{}
	for _, r := range tab.rows {
		if len(r.cells) != len(tab.header) {
			continue // TestDocsTablesHaveTheirColumns reports it
		}
		id := strings.Trim(r.cells[0], "`")
		c, ok := conformance.CheckByID(id)
		if !ok {
			t.Errorf("docs/conformance.md:%d: a row for %q, which is no check", r.line, r.cells[0])
			continue
		}
		rows[id]++
		if got := r.cells[1]; got != string(c.Kind) {
			t.Errorf("docs/conformance.md:%d: %s has kind %q, want %q", r.line, id, got, c.Kind)
		}
		if got, want := r.cells[2], map[bool]string{true: "", false: "`" + string(c.Capability) + "`"}[c.Capability == ""]; got != want {
			t.Errorf("docs/conformance.md:%d: %s has capability %q, want %q", r.line, id, got, want)
		}
		if r.cells[3] == "" {
			t.Errorf("docs/conformance.md:%d: %s says nothing about what it checks", r.line, id)
		}
	}
	for _, c := range conformance.Checks() {
		if rows[c.ID] != 1 {
			t.Errorf("docs/conformance.md: the check table has %d rows for %s, want 1", rows[c.ID], c.ID)
		}
	}
}

// TestDocsRuleTableNamesEveryCheckAndMutant requires every check of the
// catalogue to enforce some rule of the rule table, every check and mutant
// the table names to exist, every mutant to be named there, and each named
// mutant to fail one of its rule's checks (or the rule to say it must pass).
func TestDocsRuleTableNamesEveryCheckAndMutant(t *testing.T) {
	tab := conformanceTable(t, "rule", "checks", "mutants")
	inTable := map[string]bool{}
	named := map[string]bool{}
	catalogue := map[string]mutants.Mutant{}
	for _, m := range mutants.Catalogue() {
		catalogue[m.Name] = m
	}
	for _, r := range tab.rows {
		if len(r.cells) != len(tab.header) {
			continue // TestDocsTablesHaveTheirColumns reports it
		}
		if strings.HasPrefix(r.cells[0], "**") {
			continue // a heading row
		}
		if len(names(r.cells[1])) == 0 && !strings.Contains(r.cells[1], "every check") {
			t.Errorf("docs/conformance.md:%d: the rule names no check", r.line)
		}
		for _, id := range names(r.cells[1]) {
			if _, ok := conformance.CheckByID(id); !ok {
				t.Errorf("docs/conformance.md:%d: the rule names %q, which is no check", r.line, id)
			}
			inTable[id] = true
		}
		if len(names(r.cells[2])) == 0 {
			t.Errorf("docs/conformance.md:%d: the rule names no mutant", r.line)
		}
		checks := names(r.cells[1])
		for _, name := range names(r.cells[2]) {
			m, ok := catalogue[name]
			switch {
			case !ok:
				t.Errorf("docs/conformance.md:%d: the rule names %q, which is no mutant", r.line, name)
			case len(m.Fails) == 0 && !strings.Contains(r.cells[2], "`"+name+"` must pass"):
				t.Errorf("docs/conformance.md:%d: %s fails no check; the rule must say it must pass", r.line, name)
			case len(m.Fails) > 0 && !strings.Contains(r.cells[1], "every check") &&
				!slices.ContainsFunc(m.Fails, func(id string) bool { return slices.Contains(checks, id) }):
				t.Errorf("docs/conformance.md:%d: %s fails %q, none of the rule's checks %q", r.line, name, m.Fails, checks)
			}
			named[name] = true
		}
	}
	for _, c := range conformance.Checks() {
		if !inTable[c.ID] {
			t.Errorf("docs/conformance.md: no rule of the rule table names the check %s", c.ID)
		}
	}
	for _, m := range mutants.Catalogue() {
		if !named[m.Name] {
			t.Errorf("docs/conformance.md: no rule of the rule table names the mutant %s", m.Name)
		}
	}
}

// TestDocsListTheVocabulary checks docs/conformance.md against the kit:
// the sentence of shapes lists every family of gen.Families in order, and
// the table of holding differences lists HoldingDifferences in order.
func TestDocsListTheVocabulary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "conformance.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var names []string
	for _, f := range gen.Families() {
		names = append(names, "`"+string(f)+"`")
	}
	if list := strings.Join(names, ", "); !strings.Contains(strings.Join(strings.Fields(doc), " "), list) {
		t.Errorf("docs/conformance.md does not list the families of gen.Families in order: %s", list)
	}
	var rows []string
	for _, tb := range readTables(t, filepath.Join("docs", "conformance.md")) {
		if len(tb.header) > 0 && tb.header[0] == "holding difference" {
			for _, r := range tb.rows {
				rows = append(rows, strings.Trim(r.cells[0], "`"))
			}
		}
	}
	var want []string
	for _, h := range conformance.HoldingDifferences() {
		want = append(want, string(h))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("holding differences table lists %q, want %q", rows, want)
	}
}

// TestDocsNameEveryCheckThatDrawsRandomInput requires the WithSeed row of
// the options table to name exactly the checks that draw random input.
func TestDocsNameEveryCheckThatDrawsRandomInput(t *testing.T) {
	tab := conformanceTable(t, "option", "flag of `conform`", "default", "effect")
	for _, r := range tab.rows {
		if len(r.cells) != len(tab.header) || r.cells[0] != "`WithSeed(seed)`" {
			continue
		}
		named := map[string]bool{}
		for _, n := range names(r.cells[3]) {
			if _, ok := conformance.CheckByID(n); ok {
				named[n] = true
			}
		}
		for _, c := range conformance.Checks() {
			if c.Seeded() != named[c.ID] {
				t.Errorf("docs/conformance.md:%d: the WithSeed row names %s: %t; it draws random input: %t", r.line, c.ID, named[c.ID], c.Seeded())
			}
		}
		return
	}
	t.Fatal("docs/conformance.md: the options table has no WithSeed row")
}

// TestDocsGoFilesAreFormatted requires every Go file the Markdown of the
// module shows whole (a fenced go block whose first line names a .go
// file) to be gofmt-clean, so that pasting it as told leaves nothing to
// fix.
func TestDocsGoFilesAreFormatted(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, md := range append([]string{"README.md", "CONTRIBUTING.md"}, files...) {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range goFileBlocks(string(b)) {
			shown++
			formatted, err := format.Source([]byte(block))
			switch {
			case err != nil:
				t.Errorf("%s: Go file #%d does not parse: %v", md, i, err)
			case string(formatted) != block:
				t.Errorf("%s: Go file #%d is not gofmt-clean; gofmt makes it\n%s", md, i, formatted)
			}
		}
	}
	if shown < 2 {
		t.Fatalf("%d Go files shown; README shows two at least", shown)
	}
}

// goFileBlocks returns the fenced go blocks of md whose first line is a
// comment naming a .go file.
func goFileBlocks(md string) []string {
	var out []string
	var body []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case !in && line == "```go":
			in, body = true, nil
		case in && line == "```":
			in = false
			if len(body) > 0 && strings.HasPrefix(body[0], "// ") && strings.HasSuffix(body[0], ".go") {
				out = append(out, strings.Join(body, "\n")+"\n")
			}
		case in:
			body = append(body, line)
		}
	}
	return out
}

// The model's row counts the mutants of the rows above it that the model
// check catches too: the count is the catalogue's, not one written down.
func TestDocsModelRowCountsTheMutantsAboveIt(t *testing.T) {
	tab := conformanceTable(t, "rule", "checks", "mutants")
	catalogue := map[string]mutants.Mutant{}
	for _, m := range mutants.Catalogue() {
		catalogue[m.Name] = m
	}
	count := regexp.MustCompile(`(\d+) of the (\d+) mutants above`)
	above := map[string]bool{}
	for _, r := range tab.rows {
		if len(r.cells) != len(tab.header) || strings.HasPrefix(r.cells[0], "**") {
			continue
		}
		if m := count.FindStringSubmatch(r.cells[2]); m != nil {
			caught := 0
			for name := range above {
				if slices.Contains(catalogue[name].Fails, conformance.CheckModel) {
					caught++
				}
			}
			if want := fmt.Sprintf("%d of the %d mutants above", caught, len(above)); m[0] != want {
				t.Errorf("docs/conformance.md:%d says %q; the catalogue says %q", r.line, m[0], want)
			}
			return
		}
		for _, name := range names(r.cells[2]) {
			if _, ok := catalogue[name]; ok {
				above[name] = true
			}
		}
	}
	t.Error("docs/conformance.md: no rule says how many of the mutants above the model catches")
}
