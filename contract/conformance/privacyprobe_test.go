package conformance

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/race"
	"github.com/ds4context/adapterkit/internal/upstream"
)

// TestProbeExpectationsMatchEngine checks the judge of privacy-probes
// against the privacy engine: for every payload of a few batches, sent to
// every provider of its batch, the engine's result under a configuration
// passes the judge of that declared configuration and the judge without a
// declared configuration; the result of the engine without the Go kit's
// member-name rule passes the declared judge as a deviation unless strict,
// and fails it strict for some payload of every batch.
func TestProbeExpectationsMatchEngine(t *testing.T) {
	race.SkipSequential(t)
	testProbeExpectations(t, 2)
}

// probeConfigs are the configurations the judge is checked under: the
// default, one that differs in every member (a stricter default class,
// local providers of its own, a remote provider allowed sensitive content,
// one allowed nothing), one without redaction, and a disabled one.
func probeConfigs() map[string]privacy.Config {
	custom := privacy.DefaultConfig()
	custom.DefaultClassification = privacy.Internal
	custom.LocalProviders = []string{"Edge-Box", "ollama"}
	custom.RemoteDefaultAllowed = []privacy.Classification{privacy.Normal, privacy.Internal}
	custom.RemoteProviders = map[string][]privacy.Classification{
		FixtureProvider:  {privacy.Normal, privacy.Internal, privacy.Sensitive},
		"Strict.Example": {},
	}
	noRedaction := privacy.DefaultConfig()
	noRedaction.RedactSecrets = false
	disabled := privacy.DefaultConfig()
	disabled.Enabled = false
	return map[string]privacy.Config{"default": privacy.DefaultConfig(), "custom": custom, "no redaction": noRedaction, "disabled": disabled}
}

func testProbeExpectations(t *testing.T, seeds uint64) {
	for name, cfg := range probeConfigs() {
		eng, err := privacy.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		up := upstream.WithoutNameFloor(eng).(*privacy.Engine)
		named := slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders)))
		for seed := range seeds {
			declared := probeJudge{eng: eng, cfg: &cfg}
			strict := probeJudge{eng: eng, cfg: &cfg, strict: true}
			undeclared := probeJudge{dests: map[string]contract.Destination{}}
			b := newProbeBatch(seed, privacyProbeCount, FixtureProvider, named...)
			strictFails := 0
			for _, c := range b.cases {
				if c.failing != "" {
					if _, err := eng.SanitizePayload(c.provider, c.payload()); !errors.Is(err, privacy.ErrUninspectable) {
						t.Fatalf("%s: %s nests %s at %s: engine error %v, want ErrUninspectable", name, c.where(seed), c.failing, c.failPath, err)
					}
					continue
				}
				// Under the default configuration every provider, under the
				// others four in turn.
				providers := b.providers
				if name != "default" {
					providers = nil
					for k := range 4 {
						providers = append(providers, b.providers[(c.index*4+k)%len(b.providers)])
					}
				}
				for _, p := range providers {
					cc := *c
					cc.provider, cc.canonical = p, b.canonical[p]
					where := name + ": " + cc.where(seed)
					for _, e := range []*privacy.Engine{eng, up} {
						if e == up && c.nameFloor == "" {
							continue // no member name raises the floor: the same result
						}
						r, err := e.SanitizePayload(p, cc.payload())
						if err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						res := r.ForProvider(p)
						for _, j := range []probeJudge{declared, undeclared} {
							if err := j.checkDestination(res.Destination, &cc, where); err != nil {
								t.Fatalf("%s: the engine's destination fails: %s", where, err.(*brokenRule).actual)
							}
							deviates, err := j.judge(res.Payload, &res, &cc, j.policy(p, res.Destination), where, "the engine's result")
							if err != nil {
								t.Fatalf("%s (declared %t, without the name rule %t): the engine's result fails: %s: %s", where, j.eng != nil, e == up, err, err.(*brokenRule).actual)
							}
							if deviates && (e == eng || j.eng == nil) {
								t.Fatalf("%s: a deviation counted for the engine's own result", where)
							}
						}
						if e == up {
							if _, err := strict.judge(res.Payload, &res, &cc, strict.policy(p, res.Destination), where, "the result"); err != nil {
								strictFails++
							}
						}
					}
				}
			}
			if strictFails == 0 && cfg.Enabled {
				t.Errorf("%s, seed %d: the result without the member-name rule passed the strict judge for every payload", name, seed)
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

// Every name of splitProviders gets an inspectable payload holding content
// a remote provider is denied, whatever the seed — seeds 37 and 67 once
// gave one only payloads it had to refuse whole, and an adapter comparing
// provider names with strings.ToLower or strings.TrimSpace passed.
func TestEverySplitProviderGetsBlockedContent(t *testing.T) {
	for seed := range uint64(100) {
		b := newProbeBatch(seed, privacyProbeCount, FixtureProvider)
		for _, name := range splitProviders {
			if !slices.ContainsFunc(b.cases, func(c *probeCase) bool { return c.provider == name && holdsBlocked(c) }) {
				t.Fatalf("seed %d: no inspectable payload with blocked content for %q", seed, name)
			}
		}
	}
}
