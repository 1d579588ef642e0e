package conformance

import (
	"strings"
	"testing"
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
	fx := NewFixture()
	got := historyShape(fx.Messages)
	want := "4 messages, 1 calls, 1 results: user[text] assistant[toolCall] tool[toolResult] assistant[text]"
	if got != want {
		t.Fatalf("historyShape = %q, want %q", got, want)
	}
	if historyShape(nil) != "(empty)" {
		t.Fatal("empty history")
	}
	if strings.Contains(got, "Inspect") {
		t.Fatal("the shape shows text")
	}
}
