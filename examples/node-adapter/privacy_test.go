package nodeadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/vectors"
)

// The Node.js sanitiser gives what the Go engine gives for payloads whose
// marker structure only a stack gets right, and for member names anywhere
// in the payload holding markers outside a closed pair (the Go kit's rule,
// stricter than the TypeScript kit's).
func TestNodeSanitiserMatchesTheGoEngineOnMarkerStructure(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	sensitive := privacy.DefaultConfig()
	sensitive.RemoteDefaultAllowed = []privacy.Classification{privacy.Normal, privacy.Internal, privacy.Sensitive}
	cases := []struct {
		name    string
		cfg     privacy.Config
		payload string
	}{
		{"mismatched close keeps the outer open", sensitive,
			`{"messages":[{"role":"user","content":"[ds4:internal]a[ds4:sensitive]b[/ds4:internal]"},{"role":"user","content":"public text"},{"role":"user","content":"[ds4:local-only]c[/ds4:local-only]"}]}`},
		{"deep stack", sensitive, `{"messages":[{"content":"[ds4:sensitive]x[ds4:normal][ds4:normal]"},{"content":"[/ds4:normal][/ds4:normal]y"},{"content":"z"}]}`},
		{"split pair under an open marker", sensitive, `{"messages":[{"content":"[ds4:internal]a[ds4:normal]b"},{"content":"[/ds4:normal]c[/ds4:internal]"}]}`},
		{"unclosed marker in a name", privacy.DefaultConfig(), `{"metadata":{"x [ds4:local-only]SECRET":1},"messages":[{"role":"user","content":"public"}]}`},
		{"leading marker in a name", sensitive, `{"tools":[{"input":{"[DS4:Sensitive]k":{"text":"t"}}}],"prompt":"p"}`},
		{"opening marker nested in a pair of a name", sensitive, `{"metadata":{"[ds4:normal]a[ds4:local-only]S[/ds4:local-only]b[/ds4:normal]":1,"text":"public"}}`},
		{"closed pair in a name", sensitive, `{"metadata":{"[ds4:local-only]S[/ds4:local-only]":1,"text":"public"}}`},
		{"name outside content context", sensitive, `{"routing":{"x [ds4:local-only]S":1},"prompt":"public"}`},
		{"name at the root", privacy.DefaultConfig(), `{"x [ds4:local-only]SECRET":1}`},
		{"leading marker in a name at the root beside content", sensitive, `{"model":"m","[ds4:local-only]k":{"note":"n"},"prompt":"p"}`},
	}
	var in bytes.Buffer
	want := map[string]privacy.Result{}
	for _, c := range cases {
		e, err := privacy.New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.SanitizePayload("remote-x", json.RawMessage(c.payload))
		if err != nil {
			t.Fatal(err)
		}
		want[c.name] = r
		line, err := json.Marshal(map[string]any{"name": c.name, "input": map[string]any{"config": c.cfg, "provider": "remote-x", "payload": json.RawMessage(c.payload)}})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	file := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(file, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "adapter.mjs", "--sanitize-vectors", file)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node --sanitize-vectors: %v", err)
	}
	n := 0
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); n++ {
		var got struct {
			Name   string `json:"name"`
			Output struct {
				Value            json.RawMessage        `json:"value"`
				Classification   privacy.Classification `json:"classification"`
				Changed          bool                   `json:"changed"`
				BlockedBlocks    int                    `json:"blockedBlocks"`
				SecretRedactions int                    `json:"secretRedactions"`
			} `json:"output"`
		}
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		w := want[got.Name]
		o := got.Output
		if !vectors.SameJSON(t, o.Value, w.Value) || o.Classification != w.Classification || o.Changed != w.Changed ||
			o.BlockedBlocks != w.BlockedBlocks || o.SecretRedactions != w.SecretRedactions {
			t.Errorf("%s: node gave %s (%s, changed %t, %d blocked, %d redacted)\nthe engine %s (%s, changed %t, %d blocked, %d redacted)",
				got.Name, o.Value, o.Classification, o.Changed, o.BlockedBlocks, o.SecretRedactions,
				w.Value, w.Classification, w.Changed, w.BlockedBlocks, w.SecretRedactions)
		}
	}
	if n != len(cases) {
		t.Fatalf("node printed %d results, want %d", n, len(cases))
	}
}
