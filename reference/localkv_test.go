package reference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// kvPort is a recording runtime port. By default it behaves like a runtime
// that keeps the KV state of every prefix it has fully replayed: TryReuse
// hits for a fingerprint it holds and misses otherwise. reuse, when set,
// answers TryReuse instead; replay, when set, answers FullReplay instead;
// replayErr makes FullReplay fail.
type kvPort struct {
	mu        sync.Mutex
	warm      map[string]bool
	tries     []localkv.ReuseRequest
	replays   []localkv.ReuseRequest
	reuse     func(localkv.ReuseRequest) (localkv.ReuseAnswer, error)
	replay    func(localkv.ReuseRequest) (localkv.ReplayAnswer, error)
	replayErr error
	shutdowns int
	shutErr   error
}

func newKVPort() *kvPort { return &kvPort{warm: map[string]bool{}} }

func (p *kvPort) TryReuse(_ context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries = append(p.tries, r)
	if p.reuse != nil {
		return p.reuse(r)
	}
	if !p.warm[r.Key.Fingerprint] {
		return localkv.ReuseAnswer{Status: localkv.ReuseMiss}, nil
	}
	return localkv.ReuseAnswer{Status: localkv.ReuseHit, Output: json.RawMessage(`"kv hit"`),
		SavedPrefillTokens: r.PrefixTokenCount, PrefillLatencyMs: 0.5}, nil
}

func (p *kvPort) FullReplay(_ context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replays = append(p.replays, r)
	if p.replay != nil {
		return p.replay(r)
	}
	if p.replayErr != nil {
		return localkv.ReplayAnswer{}, p.replayErr
	}
	p.warm[r.Key.Fingerprint] = true
	return localkv.ReplayAnswer{Output: json.RawMessage(`"kv replay"`), PrefillTokens: r.ContextTokenCount, PrefillLatencyMs: 40}, nil
}

func (p *kvPort) Shutdown(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shutdowns++
	return p.shutErr
}

// calls returns how many TryReuse and FullReplay calls the port saw.
func (p *kvPort) calls() (tries, replays int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.tries), len(p.replays)
}

// forget drops all KV state, as a runtime restart or eviction would.
func (p *kvPort) forget() {
	p.mu.Lock()
	p.warm = map[string]bool{}
	p.mu.Unlock()
}

// Secret-looking probes for the test payloads. They never appear in a
// diagnostic, an error or a result's metadata.
const (
	kvPrefixProbe  = "KV_PREFIX_PROBE system prompt and tools"
	kvMessageProbe = "KV_MESSAGE_PROBE what does the code do"
)

// kvPayload builds the test payload shape read by testPrepare.
func kvPayload(prefix string, system any, prefixTokens, contextTokens int64) json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"kv": map[string]any{
			"prefix":        prefix,
			"systemOptions": system,
			"prefixTokens":  prefixTokens,
			"contextTokens": contextTokens,
		},
		"messages": []any{map[string]any{"role": "user", "content": kvMessageProbe}},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func defaultKVPayload() json.RawMessage {
	return kvPayload(kvPrefixProbe, map[string]any{"temperature": 0}, 120, 160)
}

// testPrepare reads {"kv": {prefix, systemOptions?, prefixTokens, contextTokens}}.
func testPrepare(payload json.RawMessage) (LocalKVPrepared, bool) {
	var p struct {
		KV *struct {
			Prefix        string          `json:"prefix"`
			SystemOptions json.RawMessage `json:"systemOptions"`
			PrefixTokens  int64           `json:"prefixTokens"`
			ContextTokens int64           `json:"contextTokens"`
		} `json:"kv"`
	}
	if json.Unmarshal(payload, &p) != nil || p.KV == nil {
		return LocalKVPrepared{}, false
	}
	out := LocalKVPrepared{PromptPrefix: []byte(p.KV.Prefix), PrefixTokenCount: p.KV.PrefixTokens, ContextTokenCount: p.KV.ContextTokens}
	if p.KV.SystemOptions != nil {
		out.SystemOptions = p.KV.SystemOptions
	}
	return out, true
}

const (
	kvProvider = "ollama" // local under the default privacy configuration
	kvModel    = "codestral:latest"
)

func kvOptions(e env, port localkv.RuntimePort, tr contract.Transport) Options {
	o := e.options(tr)
	o.LocalKV = &LocalKVOptions{Enabled: true, Port: port, RuntimeRevision: "runtime-build-1",
		ModelRevision: "sha256-model-a", Prepare: testPrepare}
	return o
}

// kvAdapter is an adapter over the fixture history with local KV enabled.
func kvAdapter(t testing.TB) (*Adapter, *kvPort, *recorder, env) {
	t.Helper()
	e := newEnv(t)
	e.create(t)
	port, tr := newKVPort(), &recorder{}
	return newAdapter(t, kvOptions(e, port, tr)), port, tr, e
}

func kvComplete(a *Adapter, payload any) contract.CompletionResult {
	return a.Complete(context.Background(), contract.CompletionRequest{Provider: kvProvider, Model: kvModel, Payload: payload})
}

func wantMode(t *testing.T, res contract.CompletionResult, mode contract.LocalKVMode) {
	t.Helper()
	if res.Status != contract.StatusCompleted || res.LocalKV == nil || res.LocalKV.Mode != mode {
		t.Fatalf("result %+v (localKv %+v), want completed with mode %s", res, res.LocalKV, mode)
	}
	if res.Privacy.Destination != contract.DestinationLocal || res.Privacy.Provider != kvProvider {
		t.Fatalf("privacy summary %+v", res.Privacy)
	}
}

func wantNoDiagnostic(t *testing.T, a *Adapter, code string) {
	t.Helper()
	if hasDiagnostic(a, code) {
		t.Fatalf("unexpected %s in %+v", code, a.Diagnostics())
	}
}

func TestLocalKVHitOnSecondIdenticalCall(t *testing.T) {
	a, port, tr, e := kvAdapter(t)
	expectUnchanged(t, e, func() {
		first := kvComplete(a, defaultKVPayload())
		wantMode(t, first, contract.LocalKVFullReplay)
		if string(first.Output) != `"kv replay"` || first.LocalKV.ReplayPrefillTokens != 160 || first.LocalKV.SavedPrefillTokens != 0 {
			t.Fatalf("first completion %s %+v", first.Output, first.LocalKV)
		}
		second := kvComplete(a, defaultKVPayload())
		wantMode(t, second, contract.LocalKVHit)
		want := contract.LocalKVMetadata{Mode: contract.LocalKVHit, PrefixTokens: 120, ContextTokens: 160, SavedPrefillTokens: 120, PrefillLatencyMs: 0.5}
		if string(second.Output) != `"kv hit"` || *second.LocalKV != want {
			t.Fatalf("second completion %s %+v", second.Output, second.LocalKV)
		}
	})
	if len(tr.reqs) != 0 {
		t.Fatalf("the ordinary transport was called %d times", len(tr.reqs))
	}
	if tries, replays := port.calls(); tries != 2 || replays != 1 {
		t.Fatalf("port saw %d tries and %d replays, want 2 and 1", tries, replays)
	}
	if port.tries[0].Key != port.tries[1].Key {
		t.Fatal("identical requests got different keys")
	}
	d, ok := a.LocalKVDiagnostics()
	want := localkv.Diagnostics{Version: contract.LocalKVDiagnosticsVersion, Requests: 2, EligibleRequests: 2,
		Hits: 1, Misses: 1, FullReplays: 1, PrefixTokens: 240, ContextTokens: 320, SavedPrefillTokens: 120,
		ReplayPrefillTokens: 160, ReplayPrefillLatencyMs: 40}
	if !ok || d != want {
		t.Fatalf("diagnostics %+v, %v; want %+v", d, ok, want)
	}
	if len(a.Diagnostics()) != 0 {
		t.Fatalf("adapter diagnostics %+v, want none", a.Diagnostics())
	}
}

// The port receives the sanitised payload, and the key the adapter's own
// identity: runtime id, revisions, capability and privacy policy versions,
// and the request's provider and model.
func TestLocalKVPortGetsSanitisedPayloadAndAdapterIdentity(t *testing.T) {
	a, port, _, _ := kvAdapter(t)
	payload := json.RawMessage(`{"kv":{"prefix":"p","prefixTokens":1,"contextTokens":2},"messages":[{"role":"user","content":"[ds4:local-only]kept locally[/ds4:local-only]"}]}`)
	wantMode(t, kvComplete(a, payload), contract.LocalKVFullReplay)
	sanitised, err := a.EnforcePrivacy(context.Background(), contract.PrivacyRequest{Provider: kvProvider, Payload: payload})
	if err != nil || !sanitised.Changed {
		t.Fatalf("enforce: %+v, %v", sanitised, err)
	}
	for _, r := range append(slices.Clone(port.tries), port.replays...) {
		if string(r.Payload) != string(sanitised.Payload) || r.Provider != kvProvider || r.Model != kvModel {
			t.Fatalf("port request provider %q model %q payload differs from the sanitised payload", r.Provider, r.Model)
		}
	}
	policy, err := PrivacyPolicyVersion(privacy.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	el := localkv.DeriveEligibility(localkv.EligibilityInput{
		Enabled: true, CapabilityEnabled: true, CapabilityVersion: contract.LocalKVRuntimePortVersion,
		Destination: "local", RuntimeID: fixture().RuntimeID, RuntimeRevision: "runtime-build-1",
		Provider: kvProvider, Model: kvModel, ModelRevision: "sha256-model-a",
		PrivacyPolicyVersion: policy, PromptPrefix: []byte("p"), PrefixTokenCount: 1, ContextTokenCount: 2,
	})
	if !el.Eligible || port.tries[0].Key != el.Key {
		t.Fatalf("key %+v, want %+v", port.tries[0].Key, el.Key)
	}
}

func TestLocalKVChangedPrefixOrOptionFullyReplays(t *testing.T) {
	changes := map[string]json.RawMessage{
		"one prefix byte": kvPayload(kvPrefixProbe[:len(kvPrefixProbe)-1]+"T", map[string]any{"temperature": 0}, 120, 160),
		"one option":      kvPayload(kvPrefixProbe, map[string]any{"temperature": 1}, 120, 160),
		"option absent":   kvPayload(kvPrefixProbe, nil, 120, 160),
	}
	for name, changed := range changes {
		t.Run(name, func(t *testing.T) {
			a, port, tr, _ := kvAdapter(t)
			wantMode(t, kvComplete(a, defaultKVPayload()), contract.LocalKVFullReplay)
			wantMode(t, kvComplete(a, defaultKVPayload()), contract.LocalKVHit)
			wantMode(t, kvComplete(a, changed), contract.LocalKVFullReplay)
			if _, replays := port.calls(); replays != 2 {
				t.Fatalf("%d full replays, want 2", replays)
			}
			if port.tries[2].Key.Fingerprint == port.tries[0].Key.Fingerprint {
				t.Fatal("a changed request reused the original fingerprint")
			}
			if len(tr.reqs) != 0 {
				t.Fatal("the ordinary transport was called")
			}
		})
	}
}

func TestLocalKVNonHitsFullyReplay(t *testing.T) {
	cases := map[string]struct {
		setup   func(p *kvPort)
		counter func(d localkv.Diagnostics) int64
	}{
		"stale rejection": {
			func(p *kvPort) {
				p.reuse = func(localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
					return localkv.ReuseAnswer{Status: localkv.ReuseRejected}, nil
				}
			},
			func(d localkv.Diagnostics) int64 { return d.Rejected },
		},
		"cache loss": {
			func(p *kvPort) { p.forget() },
			func(d localkv.Diagnostics) int64 { return d.Misses - 1 },
		},
		"port error": {
			func(p *kvPort) {
				p.reuse = func(localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
					return localkv.ReuseAnswer{}, errors.New("runtime unreachable")
				}
			},
			func(d localkv.Diagnostics) int64 { return d.Unavailable },
		},
		"malformed hit": {
			func(p *kvPort) {
				p.reuse = func(r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
					return localkv.ReuseAnswer{Status: localkv.ReuseHit, Output: json.RawMessage(`"x"`), SavedPrefillTokens: r.PrefixTokenCount + 1}, nil
				}
			},
			func(d localkv.Diagnostics) int64 { return d.Unavailable },
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a, port, tr, _ := kvAdapter(t)
			wantMode(t, kvComplete(a, defaultKVPayload()), contract.LocalKVFullReplay)
			c.setup(port)
			res := kvComplete(a, defaultKVPayload())
			wantMode(t, res, contract.LocalKVFullReplay)
			if string(res.Output) != `"kv replay"` {
				t.Fatalf("output %s", res.Output)
			}
			d, _ := a.LocalKVDiagnostics()
			if c.counter(d) != 1 || d.FullReplays != 2 || d.Hits != 0 {
				t.Fatalf("diagnostics %+v", d)
			}
			if len(tr.reqs) != 0 || len(a.Diagnostics()) != 0 {
				t.Fatalf("transport calls %d, diagnostics %+v; want none", len(tr.reqs), a.Diagnostics())
			}
		})
	}
}

func TestLocalKVFailedReplayRetriesThroughTransport(t *testing.T) {
	failures := map[string]func(p *kvPort){
		"replay error": func(p *kvPort) { p.replayErr = errors.New("runtime crashed: " + kvPrefixProbe) },
		"malformed replay": func(p *kvPort) {
			p.replay = func(localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
				return localkv.ReplayAnswer{PrefillTokens: 1}, nil // no output
			}
		},
	}
	for name, fail := range failures {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			tr, port := &recorder{}, newKVPort()
			fail(port)
			a := newAdapter(t, kvOptions(e, port, tr))
			res := kvComplete(a, defaultKVPayload())
			if res.Status != contract.StatusCompleted || res.LocalKV != nil || string(res.Output) != `{"role":"assistant","content":"ok"}` {
				t.Fatalf("result %+v, want the transport's completion without local KV metadata", res)
			}
			if len(tr.reqs) != 1 {
				t.Fatalf("transport calls %d, want 1", len(tr.reqs))
			}
			sanitised, _ := a.EnforcePrivacy(context.Background(), contract.PrivacyRequest{Provider: kvProvider, Payload: defaultKVPayload()})
			got := tr.reqs[0]
			if string(got.Payload) != string(sanitised.Payload) || got.Destination != contract.DestinationLocal || got.Provider != kvProvider || got.Model != kvModel {
				t.Fatalf("transport request %s/%s/%s does not carry the full sanitised payload", got.Provider, got.Model, got.Destination)
			}
			want := contract.Diagnostic{Code: contract.DiagnosticLocalKVReplayFailed, Severity: contract.SeverityWarning,
				Message:    "Local KV transport failed; completion retried with a full prompt through native transport",
				Capability: contract.CapabilityLocalKVReuse}
			if ds := a.Diagnostics(); len(ds) != 1 || ds[0] != want {
				t.Fatalf("diagnostics %+v, want [%+v]", ds, want)
			}
			if d, _ := a.LocalKVDiagnostics(); d.TransportFailures != 1 {
				t.Fatalf("local KV diagnostics %+v", d)
			}
		})
	}
}

func TestLocalKVFailedReplayAndTransportFallsBack(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	port := newKVPort()
	port.replayErr = errors.New("runtime crashed")
	a := newAdapter(t, kvOptions(e, port, &recorder{fail: true}))
	res := kvComplete(a, defaultKVPayload())
	if !reflect.DeepEqual(res, contract.Fallback(contract.FallbackTransportFailed, ReasonTransportFailed, true)) {
		t.Fatalf("result %+v, want transport-failed", res)
	}
	var codes []string
	for _, d := range a.Diagnostics() {
		codes = append(codes, d.Code)
	}
	if !slices.Equal(codes, []string{contract.DiagnosticLocalKVReplayFailed, contract.DiagnosticCompletionTransportFailed}) {
		t.Fatalf("diagnostics %v", codes)
	}
}

// A panic in Prepare or in the port is a failure of the KV path, never of
// the completion.
func TestLocalKVPanicsRetryThroughTransport(t *testing.T) {
	cases := map[string]func(o *LocalKVOptions, p *kvPort){
		"prepare": func(o *LocalKVOptions, _ *kvPort) {
			o.Prepare = func(json.RawMessage) (LocalKVPrepared, bool) { panic("prepare bug") }
		},
		"port": func(_ *LocalKVOptions, p *kvPort) {
			p.reuse = func(localkv.ReuseRequest) (localkv.ReuseAnswer, error) { panic("port bug") }
		},
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			port, tr := newKVPort(), &recorder{}
			o := kvOptions(e, port, tr)
			set(o.LocalKV, port)
			a := newAdapter(t, o)
			res := kvComplete(a, defaultKVPayload())
			if res.Status != contract.StatusCompleted || res.LocalKV != nil || len(tr.reqs) != 1 {
				t.Fatalf("result %+v, transport calls %d", res, len(tr.reqs))
			}
			if !hasDiagnostic(a, contract.DiagnosticLocalKVReplayFailed) {
				t.Fatalf("diagnostics %+v lack %s", a.Diagnostics(), contract.DiagnosticLocalKVReplayFailed)
			}
		})
	}
}

func TestLocalKVBypassesUseTheTransportSilently(t *testing.T) {
	cases := map[string]struct {
		provider string
		payload  json.RawMessage
		opts     func(o *LocalKVOptions)
		// requests is how many requests the controller counts: a bypass by
		// the controller counts, one before it does not.
		requests int64
	}{
		"remote destination": {provider: "conformance-remote", payload: defaultKVPayload()},
		"disabled": {provider: kvProvider, payload: defaultKVPayload(),
			opts: func(o *LocalKVOptions) { o.Enabled = false }},
		"nothing prepared": {provider: kvProvider, payload: json.RawMessage(`{"messages":[]}`)},
		"ineligible token counts": {provider: kvProvider, payload: kvPayload(kvPrefixProbe, nil, 161, 160),
			requests: 1},
		"ineligible empty prefix": {provider: kvProvider, payload: kvPayload("", nil, 1, 1),
			requests: 1},
		"ineligible provider": {provider: " " + kvProvider, payload: defaultKVPayload(),
			requests: 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			port, tr := newKVPort(), &recorder{}
			o := kvOptions(e, port, tr)
			if c.opts != nil {
				c.opts(o.LocalKV)
			}
			a := newAdapter(t, o)
			res := a.Complete(context.Background(), contract.CompletionRequest{Provider: c.provider, Model: kvModel, Payload: c.payload})
			if res.Status != contract.StatusCompleted || res.LocalKV != nil || len(tr.reqs) != 1 {
				t.Fatalf("result %+v, transport calls %d; want one ordinary completion", res, len(tr.reqs))
			}
			if tries, replays := port.calls(); tries+replays != 0 {
				t.Fatalf("the port was called (%d tries, %d replays)", tries, replays)
			}
			d, _ := a.LocalKVDiagnostics()
			if d.Requests != c.requests || d.BypassedRequests != c.requests {
				t.Fatalf("local KV diagnostics %+v, want %d bypassed request(s)", d, c.requests)
			}
			if len(a.Diagnostics()) != 0 {
				t.Fatalf("diagnostics %+v, want none", a.Diagnostics())
			}
		})
	}
}

func TestLocalKVDeclarations(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	kvDecl := func(a *Adapter) contract.CapabilityDeclaration {
		for _, d := range a.CapabilityDeclarations() {
			if d.ID == contract.CapabilityLocalKVReuse {
				return d
			}
		}
		t.Fatal("no local-kv-reuse declaration")
		return contract.CapabilityDeclaration{}
	}

	plain := newAdapter(t, e.options(nil))
	if d := kvDecl(plain); d.Supported || d.Reason != ReasonNoLocalKV {
		t.Fatalf("without a port: %+v", d)
	}
	if plain.LocalKVPort() != nil {
		t.Fatal("LocalKVPort without a port is not nil")
	}
	if _, ok := plain.LocalKVDiagnostics(); ok {
		t.Fatal("LocalKVDiagnostics without a port reports true")
	}

	for _, enabled := range []bool{true, false} {
		port := newKVPort()
		o := kvOptions(e, port, nil)
		o.LocalKV.Enabled = enabled
		o.LocalKV.CapabilityVersion = "  llama-kv-v2\t"
		a := newAdapter(t, o)
		if d := kvDecl(a); !d.Supported || d.Version != "llama-kv-v2" {
			t.Fatalf("enabled=%v: %+v", enabled, d)
		}
		n := a.NegotiateCapabilities([]contract.CapabilityRequest{{ID: contract.CapabilityLocalKVReuse}})
		if !slices.Equal(n.Enabled, []contract.CapabilityID{contract.CapabilityLocalKVReuse}) {
			t.Fatalf("enabled=%v: negotiation enables %v", enabled, n.Enabled)
		}
		if a.LocalKVPort() != port {
			t.Fatal("LocalKVPort is not the configured port")
		}
		if d, ok := a.LocalKVDiagnostics(); !ok || d.Version != contract.LocalKVDiagnosticsVersion {
			t.Fatalf("diagnostics %+v, %v", d, ok)
		}
	}

	o := kvOptions(e, newKVPort(), nil)
	if d := kvDecl(newAdapter(t, o)); d.Version != contract.LocalKVRuntimePortVersion {
		t.Fatalf("default capability version %q", d.Version)
	}
}

func TestLocalKVOptionsValidation(t *testing.T) {
	e := newEnv(t)
	bad := map[string]func(o *LocalKVOptions){
		"no port":                     func(o *LocalKVOptions) { o.Port = nil },
		"enabled without prepare":     func(o *LocalKVOptions) { o.Prepare = nil },
		"blank runtime revision":      func(o *LocalKVOptions) { o.RuntimeRevision = " \t" },
		"empty runtime revision":      func(o *LocalKVOptions) { o.RuntimeRevision = "" },
		"blank model revision":        func(o *LocalKVOptions) { o.ModelRevision = "\u00a0" },
		"blank capability version":    func(o *LocalKVOptions) { o.CapabilityVersion = "  " },
		"blank privacy version":       func(o *LocalKVOptions) { o.PrivacyPolicyVersion = "\n" },
		"empty model revision":        func(o *LocalKVOptions) { o.ModelRevision = "" },
		"blank revision, not enabled": func(o *LocalKVOptions) { o.Enabled, o.RuntimeRevision = false, " " },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			o := kvOptions(e, newKVPort(), nil)
			mutate(o.LocalKV)
			if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("error %v, want ErrInvalidOptions", err)
			}
		})
	}
	// Disabled, a prepare function is not needed.
	o := kvOptions(e, newKVPort(), nil)
	o.LocalKV.Enabled, o.LocalKV.Prepare = false, nil
	newAdapter(t, o)
}

// Trimmed revisions and versions are what the key hashes.
func TestLocalKVOptionsAreTrimmed(t *testing.T) {
	keyOf := func(mutate func(o *LocalKVOptions)) localkv.Key {
		t.Helper()
		e := newEnv(t)
		e.create(t)
		port := newKVPort()
		o := kvOptions(e, port, nil)
		o.LocalKV.PrivacyPolicyVersion = "policy-a"
		mutate(o.LocalKV)
		wantMode(t, kvComplete(newAdapter(t, o), defaultKVPayload()), contract.LocalKVFullReplay)
		return port.tries[0].Key
	}
	plain := keyOf(func(*LocalKVOptions) {})
	padded := keyOf(func(o *LocalKVOptions) {
		o.RuntimeRevision = " " + o.RuntimeRevision + "\t"
		o.ModelRevision = "\n" + o.ModelRevision
		o.CapabilityVersion = " " + contract.LocalKVRuntimePortVersion + " "
		o.PrivacyPolicyVersion = " policy-a "
	})
	if plain != padded {
		t.Fatal("padded options hash differently from trimmed ones")
	}
	other := keyOf(func(o *LocalKVOptions) { o.PrivacyPolicyVersion = "policy-b" })
	if other.PrivacyHash == plain.PrivacyHash || other.Fingerprint == plain.Fingerprint {
		t.Fatal("the privacy policy version is not part of the key")
	}
}

func TestPrivacyPolicyVersion(t *testing.T) {
	// The stable JSON of the default configuration, members sorted.
	text := `{"defaultClassification":"normal","enabled":true,"localProviders":["ollama","llama-cpp","lmstudio"],` +
		`"redactSecrets":true,"remoteDefaultAllowed":["normal","internal"],"remoteProviders":{}}`
	sum := sha256.Sum256([]byte(text))
	got, err := PrivacyPolicyVersion(privacy.DefaultConfig())
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("default version %q, %v; want %x", got, err, sum)
	}
	// Nil lists and maps are empty ones.
	empty := privacy.Config{DefaultClassification: privacy.Normal}
	emptyText := `{"defaultClassification":"normal","enabled":false,"localProviders":[],"redactSecrets":false,"remoteDefaultAllowed":[],"remoteProviders":{}}`
	sum = sha256.Sum256([]byte(emptyText))
	if got, err := PrivacyPolicyVersion(empty); err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("empty configuration version %q, %v", got, err)
	}
	// Every member matters.
	base, _ := PrivacyPolicyVersion(privacy.DefaultConfig())
	mutations := map[string]func(c *privacy.Config){
		"enabled":        func(c *privacy.Config) { c.Enabled = false },
		"default class":  func(c *privacy.Config) { c.DefaultClassification = privacy.Internal },
		"local":          func(c *privacy.Config) { c.LocalProviders = c.LocalProviders[:2] },
		"remote default": func(c *privacy.Config) { c.RemoteDefaultAllowed = c.RemoteDefaultAllowed[:1] },
		"remote entry": func(c *privacy.Config) {
			c.RemoteProviders = map[string][]privacy.Classification{"openai": {privacy.Normal}}
		},
		"redaction": func(c *privacy.Config) { c.RedactSecrets = false },
	}
	for name, mutate := range mutations {
		c := privacy.DefaultConfig()
		mutate(&c)
		if v, _ := PrivacyPolicyVersion(c); v == base {
			t.Errorf("%s: version unchanged", name)
		}
	}
	// The adapter's default is the version of its own privacy configuration.
	e := newEnv(t)
	e.create(t)
	cfg := privacy.DefaultConfig()
	cfg.LocalProviders = append(cfg.LocalProviders, "vllm")
	port := newKVPort()
	o := kvOptions(e, port, nil)
	o.Privacy = &cfg
	wantMode(t, kvComplete(newAdapter(t, o), defaultKVPayload()), contract.LocalKVFullReplay)
	v, _ := PrivacyPolicyVersion(cfg)
	want := localkv.DeriveEligibility(localkv.EligibilityInput{Enabled: true, CapabilityEnabled: true,
		CapabilityVersion: "c", Destination: "local", RuntimeID: "r", RuntimeRevision: "r", Provider: "p",
		Model: "m", ModelRevision: "m", PrivacyPolicyVersion: v, PromptPrefix: []byte("x")})
	if port.tries[0].Key.PrivacyHash != want.Key.PrivacyHash {
		t.Fatal("the adapter's key does not use its privacy configuration's version")
	}
}

func TestLocalKVShutdown(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("enabled=%v", enabled), func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			port := newKVPort()
			o := kvOptions(e, port, nil)
			o.LocalKV.Enabled = enabled
			a := newAdapter(t, o)
			for range 3 {
				if err := a.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if port.shutdowns != 1 {
				t.Fatalf("port shut down %d times, want 1", port.shutdowns)
			}
			if ds := a.Diagnostics(); len(ds) != 1 || ds[0].Code != contract.DiagnosticAdapterClosed {
				t.Fatalf("diagnostics %+v", ds)
			}
			res := kvComplete(a, defaultKVPayload())
			if res.Code != contract.FallbackAdapterClosed {
				t.Fatalf("after shutdown: %+v", res)
			}
			if tries, replays := port.calls(); tries+replays != 0 {
				t.Fatal("the port was called after shutdown")
			}
		})
	}
}

func TestLocalKVShutdownFailure(t *testing.T) {
	for name, port := range map[string]localkv.RuntimePort{
		"error": func() *kvPort { p := newKVPort(); p.shutErr = errors.New("release failed: " + kvPrefixProbe); return p }(),
		"panic": panicShutdownPort{newKVPort()},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			a := newAdapter(t, kvOptions(e, port, nil))
			if err := a.Shutdown(context.Background()); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			a.Shutdown(context.Background())
			want := []contract.Diagnostic{
				{Code: contract.DiagnosticLocalKVShutdownFailed, Severity: contract.SeverityWarning,
					Message: "Runtime KV shutdown failed after adapter closure", Capability: contract.CapabilityLocalKVReuse},
				{Code: contract.DiagnosticAdapterClosed, Severity: contract.SeverityInfo, Message: diagnosticMessages[contract.DiagnosticAdapterClosed]},
			}
			if ds := a.Diagnostics(); !reflect.DeepEqual(ds, want) {
				t.Fatalf("diagnostics %+v, want %+v", ds, want)
			}
		})
	}
}

type panicShutdownPort struct{ *kvPort }

func (panicShutdownPort) Shutdown(context.Context) error { panic("shutdown bug") }

// A port without a Shutdown method is simply not shut down.
func TestLocalKVPortWithoutShutdown(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	a := newAdapter(t, kvOptions(e, noShutdownPort{newKVPort()}, nil))
	if err := a.Shutdown(context.Background()); err != nil || len(a.Diagnostics()) != 1 {
		t.Fatalf("shutdown %v, diagnostics %+v", err, a.Diagnostics())
	}
}

// noShutdownPort hides kvPort's Shutdown method.
type noShutdownPort struct{ p *kvPort }

func (n noShutdownPort) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	return n.p.TryReuse(ctx, r)
}

func (n noShutdownPort) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	return n.p.FullReplay(ctx, r)
}

// Nothing the adapter reports — diagnostics, results' metadata, errors —
// carries the prefix, the payload, the fingerprint or any key hash, on any
// path: hit, replay, failure, shutdown failure.
func TestLocalKVReportsAreMetadataOnly(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	port := newKVPort()
	port.shutErr = errors.New("cannot release " + kvPrefixProbe)
	a := newAdapter(t, kvOptions(e, port, &recorder{}))
	var texts []string
	record := func(res contract.CompletionResult) {
		res.Output = nil // runtime-owned output; the fake port's carries no probe anyway
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	record(kvComplete(a, defaultKVPayload()))
	record(kvComplete(a, defaultKVPayload()))
	port.mu.Lock()
	port.replayErr = errors.New("replay failed for " + kvPrefixProbe)
	port.mu.Unlock()
	port.forget()
	record(kvComplete(a, defaultKVPayload()))
	a.Shutdown(context.Background())
	d, _ := a.LocalKVDiagnostics()
	b, _ := json.Marshal(d)
	texts = append(texts, string(b))
	for _, diag := range a.Diagnostics() {
		b, _ := json.Marshal(diag)
		texts = append(texts, string(b))
	}
	_, err := New(func() Options { o := kvOptions(e, port, nil); o.LocalKV.RuntimeRevision = " "; return o }())
	texts = append(texts, err.Error())

	secrets := []string{kvPrefixProbe, kvMessageProbe, "KV_PREFIX_PROBE", "KV_MESSAGE_PROBE"}
	for _, r := range port.tries {
		k := r.Key
		secrets = append(secrets, k.Fingerprint, k.PrefixHash, k.ProviderModelHash, k.OptionsHash, k.PrivacyHash, k.RuntimeHash)
	}
	for _, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Fatalf("report %q contains a prefix, payload or key", text)
			}
		}
	}
	if !hasDiagnostic(a, contract.DiagnosticLocalKVReplayFailed) || !hasDiagnostic(a, contract.DiagnosticLocalKVShutdownFailed) {
		t.Fatalf("the failure paths were not exercised: %+v", a.Diagnostics())
	}
}

func TestLocalKVConcurrentCompletions(t *testing.T) {
	a, port, tr, e := kvAdapter(t)
	const goroutines, rounds = 8, 25
	prefixes := []string{"prefix one", "prefix two", "prefix three"}
	expectUnchanged(t, e, func() {
		var wg sync.WaitGroup
		errs := make(chan string, goroutines*rounds)
		for g := range goroutines {
			wg.Go(func() {
				for i := range rounds {
					res := kvComplete(a, kvPayload(prefixes[(g+i)%len(prefixes)], nil, 10, 20))
					if res.Status != contract.StatusCompleted || res.LocalKV == nil {
						errs <- fmt.Sprintf("%+v", res)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("completion %s", e)
		}
	})
	d, _ := a.LocalKVDiagnostics()
	tries, replays := port.calls()
	if d.Requests != goroutines*rounds || d.Hits+int64(replays) != d.Requests || int64(tries) != d.Requests || d.FullReplays != int64(replays) {
		t.Fatalf("diagnostics %+v with %d tries and %d replays", d, tries, replays)
	}
	if d.Hits == 0 || replays < len(prefixes) {
		t.Fatalf("%d hits and %d replays for %d prefixes", d.Hits, replays, len(prefixes))
	}
	if len(tr.reqs) != 0 {
		t.Fatal("the ordinary transport was called")
	}
}

// Prepare gets its own copy: scribbling on it changes neither what the port
// nor what a retry through the transport receives.
func TestLocalKVPrepareGetsACopy(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	port, tr := newKVPort(), &recorder{}
	port.replayErr = errors.New("runtime crashed")
	o := kvOptions(e, port, tr)
	o.LocalKV.Prepare = func(payload json.RawMessage) (LocalKVPrepared, bool) {
		p, ok := testPrepare(payload)
		clear(payload)
		return p, ok
	}
	a := newAdapter(t, o)
	kvComplete(a, defaultKVPayload())
	sanitised, _ := a.EnforcePrivacy(context.Background(), contract.PrivacyRequest{Provider: kvProvider, Payload: defaultKVPayload()})
	if len(port.tries) != 1 || string(port.tries[0].Payload) != string(sanitised.Payload) {
		t.Fatal("the port did not get the sanitised payload")
	}
	if len(tr.reqs) != 1 || string(tr.reqs[0].Payload) != string(sanitised.Payload) {
		t.Fatal("the retry did not send the sanitised payload")
	}
}
