package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/internal/upstream"
	"github.com/ds4context/adapterkit/reference"
)

// privacyStart starts a session of factory or fails the test.
func privacyStart(t testing.TB, factory conformance.Factory) *conformance.Session {
	t.Helper()
	s, err := conformance.Start(ctx, factory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestPrivacyProbesPassReferenceAdapter(t *testing.T) {
	s := privacyStart(t, reference.NewConformanceFactory())
	for seed := range uint64(6) {
		if r := conformance.PrivacyProbesCase(ctx, s, seed, conformance.PrivacyProbeCount); !r.Passed {
			t.Fatalf("seed %d: %v", seed, r.Failure)
		}
	}
	if r := conformance.PrivacyProbesRandomCase(ctx, s); !r.Passed {
		t.Fatal(r.Failure)
	}
}

func TestPrivacyProbesPassExampleAdapter(t *testing.T) {
	s := privacyStart(t, correct())
	for seed := range uint64(2) {
		if r := conformance.PrivacyProbesCase(ctx, s, seed, conformance.PrivacyProbeCount); !r.Passed {
			t.Fatalf("seed %d: %v", seed, r.Failure)
		}
	}
}

// declaringPrivacy returns factory with every instance declaring cfg as its
// privacy configuration (nil: declaring none).
func declaringPrivacy(factory conformance.Factory, cfg *privacy.Config) conformance.Factory {
	return conformance.NewFactory("declaring", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := factory.Create(ctx, setup)
		inst.PrivacyConfig = cfg
		return inst, err
	})
}

// TestPrivacyProbesJudgeWithTheDeclaredConfiguration runs privacy-probes on
// reference adapters enforcing configurations other than the default: each
// passes when it declares its configuration and when it declares none
// (then only what holds under every configuration is asked), and fails
// when it declares one it does not enforce.
func TestPrivacyProbesJudgeWithTheDeclaredConfiguration(t *testing.T) {
	for name, cfg := range privacyConfigs() {
		t.Run(name, func(t *testing.T) {
			for _, declared := range []*privacy.Config{&cfg, nil} {
				s := privacyStart(t, declaringPrivacy(configuredFactory(cfg), declared))
				if r := conformance.PrivacyProbesCase(ctx, s, 3, conformance.PrivacyProbeCount); !r.Passed {
					t.Errorf("declared %t: %v", declared != nil, r.Failure)
				}
			}
			if name == "default" {
				return
			}
			def := privacy.DefaultConfig()
			for what, f := range map[string]conformance.Factory{
				"enforcing it, declaring the default": declaringPrivacy(configuredFactory(cfg), &def),
				"enforcing the default, declaring it": declaringPrivacy(configuredFactory(def), &cfg),
			} {
				s := privacyStart(t, f)
				r := conformance.PrivacyProbesCase(ctx, s, 3, conformance.PrivacyProbeCount)
				checkCaught(t, r, 3, conformance.PrivacyProbeCount, "privacy-probes", nil)
				if t.Failed() {
					t.Fatalf("%s", what)
				}
			}
		})
	}
}

// configuredFactory is the reference adapter with privacy configuration
// cfg, built from the reference package's own API; it declares none.
func configuredFactory(cfg privacy.Config) conformance.Factory {
	return conformance.NewFactory("reference with a privacy configuration", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		dir, err := os.MkdirTemp("", "ds4-privacy-engine-")
		if err != nil {
			return conformance.Instance{}, err
		}
		cleanup := func(context.Context) error { return os.RemoveAll(dir) }
		if err := os.Mkdir(filepath.Join(dir, "project"), 0o700); err != nil {
			return conformance.Instance{}, errors.Join(err, cleanup(ctx))
		}
		root, err := filepath.EvalSymlinks(filepath.Join(dir, "project"))
		if err != nil {
			return conformance.Instance{}, errors.Join(err, cleanup(ctx))
		}
		fx := setup.Fixture
		path := filepath.Join(dir, "session.jsonl")
		h := reference.Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
		if err := reference.CreateHistory(ctx, path, h, fx.Messages); err != nil {
			return conformance.Instance{}, errors.Join(err, cleanup(ctx))
		}
		a, err := reference.New(reference.Options{HistoryPath: path, RuntimeID: fx.RuntimeID, ProjectRoot: root,
			Model: &fx.Model, Transport: setup.Transport, Privacy: &cfg})
		if err != nil {
			return conformance.Instance{}, errors.Join(err, cleanup(ctx))
		}
		return conformance.Instance{Adapter: a, ExpectedProjectRoot: root, Cleanup: cleanup}, nil
	})
}

// privacyConfigs are configurations that differ from the default in each
// member, and one stricter than the default (remote providers allowed
// normal content only, one local provider).
func privacyConfigs() map[string]privacy.Config {
	custom := privacy.DefaultConfig()
	custom.DefaultClassification = privacy.Internal
	custom.LocalProviders = []string{"Edge-Box", "ollama"}
	custom.RemoteDefaultAllowed = []privacy.Classification{privacy.Normal}
	custom.RemoteProviders = map[string][]privacy.Classification{
		conformance.FixtureProvider: {privacy.Normal, privacy.Internal, privacy.Sensitive},
		"Strict.Example":            {},
	}
	noRedaction := privacy.DefaultConfig()
	noRedaction.RedactSecrets = false
	disabled := privacy.DefaultConfig()
	disabled.Enabled = false
	stricter := privacy.DefaultConfig()
	stricter.RemoteDefaultAllowed = []privacy.Classification{privacy.Normal}
	stricter.LocalProviders = []string{"ollama"}
	return map[string]privacy.Config{"default": privacy.DefaultConfig(), "custom": custom, "no redaction": noRedaction, "disabled": disabled, "stricter": stricter}
}

func TestPrivacyEnginePassesReferenceAdapter(t *testing.T) {
	s := privacyStart(t, reference.NewConformanceFactory())
	for seed := range uint64(3) {
		if r := conformance.PrivacyEngineCase(ctx, s, privacy.DefaultConfig(), seed, conformance.PrivacyEngineCount); !r.Passed {
			t.Fatalf("seed %d: %v", seed, r.Failure)
		}
	}
	if r := conformance.PrivacyEngineRandomCase(ctx, s, privacy.DefaultConfig()); !r.Passed {
		t.Fatal(r.Failure)
	}
	for name, cfg := range privacyConfigs() {
		s := privacyStart(t, configuredFactory(cfg))
		if r := conformance.PrivacyEngineCase(ctx, s, cfg, 100, conformance.PrivacyEngineCount); !r.Passed {
			t.Errorf("%s configuration: %v", name, r.Failure)
		}
	}
}

// TestPrivacyEngineCatchesAnotherConfiguration checks that the engine
// comparison fails an adapter whose configuration is not the one declared.
func TestPrivacyEngineCatchesAnotherConfiguration(t *testing.T) {
	s := privacyStart(t, reference.NewConformanceFactory())
	for name, cfg := range privacyConfigs() {
		if name == "default" {
			continue
		}
		r := conformance.PrivacyEngineCase(ctx, s, cfg, 1, conformance.PrivacyEngineCount)
		if r.Passed || r.FailureCode != "privacy-engine-assertion-failed" {
			t.Errorf("%s configuration declared, default used: %+v", name, r)
		}
	}
	cfg := privacy.DefaultConfig()
	cfg.DefaultClassification = "secret"
	if r := conformance.PrivacyEngineCase(ctx, s, cfg, 1, 1); r.Passed || !strings.Contains(r.Failure.Rule, "must be valid") {
		t.Errorf("an invalid declared configuration: %+v", r)
	}
}

// enforceFunc is a broken adapter's privacy enforcement; inner is the
// reference adapter it decorates.
type enforceFunc func(ctx context.Context, inner contract.Adapter, provider string, payload any) (contract.PrivacyResult, error)

// leakyAdapter is the reference adapter with its privacy enforcement
// replaced: EnforcePrivacy and Complete (which sends through the
// transport itself, as an adapter does) both use enforce.
type leakyAdapter struct {
	contract.Adapter
	transport contract.Transport
	enforce   enforceFunc
}

func (a leakyAdapter) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	if contract.IsBlank(req.Provider) {
		return a.Adapter.EnforcePrivacy(ctx, req)
	}
	return a.enforce(ctx, a.Adapter, req.Provider, req.Payload)
}

func (a leakyAdapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if _, err := a.Adapter.CurrentModel(ctx); err != nil || contract.IsBlank(req.Provider) || contract.IsBlank(req.Model) {
		return a.Adapter.Complete(ctx, req)
	}
	res, err := a.enforce(ctx, a.Adapter, req.Provider, req.Payload)
	if err != nil {
		return contract.Fallback(contract.FallbackPrivacyEnforcementFail, reference.ReasonPrivacyFailed, false)
	}
	out, err := a.transport.Send(ctx, contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: res.Destination, Payload: res.Payload})
	if err != nil {
		return contract.Fallback(contract.FallbackTransportFailed, reference.ReasonTransportFailed, true)
	}
	return contract.Completed(out, res.Summary(), nil)
}

// referenceMetadata makes a broken enforcement report what the reference
// adapter reports for the payload (destination, changed, counts, and its
// errors), so that only the content it sends is wrong.
func referenceMetadata(enforce enforceFunc) enforceFunc {
	return func(ctx context.Context, inner contract.Adapter, provider string, payload any) (contract.PrivacyResult, error) {
		res, err := inner.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: provider, Payload: payload})
		if err != nil {
			return res, err
		}
		broken, err := enforce(ctx, inner, provider, payload)
		if err != nil {
			return broken, err
		}
		res.Payload = broken.Payload
		return res, nil
	}
}

func leakyFactory(enforce enforceFunc) conformance.Factory {
	return conformance.NewFactory("broken privacy", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := reference.NewConformanceFactory().Create(ctx, setup)
		if err != nil {
			return inst, err
		}
		inst.Adapter = leakyAdapter{Adapter: inst.Adapter, transport: setup.Transport, enforce: enforce}
		return inst, nil
	})
}

// mutantEnforcement is the enforcement of the privacy mutant name.
func mutantEnforcement(name string) enforceFunc {
	e := mutants.BrokenEnforcement(name)
	if e == nil {
		panic("no privacy mutant " + name)
	}
	return func(_ context.Context, _ contract.Adapter, provider string, payload any) (contract.PrivacyResult, error) {
		return e(provider, payload)
	}
}

// echoPayloadError refuses every payload with an error that quotes it.
func echoPayloadError(_ context.Context, _ contract.Adapter, _ string, payload any) (contract.PrivacyResult, error) {
	var raw []byte
	switch p := payload.(type) {
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		raw, _ = json.Marshal(payload)
	}
	return contract.PrivacyResult{}, fmt.Errorf("cannot enforce privacy on %s", raw)
}

// Rules, as the failures state them, that catch the broken adapters.
const (
	catchLeak     = "must never reach it"
	catchSecret   = "must be redacted before a remote provider receives it"
	catchLocal    = "all its content must reach it"
	catchSanitise = "EnforcePrivacy must sanitise an inspectable payload"
)

// brokenPrivacyAdapters are adapters the privacy mutants (internal/mutants)
// do not cover: their broken enforcements behind the reference adapter's
// metadata, so that only the content they send is wrong, and one that
// refuses every payload.
var brokenPrivacyAdapters = []struct {
	name    string
	enforce enforceFunc
	// catches lists the rules a failure may state for this adapter.
	catches []string
	// oldCasePasses is set when the kit's fixed privacy case misses it.
	oldCasePasses bool
}{
	{"replaces the two fixed probes only, reporting the reference's metadata", referenceMetadata(mutantEnforcement("replaces-fixed-probes-only")), []string{catchLeak, catchSecret, catchLocal}, true},
	{"sanitises only the messages member, reporting the reference's metadata", referenceMetadata(mutantEnforcement("sanitises-messages-only")), []string{catchLeak, catchSecret, catchLocal}, true},
	{"matches markers case-sensitively, reporting the reference's metadata", referenceMetadata(mutantEnforcement("case-sensitive-markers")), []string{catchLeak, catchLocal}, true},
	{"sanitises for ollama any provider containing ollama, reporting the reference's metadata", referenceMetadata(mutantEnforcement("ollama-substring-is-local")), []string{catchLeak, catchSecret}, true},
	{"redacts secrets only in content members, reporting the reference's metadata", referenceMetadata(mutantEnforcement("redacts-content-members-only")), []string{catchSecret}, true},
	{"keeps one open marker instead of a stack, reporting the reference's metadata", referenceMetadata(mutantEnforcement("one-slot-marker-floor")), []string{catchLeak}, true},
	{"quotes the payload in its error", echoPayloadError, []string{catchSanitise}, false},
}

// TestPrivacyProbesCatchBrokenAdapters runs the probe check and the engine
// comparison on each broken adapter for many seeds: each must fail, with
// one of the rules that name its defect, while the kit's fixed privacy
// case passes most of them; and no failure text may hold a token of the
// batch, a fixed probe or a marker.
func TestPrivacyProbesCatchBrokenAdapters(t *testing.T) {
	for _, b := range brokenPrivacyAdapters {
		t.Run(b.name, func(t *testing.T) {
			s := privacyStart(t, leakyFactory(b.enforce))
			if r := conformance.ContractCase(ctx, s, conformance.CasePrivacy); r.Passed != b.oldCasePasses {
				t.Errorf("the fixed privacy case passed %t, want %t", r.Passed, b.oldCasePasses)
			}
			for seed := range uint64(6) {
				r := conformance.PrivacyProbesCase(ctx, s, seed, conformance.PrivacyProbeCount)
				checkCaught(t, r, seed, conformance.PrivacyProbeCount, "privacy-probes", b.catches)
			}
			for seed := range uint64(1) {
				r := conformance.PrivacyEngineCase(ctx, s, privacy.DefaultConfig(), seed, conformance.PrivacyEngineCount)
				checkCaught(t, r, seed, conformance.PrivacyEngineCount, "privacy-engine", nil)
			}
			if r := conformance.PrivacyProbesRandomCase(ctx, s); r.Passed {
				t.Error("a run with a random seed passed")
			}
		})
	}
}

// TestPrivacyMutantFailuresHoldNoToken runs the probe check on every
// mutant it must kill, for one seed (three in the long form): each run fails, and no failure
// text holds a token of the batch, a fixed probe or a marker.
func TestPrivacyMutantFailuresHoldNoToken(t *testing.T) {
	n := 0
	for _, m := range mutants.Catalogue() {
		if m.RunnerErr != nil || !slices.Contains(m.Fails, conformance.CheckPrivacyProbes) {
			continue
		}
		n++
		t.Run(m.Name, func(t *testing.T) {
			s := privacyStart(t, m.Factory(reference.NewConformanceFactory()))
			for seed := range longSeeds(1, 3) {
				r := conformance.PrivacyProbesCase(ctx, s, seed, conformance.PrivacyProbeCount)
				checkCaught(t, r, seed, conformance.PrivacyProbeCount, "privacy-probes", nil)
			}
		})
	}
	if n == 0 {
		t.Fatal("no mutant is killed by privacy-probes")
	}
}

// checkCaught requires a failure stating one of the rules in catches (any
// rule when catches is empty) whose text holds no probe.
func checkCaught(t *testing.T, r conformance.CaseResult, seed uint64, n int, id string, catches []string) {
	t.Helper()
	if r.Passed {
		t.Fatalf("%s, seed %d: passed", id, seed)
	}
	f := r.Failure
	text := f.Error()
	if !strings.HasPrefix(r.FailureCode, id+"-") {
		t.Errorf("%s, seed %d: failure code %s", id, seed, r.FailureCode)
	}
	if len(catches) > 0 && !containsAny(f.Rule, catches) {
		t.Errorf("%s, seed %d: caught by another rule:\n%s", id, seed, text)
	}
	if !strings.Contains(text, fmt.Sprintf("seed %#016x", seed)) {
		t.Errorf("%s, seed %d: the failure does not name its seed:\n%s", id, seed, text)
	}
	for _, tok := range conformance.PrivacyProbeTokens(seed, n) {
		if strings.Contains(text, tok) {
			t.Fatalf("%s, seed %d: the failure shows a probe token:\n%s", id, seed, text)
		}
	}
	if strings.Contains(strings.ToLower(text), "ds4:") || strings.Contains(text, conformance.ProbePrivateValue) {
		t.Fatalf("%s, seed %d: the failure shows payload text:\n%s", id, seed, text)
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// BenchmarkCheckPrivacyProbes measures one run of the probe check (64
// payloads, each through EnforcePrivacy and Complete) against the
// reference adapter; the session is created outside the timer.
func BenchmarkCheckPrivacyProbes(b *testing.B) {
	f := reference.NewConformanceFactory()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := privacyStart(b, f)
		b.StartTimer()
		if r := conformance.PrivacyProbesRandomCase(ctx, s); !r.Passed {
			b.Fatal(r.Failure)
		}
	}
}

// BenchmarkCheckPrivacyEngine measures one run of the engine comparison
// against the reference adapter under the default configuration.
func BenchmarkCheckPrivacyEngine(b *testing.B) {
	s := privacyStart(b, reference.NewConformanceFactory())
	b.ReportAllocs()
	for b.Loop() {
		if r := conformance.PrivacyEngineRandomCase(ctx, s, privacy.DefaultConfig()); !r.Passed {
			b.Fatal(r.Failure)
		}
	}
}

// TestPrivacyEngineNamesTheDifferingPath checks that a payload difference
// is reported by JSON path, kinds and sizes, never by its text.
func TestPrivacyEngineNamesTheDifferingPath(t *testing.T) {
	s := privacyStart(t, leakyFactory(referenceMetadata(mutantEnforcement("case-sensitive-markers"))))
	r := conformance.PrivacyEngineCase(ctx, s, privacy.DefaultConfig(), 3, conformance.PrivacyEngineCount)
	if r.Passed {
		t.Fatal("an adapter that misses mis-cased markers passed the engine comparison")
	}
	shape := regexp.MustCompile(`^payload \$(\.[A-Za-z_]+|\.<member #\d+>|\[\d+\])*: (a string of \d+ bytes expected, a different string of \d+ bytes got|.* expected, .* got)`)
	if !shape.MatchString(r.Failure.Actual) {
		t.Errorf("the difference is not shown by path and size: %s", r.Failure.Actual)
	}
	checkCaught(t, r, 3, conformance.PrivacyEngineCount, "privacy-engine", []string{"exactly what the privacy engine gives"})
}

// A failed seeded check carries the seed it drew from, and WithSeed of that
// seed fails it again, in exactly the same words; a pass and an unseeded
// check carry none.
func TestSeededFailureCarriesItsSeed(t *testing.T) {
	check, _ := conformance.CheckByID(conformance.CheckPrivacyProbes)
	f := leakyFactory(mutantEnforcement("replaces-fixed-probes-only"))
	r := check.Run(ctx, f)
	if r.Passed() || r.Seed == 0 {
		t.Fatalf("privacy-probes on a leaking adapter: %s, seed %d; want a failure with its seed", r.Status, r.Seed)
	}
	again := check.Run(ctx, f, conformance.WithSeed(r.Seed))
	if again.Seed != r.Seed || again.Failure == nil || *again.Failure != *r.Failure {
		t.Fatalf("rerun with seed %#x: seed %#x, %+v; want the same failure %+v", r.Seed, again.Seed, again.Failure, r.Failure)
	}
	if pass := check.Run(ctx, reference.NewConformanceFactory()); !pass.Passed() || pass.Seed == 0 {
		t.Fatalf("privacy-probes on the reference adapter: %s, seed %d; want a pass with the seed it drew from", pass.Status, pass.Seed)
	}
	lifecycle, _ := conformance.CheckByID(conformance.CaseLifecycle)
	if r := lifecycle.Run(ctx, f); r.Seed != 0 {
		t.Fatalf("an unseeded check carries seed %d", r.Seed)
	}
}

// upstreamEnforcement enforces the default configuration with the engine
// that leaves out the Go kit's member-name rule, as the TypeScript kit's
// engine does.
func upstreamEnforcement(_ context.Context, _ contract.Adapter, provider string, payload any) (contract.PrivacyResult, error) {
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	r, err := upstream.WithoutNameFloor(e).(*privacy.Engine).SanitizePayload(provider, payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	return r.ForProvider(provider), nil
}

// TestPrivacyEngineShowsTheNameFloorAsALimit checks the latitude of
// privacy-engine: an enforcement that leaves out only the Go kit's
// member-name rule passes with the limit member-name-floor, counting the
// payloads it changes; strict, the same seed fails with a failure that
// names the rule, the seed and no token.
func TestPrivacyEngineShowsTheNameFloorAsALimit(t *testing.T) {
	f := leakyFactory(upstreamEnforcement)
	check, _ := conformance.CheckByID(conformance.CheckPrivacyEngine)
	r := check.Run(ctx, f, conformance.WithSeed(11))
	if r.Status != conformance.StatusPass || len(r.Limits) != 1 || r.Limits[0].Deviation != conformance.LimitMemberNameFloor ||
		r.Limits[0].Count == 0 || r.Limits[0].Count > conformance.PrivacyEngineCount || !strings.Contains(r.Limits[0].Detail(), " payloads, ") {
		t.Fatalf("privacy-engine: %s, limits %+v, %v", r.Status, r.Limits, r.Failure)
	}
	s := privacyStart(t, f)
	strict := conformance.PrivacyEngineStrictCase(ctx, s, privacy.DefaultConfig(), 11, conformance.PrivacyEngineCount)
	checkCaught(t, strict, 11, conformance.PrivacyEngineCount, "privacy-engine", []string{"Go kit only"})
	if r := conformance.PrivacyEngineCase(ctx, s, privacy.DefaultConfig(), 11, conformance.PrivacyEngineCount); !r.Passed {
		t.Fatalf("not strict: %v", r.Failure)
	}
}
