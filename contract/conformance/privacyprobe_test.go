package conformance

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/privacy"
)

// TestProbeExpectationsMatchEngine checks the generator's expectations
// against the privacy engine under the default policy: for every payload
// and every provider of many batches, the engine's result passes exactly
// the checks checkPrivacyProbes applies to an adapter.
func TestProbeExpectationsMatchEngine(t *testing.T) {
	testProbeExpectations(t, 3)
}

func testProbeExpectations(t *testing.T, seeds uint64) {
	eng, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for seed := range seeds {
		b := newProbeBatch(seed, privacyProbeCount, FixtureProvider)
		for _, c := range b.cases {
			for _, p := range b.providers {
				cc := *c
				cc.provider, cc.local = p, b.local[p]
				where := cc.where(seed)
				r, err := eng.SanitizePayload(p, cc.payload())
				if cc.failing != "" {
					if !errors.Is(err, privacy.ErrUninspectable) {
						t.Fatalf("%s nests %s at %s: engine error %v, want ErrUninspectable", where, cc.failing, cc.failPath, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				res := r.ForProvider(p)
				if res.Destination != destinationOf(cc.local) {
					t.Fatalf("%s: engine destination %s", where, res.Destination)
				}
				if err := checkProbeCounts(res, &cc, where); err != nil {
					t.Fatalf("engine fails the counts: %v %s", err, err.(*brokenRule).actual)
				}
				if err := checkProbeContent(res.Payload, &cc, where, "the engine's result"); err != nil {
					t.Fatalf("engine fails the content check: %s", err.(*brokenRule).actual)
				}
			}
		}
	}
}

// TestProbeBatchReach checks that every batch of one run holds every probe
// kind, every placement family, every payload shape, every uninspectable
// value and every provider, and that its probes are unpredictable: random
// tokens that never hold a fixed probe, mis-cased markers, and raw JSON
// that hides tokens behind escapes.
func TestProbeBatchReach(t *testing.T) {
	testProbeBatchReach(t, 40)
}

func testProbeBatchReach(t *testing.T, reachSeeds uint64) {
	kinds := []string{kindPublicText, kindPublicKey, kindPairAllowed, kindPairBlocked, kindLeadBlocked, kindLeadAllowed,
		kindKeyPair, kindKeyLead, kindKeySecret, kindAnomaly, kindSplitPair, kindOpenBelow, kindSecretPEM, kindSecretSK, kindSecretSKAnt,
		kindSecretGitHub, kindSecretAWS, kindSecretBearer, kindSecretAssign}
	paths := []string{"system", "prompt", "instructions", "messages[].content", "messages[].content[].text", "messages[].name",
		"messages[].tool_calls[].function.arguments", "tools[].description", "tools[].function.parameters.properties.<member name>",
		"arguments.query", "contents[].parts[]", "system_instruction.parts[].text", "input[].content[].text", "thinking",
		"context.history[]", "routing.label", "routing.<member name>"}
	for seed := range reachSeeds {
		b := newProbeBatch(seed, privacyProbeCount, FixtureProvider)
		seen := map[string]bool{}
		escaped, miscased := false, false
		for _, c := range b.cases {
			seen["shape "+c.shape] = true
			seen["provider "+c.provider] = true
			if c.failing != "" {
				seen["failing "+c.failing] = true
			}
			for _, p := range c.plants {
				seen["kind "+p.kind] = true
				seen["path "+p.path] = true
				if strings.HasPrefix(p.path, "metadata.") {
					seen["path metadata"] = true
				}
				if p.token == ProbePrivateValue || strings.Contains(p.token, ProbeCredential) {
					t.Fatalf("seed %d: a fixed probe was planted", seed)
				}
				if c.raw != nil && !bytes.Contains(c.raw, []byte(p.token)) {
					escaped = true
				}
			}
			if c.raw != nil && (bytes.Contains(c.raw, []byte("[DS4:")) || bytes.Contains(c.raw, []byte("[dS4:")) || bytes.Contains(c.raw, []byte("[Ds4:"))) {
				miscased = true
			}
		}
		var want []string
		for _, k := range kinds {
			want = append(want, "kind "+k)
		}
		for _, p := range append(paths, "metadata") {
			want = append(want, "path "+p)
		}
		for _, s := range []string{shapeRaw, shapeBytes, shapeMap} {
			want = append(want, "shape "+s)
		}
		for _, u := range uninspectableValues {
			want = append(want, "failing "+u.name)
		}
		for _, p := range b.providers {
			want = append(want, "provider "+p)
		}
		for _, w := range want {
			if !seen[w] {
				t.Errorf("seed %d: the batch has no %s", seed, w)
			}
		}
		if !escaped || !miscased {
			t.Errorf("seed %d: escaped tokens %t, mis-cased markers %t", seed, escaped, miscased)
		}
	}
}

// TestProbeBatchDeterministic checks that a seed reproduces its batch and
// that another seed gives other tokens.
func TestProbeBatchDeterministic(t *testing.T) {
	a, b := newProbeBatch(7, 32, FixtureProvider), newProbeBatch(7, 32, FixtureProvider)
	if !slices.Equal(a.tokens(), b.tokens()) || !slices.Equal(a.providers, b.providers) {
		t.Fatal("one seed gave two batches")
	}
	for i := range a.cases {
		if !bytes.Equal(a.cases[i].raw, b.cases[i].raw) {
			t.Fatalf("payload #%d differs between two batches of one seed", i)
		}
	}
	c := newProbeBatch(8, 32, FixtureProvider)
	if slices.Equal(a.tokens()[:4], c.tokens()[:4]) {
		t.Fatal("two seeds gave the same tokens")
	}
}
