package reference

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// warmPort is a runtime whose KV state is always warm: every TryReuse hits.
// It does no work of its own, so the benchmarks measure the adapter.
type warmPort struct{}

func (warmPort) TryReuse(_ context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	return localkv.ReuseAnswer{Status: localkv.ReuseHit, Output: json.RawMessage(`"kv hit"`), SavedPrefillTokens: r.PrefixTokenCount}, nil
}

func (warmPort) FullReplay(context.Context, localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	return localkv.ReplayAnswer{Output: json.RawMessage(`"kv replay"`)}, nil
}

// benchKVPayload is a local completion payload of about 10 KB: a 4 KB
// prefix (system prompt and tools), system options and twenty messages.
func benchKVPayload() json.RawMessage {
	msgs := make([]any, 20)
	for i := range msgs {
		msgs[i] = map[string]any{"role": "user", "content": strings.Repeat("message text ", 22)}
	}
	b, err := json.Marshal(map[string]any{
		"kv": map[string]any{
			"prefix":        strings.Repeat("system prompt and tool schema ", 136),
			"systemOptions": map[string]any{"temperature": 0, "seed": 7, "stop": []any{"</s>"}},
			"prefixTokens":  1000,
			"contextTokens": 2600,
		},
		"messages": msgs,
	})
	if err != nil {
		panic(err)
	}
	return b
}

func benchComplete(b *testing.B, a *Adapter, payload json.RawMessage, wantKV bool) {
	ctx := context.Background()
	req := contract.CompletionRequest{Provider: kvProvider, Model: kvModel, Payload: payload}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		res := a.Complete(ctx, req)
		if res.Status != contract.StatusCompleted || (res.LocalKV != nil) != wantKV {
			b.Fatalf("result %+v", res)
		}
	}
}

// BenchmarkCompleteLocalKVHit is a warm local KV completion through the
// adapter: privacy enforcement, Prepare, eligibility and key derivation, and
// a hit. Prepare is the host's: "prepare=fixed" returns a prepared prefix
// without reading the payload, so it measures what the adapter adds;
// "prepare=unmarshal" decodes the payload with encoding/json as a simple
// host would.
func BenchmarkCompleteLocalKVHit(b *testing.B) {
	payload := benchKVPayload()
	fixed, _ := testPrepare(payload)
	for _, c := range []struct {
		name    string
		prepare func(json.RawMessage) (LocalKVPrepared, bool)
	}{
		{"prepare=fixed", func(json.RawMessage) (LocalKVPrepared, bool) { return fixed, true }},
		{"prepare=unmarshal", testPrepare},
	} {
		b.Run(c.name, func(b *testing.B) {
			o := kvOptions(newEnv(b), warmPort{}, nil)
			o.LocalKV.Prepare = c.prepare
			benchComplete(b, newAdapter(b, o), payload, true)
		})
	}
}

// BenchmarkCompleteLocalKVHitParallel runs warm completions from
// GOMAXPROCS goroutines on one adapter.
func BenchmarkCompleteLocalKVHitParallel(b *testing.B) {
	e := newEnv(b)
	a := newAdapter(b, kvOptions(e, warmPort{}, nil))
	req := contract.CompletionRequest{Provider: kvProvider, Model: kvModel, Payload: benchKVPayload()}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := a.Complete(context.Background(), req); res.LocalKV == nil {
				b.Errorf("result %+v", res)
				return
			}
		}
	})
}

// BenchmarkCompleteLocalNoKV is the same completion through the ordinary
// transport (no local KV configured): the baseline the KV path adds to.
func BenchmarkCompleteLocalNoKV(b *testing.B) {
	e := newEnv(b)
	tr := contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
		return json.RawMessage(`"ok"`), nil
	})
	benchComplete(b, newAdapter(b, e.options(tr)), benchKVPayload(), false)
}
