package localkv_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ds4context/adapterkit/contract/localkv"
)

func ExampleDeriveEligibility() {
	el := localkv.DeriveEligibility(localkv.EligibilityInput{
		Enabled:              true,
		CapabilityEnabled:    true,
		CapabilityVersion:    "llama-kv-v1",
		Destination:          "local",
		RuntimeID:            "local-test-runtime",
		RuntimeRevision:      "runtime-build-1",
		Provider:             "ollama",
		Model:                "codestral:latest",
		ModelRevision:        "sha256-model-a",
		PrivacyPolicyVersion: "privacy-policy-a",
		PromptPrefix:         []byte("system\x00tools\x00stable-prefix"),
		SystemOptions:        map[string]any{"temperature": 0, "seed": 7},
		ToolOptions:          json.RawMessage(`[{"name":"read","schema":{"type":"object"}}]`),
		PrefixTokenCount:     120,
		ContextTokenCount:    160,
	})
	fmt.Println(el.Eligible, el.Key.Fingerprint)

	// An ineligible input reports the first check it fails.
	el = localkv.DeriveEligibility(localkv.EligibilityInput{Enabled: false})
	fmt.Println(el.Eligible, el.Reason)
	// Output:
	// true d8028f14ed83fb46ff0352f8132e98dccfc88fafdd7f78263988a9d5f8d3a9e7
	// false disabled
}

// cachePort is a toy runtime: it remembers which fingerprints it has
// prefilled. A real runtime keeps its KV handles behind the same interface
// and, unlike this one, is safe for concurrent use.
type cachePort struct{ warm map[string]bool }

func (p *cachePort) TryReuse(_ context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	if !p.warm[r.Key.Fingerprint] {
		return localkv.ReuseAnswer{Status: localkv.ReuseMiss}, nil
	}
	return localkv.ReuseAnswer{
		Status:             localkv.ReuseHit,
		Output:             json.RawMessage(`"cached answer"`),
		SavedPrefillTokens: r.PrefixTokenCount,
		PrefillLatencyMs:   0.5,
	}, nil
}

func (p *cachePort) FullReplay(_ context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	p.warm[r.Key.Fingerprint] = true
	return localkv.ReplayAnswer{
		Output:           json.RawMessage(`"fresh answer"`),
		PrefillTokens:    r.ContextTokenCount,
		PrefillLatencyMs: 40,
	}, nil
}

func ExampleController() {
	c := localkv.NewController(&cachePort{warm: map[string]bool{}})
	req := localkv.ControllerRequest{
		Input: localkv.EligibilityInput{
			Enabled: true, CapabilityEnabled: true, CapabilityVersion: "llama-kv-v1",
			Destination: "local", RuntimeID: "local-test-runtime", RuntimeRevision: "runtime-build-1",
			Provider: "ollama", Model: "codestral:latest", ModelRevision: "sha256-model-a",
			PrivacyPolicyVersion: "privacy-policy-a", PromptPrefix: []byte("system prompt"),
			PrefixTokenCount: 120, ContextTokenCount: 160,
		},
		Payload: json.RawMessage(`{"messages":[]}`),
	}
	for range 2 {
		res, err := c.Complete(context.Background(), req)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.LocalKV.Mode, string(res.Output))
	}
	d := c.Diagnostics()
	fmt.Println(d.Requests, d.Hits, d.Misses, d.FullReplays, d.SavedPrefillTokens)
	// Output:
	// full-replay "fresh answer"
	// hit "cached answer"
	// 2 1 1 1 120
}
