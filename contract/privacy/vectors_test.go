package privacy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
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

// sameJSON reports whether two documents are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func TestSanitizeVectors(t *testing.T) {
	f, err := os.Open("../../testdata/vectors/sanitize.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v sanitizeVector
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			e, err := New(v.Input.Config)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got, err := e.SanitizePayload(v.Input.Provider, v.Input.Payload)
			if err != nil {
				t.Fatalf("SanitizePayload: %v", err)
			}
			want := v.Output
			if !sameJSON(t, got.Value, want.Value) {
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
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no sanitize vectors were read")
	}
	t.Logf("%d sanitize vectors", n)
}
