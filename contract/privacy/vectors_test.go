package privacy

import (
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/internal/vectors"
)

type sanitizeVector struct {
	Name  string `json:"name"`
	Input struct {
		Config   Config          `json:"config"`
		Provider string          `json:"provider"`
		Payload  json.RawMessage `json:"payload"`
	} `json:"input"`
	Output struct {
		Value            json.RawMessage `json:"value"`
		Classification   Classification  `json:"classification"`
		Changed          bool            `json:"changed"`
		BlockedBlocks    int             `json:"blockedBlocks"`
		SecretRedactions int             `json:"secretRedactions"`
		InspectedStrings int             `json:"inspectedStrings"`
		Destination      Destination     `json:"destination"`
	} `json:"output"`
}

func TestSanitizeVectors(t *testing.T) {
	n := 0
	for _, c := range vectors.Read(t, "sanitize.jsonl") {
		v := sanitizeVector{Name: c.Name}
		c.Decode(t, &v.Input, &v.Output)
		n++
		t.Run(v.Name, func(t *testing.T) {
			e, err := New(v.Input.Config)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			// The engine without the member-name rule is the TypeScript
			// kit's own: it reproduces every vector too.
			upstream := *e
			upstream.valuesOnly = true
			for _, e := range []*Engine{e, &upstream} {
				checkSanitizeVector(t, e, v)
			}
		})
	}
	if n == 0 {
		t.Fatal("no sanitize vectors were read")
	}
	t.Logf("%d sanitize vectors", n)
}

func checkSanitizeVector(t *testing.T, e *Engine, v sanitizeVector) {
	t.Helper()
	got, err := e.SanitizePayload(v.Input.Provider, v.Input.Payload)
	if err != nil {
		t.Fatalf("SanitizePayload: %v", err)
	}
	want := v.Output
	// Every output is compared exactly: the Go kit's deliberate
	// difference, the floor its member names raise (SPEC §8, Go kit only),
	// changes no vector, since no vector's member name holds an opening
	// marker outside a closed pair (dynamic-keys-sanitised and
	// escaped-name-marker-pair hold closed pairs only). A vector that did
	// would differ here for the Go engine and not for the engine without
	// the rule.
	if !vectors.SameJSON(t, got.Value, want.Value) {
		t.Errorf("value:\n got %s\nwant %s", got.Value, want.Value)
	}
	if got.Classification != want.Classification {
		t.Errorf("classification = %q, want %q", got.Classification, want.Classification)
	}
	if got.Changed != want.Changed {
		t.Errorf("changed = %v, want %v", got.Changed, want.Changed)
	}
	if got.BlockedBlocks != want.BlockedBlocks {
		t.Errorf("blockedBlocks = %d, want %d", got.BlockedBlocks, want.BlockedBlocks)
	}
	if got.SecretRedactions != want.SecretRedactions {
		t.Errorf("secretRedactions = %d, want %d", got.SecretRedactions, want.SecretRedactions)
	}
	if got.Destination != want.Destination {
		t.Errorf("destination = %q, want %q", got.Destination, want.Destination)
	}
}
