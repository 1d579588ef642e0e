package nodeadapter_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The Node.js sanitiser reproduces every cross-language sanitiser vector:
// the payload, the classification, the destination and the counts, compared
// as JSON values.
func TestNodeSanitiserReproducesTheVectors(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	file := filepath.Join("..", "..", "testdata", "vectors", "sanitize.jsonl")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type vector struct {
		Name   string                     `json:"name"`
		Output map[string]json.RawMessage `json:"output"`
	}
	var want []vector
	for sc := bufio.NewScanner(bytes.NewReader(raw)); sc.Scan(); {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		// The reference engine's result has no inspectedStrings count.
		delete(v.Output, "inspectedStrings")
		want = append(want, v)
	}
	if len(want) != 38 {
		t.Fatalf("read %d vectors, want 38", len(want))
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "adapter.mjs", "--sanitize-vectors", file)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node --sanitize-vectors: %v", err)
	}
	var got []vector
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var v vector
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != len(want) {
		t.Fatalf("the adapter printed %d results, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name {
			t.Fatalf("result %d is %q, want %q", i, g.Name, w.Name)
		}
		if !reflect.DeepEqual(jsonValues(t, g.Output), jsonValues(t, w.Output)) {
			t.Errorf("%s: got %s, want %s", w.Name, mustJSON(t, g.Output), mustJSON(t, w.Output))
		}
	}
}

func jsonValues(t *testing.T, m map[string]json.RawMessage) map[string]any {
	t.Helper()
	out := make(map[string]any, len(m))
	for k, raw := range m {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = v
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
