package spec

import (
	"flag"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

func TestRequestSetsCoverEverySubsetAndFlag(t *testing.T) {
	sets := requestSets()
	// 3^4 subsets with required/optional flags, 16 duplicate-flag sets, one unknown id.
	if len(sets) != 81+16+1 {
		t.Fatalf("%d request sets, want 98", len(sets))
	}
	seen := map[string]bool{}
	for _, s := range sets {
		seen[describeRequests(s)] = true
	}
	for _, want := range []string{"no requests", "compaction (required), provider-continuation, embeddings (required), local-kv-reuse"} {
		if !seen[want] {
			t.Errorf("missing request set %q", want)
		}
	}
}

func TestHistoryShapeShowsStructureOnly(t *testing.T) {
	fx := conformance.NewFixture()
	got := HistoryShape(fx.Messages)
	want := "4 messages, 1 calls, 1 results: user[text] assistant[toolCall] tool[toolResult] assistant[text]"
	if got != want {
		t.Fatalf("HistoryShape = %q, want %q", got, want)
	}
	if HistoryShape(nil) != "(empty)" {
		t.Fatal("empty history")
	}
	if strings.Contains(got, "Inspect") {
		t.Fatal("the shape shows text")
	}
}

func TestSetChecksRespectsTheUser(t *testing.T) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		t.Fatal("rapid registers -rapid.checks")
	}
	before := f.Value.String()
	restore := setChecks(7)
	if userChecks() {
		if f.Value.String() != before {
			t.Fatal("an explicit -rapid.checks was overridden")
		}
	} else if f.Value.String() != "7" {
		t.Fatalf("checks = %s, want 7", f.Value.String())
	}
	restore()
	if f.Value.String() != before {
		t.Fatalf("checks not restored: %s, want %s", f.Value.String(), before)
	}
}
