package mutants_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// TestPrivacyProbesKillPrivacyMutantsForAnySeed runs the probe check on
// every mutant that privacy-probes must kill, for seeds 1 and 2 by default
// (a sample: two seeds besides the mutant tests' one) and 1 to 30 under
// everyFaceEnv=1: the mutant tests fix one seed, but the check must kill
// each mutant whatever the seed, with a failure that holds no fixed probe.
func TestPrivacyProbesKillPrivacyMutantsForAnySeed(t *testing.T) {
	check, ok := conformance.CheckByID(conformance.CheckPrivacyProbes)
	if !ok {
		t.Fatal("no privacy-probes check")
	}
	seeds := uint64(2)
	if os.Getenv(everyFaceEnv) == "1" {
		seeds = 30
	}
	swept := 0
	for _, m := range mutants.Catalogue() {
		if !slices.Contains(m.Fails, conformance.CheckPrivacyProbes) || m.RunnerErr != nil {
			continue
		}
		swept++
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			f := m.Factory(base())
			for s := uint64(1); s <= seeds; s++ {
				r := check.Run(context.Background(), f, conformance.WithSeed(s))
				if r.Passed() {
					t.Fatalf("seed %d: privacy-probes passed", s)
				}
				if b, _ := json.Marshal(r); conformance.ContainsProbe(b) {
					t.Fatalf("seed %d: the failure holds a probe", s)
				}
			}
		})
	}
	if swept == 0 {
		t.Fatal("no mutant lists privacy-probes")
	}
}

// TestOneSlotFloorDiffersOnlyInTheFloor checks the one-slot mutant's own
// engine: on a payload where a close leaves an outer marker open it sends
// what the correct engine withholds, and where a stack changes nothing it
// answers exactly as the correct engine does.
func TestOneSlotFloorDiffersOnlyInTheFloor(t *testing.T) {
	enforce := mutants.BrokenEnforcement("one-slot-marker-floor")
	open := json.RawMessage(`{"messages":[{"role":"user","content":"[ds4:normal]a[ds4:internal]b sk-abcdefgh12345678[/ds4:normal]"},` +
		`{"role":"user","content":"public text"},{"role":"user","content":"[ds4:local-only]c[/ds4:local-only]"}]}`)
	got, err := enforce("remote-x", open)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":"a[ds4:internal]b [DS4 REDACTED CREDENTIAL]"},` +
		`{"role":"user","content":"public text"},{"role":"user","content":"[DS4 local-only content excluded by privacy policy]"}]}`
	if string(got.Payload) != want || got.BlockedBlocks != 1 || got.SecretRedactions != 1 || !got.Changed {
		t.Fatalf("mutant sent %s (%d blocked, %d redacted, changed %t)\nwant %s", got.Payload, got.BlockedBlocks, got.SecretRedactions, got.Changed, want)
	}
	plain := json.RawMessage(`{"messages":[{"role":"user","content":"[ds4:local-only]c[/ds4:local-only] sk-abcdefgh12345678"},{"role":"user","content":"[ds4:sensitive]x"}]}`)
	got, err = enforce("remote-x", plain)
	if err != nil {
		t.Fatal(err)
	}
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.SanitizePayload("remote-x", plain)
	if err != nil {
		t.Fatal(err)
	}
	if w := r.ForProvider("remote-x"); string(got.Payload) != string(w.Payload) || got.BlockedBlocks != w.BlockedBlocks || got.SecretRedactions != w.SecretRedactions {
		t.Fatalf("mutant %s, engine %s", got.Payload, w.Payload)
	}
}

// TestUpstreamEngineLeavesOutOnlyTheNameFloor checks the legal variant's
// own engine: on SPEC §8's example it sends the member name verbatim, as
// the TypeScript kit does, and where no member name raises the floor it
// answers exactly as the Go kit's engine does.
func TestUpstreamEngineLeavesOutOnlyTheNameFloor(t *testing.T) {
	enforce := mutants.BrokenEnforcement("upstream-privacy-engine")
	example := json.RawMessage(`{"x [ds4:local-only]SECRET":1,"messages":[{"role":"user","content":"public text sk-abcdefgh12345678"}]}`)
	got, err := enforce("remote-x", example)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"x [ds4:local-only]SECRET":1,"messages":[{"role":"user","content":"public text [DS4 REDACTED CREDENTIAL]"}]}`
	if string(got.Payload) != want || got.BlockedBlocks != 0 || got.SecretRedactions != 1 || !got.Changed {
		t.Fatalf("variant sent %s (%d blocked, %d redacted, changed %t)\nwant %s", got.Payload, got.BlockedBlocks, got.SecretRedactions, got.Changed, want)
	}
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{
		`{"messages":[{"role":"user","content":"[ds4:local-only]c[/ds4:local-only] sk-abcdefgh12345678"},{"role":"user","content":"[ds4:sensitive]x"}]}`,
		`{"[ds4:local-only]k[/ds4:local-only]":"v","prompt":"x [ds4:internal]y"}`,
	} {
		got, err = enforce("remote-x", json.RawMessage(plain))
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.SanitizePayload("remote-x", json.RawMessage(plain))
		if err != nil {
			t.Fatal(err)
		}
		if w := r.ForProvider("remote-x"); string(got.Payload) != string(w.Payload) || got.BlockedBlocks != w.BlockedBlocks || got.SecretRedactions != w.SecretRedactions || got.Changed != w.Changed {
			t.Fatalf("variant %s, engine %s", got.Payload, w.Payload)
		}
	}
}

// TestUpstreamPrivacyEngineIsALimit runs the privacy checks on the legal
// variant built on the TypeScript kit's engine: each passes, and
// privacy-engine shows the limit member-name-floor (the batches draw such
// names for every seed), and so does privacy-probes; under
// WithStrictPrivacy both fail it, naming the rule. By default for seed 1
// (the Ginkgo suite's sample runs the variant with the mutant tests' seed),
// under everyFaceEnv=1 for seeds 1 to 3.
func TestUpstreamPrivacyEngineIsALimit(t *testing.T) {
	engine, _ := conformance.CheckByID(conformance.CheckPrivacyEngine)
	probes, _ := conformance.CheckByID(conformance.CheckPrivacyProbes)
	var variant mutants.Mutant
	for _, m := range mutants.Catalogue() {
		if m.Name == "upstream-privacy-engine" {
			variant = m
		}
	}
	if variant.Name == "" || len(variant.Fails) != 0 {
		t.Fatalf("no legal variant upstream-privacy-engine: %+v", variant)
	}
	f := variant.Factory(base())
	ctx := context.Background()
	seeds := uint64(1)
	if everyFace() {
		seeds = 3
	}
	for s := uint64(1); s <= seeds; s++ {
		r := engine.Run(ctx, f, conformance.WithSeed(s))
		if r.Status != conformance.StatusPass || len(r.Limits) != 1 || r.Limits[0].Name() != conformance.LimitMemberNameFloor || r.Limits[0].Count == 0 {
			t.Fatalf("seed %d: privacy-engine %s, limits %+v, %v; want a pass with the limit %s", s, r.Status, r.Limits, r.Failure, conformance.LimitMemberNameFloor)
		}
		if r := probes.Run(ctx, f, conformance.WithSeed(s)); r.Status != conformance.StatusPass || len(r.Limits) != 1 || r.Limits[0].Name() != conformance.LimitMemberNameFloor || r.Limits[0].Count == 0 {
			t.Fatalf("seed %d: privacy-probes %s, limits %+v, %v; want a pass with the limit %s", s, r.Status, r.Limits, r.Failure, conformance.LimitMemberNameFloor)
		}
		for _, c := range []conformance.Check{engine, probes} {
			strict := c.Run(ctx, f, conformance.WithSeed(s), conformance.WithStrictPrivacy())
			if strict.Status != conformance.StatusFail || !strings.Contains(strict.Failure.Rule, "Go kit only") || len(strict.Limits) != 0 {
				t.Fatalf("seed %d: strict %s %s, %+v, limits %+v; want a failure of the member-name rule", s, c.ID, strict.Status, strict.Failure, strict.Limits)
			}
		}
	}
}
