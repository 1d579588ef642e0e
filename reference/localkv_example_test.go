package reference_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/reference"
)

// prefixCache is a toy runtime port that remembers which prefixes it has
// prefilled. A real runtime keeps its KV handles behind the same two
// methods; the adapter never sees them.
type prefixCache struct {
	mu   sync.Mutex
	warm map[string]bool
}

func (c *prefixCache) TryReuse(_ context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.warm[r.Key.Fingerprint] {
		return localkv.ReuseAnswer{Status: localkv.ReuseMiss}, nil
	}
	return localkv.ReuseAnswer{Status: localkv.ReuseHit, Output: json.RawMessage(`"from cache"`),
		SavedPrefillTokens: r.PrefixTokenCount, PrefillLatencyMs: 2}, nil
}

func (c *prefixCache) FullReplay(_ context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warm[r.Key.Fingerprint] = true
	return localkv.ReplayAnswer{Output: json.RawMessage(`"prefilled"`), PrefillTokens: r.ContextTokenCount, PrefillLatencyMs: 90}, nil
}

// A host with a local inference runtime configures the local KV path: the
// port, the runtime and model revisions, and a Prepare that finds the
// reusable prefix in its own payload shape. The second identical completion
// reuses the prefix's KV state.
func Example_localKV() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "reference-kv-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl")
	h := reference.Header{SessionID: "s1", ProjectRoot: dir}
	if err := reference.CreateHistory(ctx, path, h, []contract.Message{userMessage("s1", "e1", "hello")}); err != nil {
		panic(err)
	}

	a, err := reference.New(reference.Options{
		HistoryPath: path,
		ProjectRoot: dir,
		Transport: contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
			return json.RawMessage(`"native"`), nil
		}),
		LocalKV: &reference.LocalKVOptions{
			Enabled:         true,
			Port:            &prefixCache{warm: map[string]bool{}},
			RuntimeRevision: "llama-server-b4567",
			ModelRevision:   "sha256-0b1c",
			Prepare: func(payload json.RawMessage) (reference.LocalKVPrepared, bool) {
				var p struct {
					System string `json:"system"`
				}
				if json.Unmarshal(payload, &p) != nil || p.System == "" {
					return reference.LocalKVPrepared{}, false
				}
				return reference.LocalKVPrepared{PromptPrefix: []byte(p.System), PrefixTokenCount: 300, ContextTokenCount: 420}, true
			},
		},
	})
	if err != nil {
		panic(err)
	}
	defer a.Shutdown(ctx)

	payload := json.RawMessage(`{"system":"You review Go code.","messages":[{"role":"user","content":"look at main.go"}]}`)
	for range 2 {
		r := a.Complete(ctx, contract.CompletionRequest{Provider: "llama-cpp", Model: "qwen2.5-coder", Payload: payload})
		fmt.Println(r.Status, r.LocalKV.Mode, r.LocalKV.SavedPrefillTokens, string(r.Output))
	}
	// A remote provider never reaches the port.
	r := a.Complete(ctx, contract.CompletionRequest{Provider: "openai", Model: "gpt", Payload: payload})
	fmt.Println(r.Status, r.Privacy.Destination, r.LocalKV == nil, string(r.Output))

	d, _ := a.LocalKVDiagnostics()
	fmt.Println(d.Requests, d.Hits, d.FullReplays, d.SavedPrefillTokens)
	// Output:
	// completed full-replay 0 "prefilled"
	// completed hit 300 "from cache"
	// completed remote true "native"
	// 2 1 1 300
}
