package conformance_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// TestPackageDocListsTheCases requires the list of cases in the package
// documentation to be CaseIDs, in order.
func TestPackageDocListsTheCases(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(b), "in order:\n//\n")
	if !ok {
		t.Fatal("doc.go has no list of the cases run in order")
	}
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		item, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		ids = append(ids, strings.Fields(item)[0])
	}
	if !slices.Equal(ids, conformance.CaseIDs()) {
		t.Fatalf("doc.go lists the cases %q, want %q", ids, conformance.CaseIDs())
	}
}
