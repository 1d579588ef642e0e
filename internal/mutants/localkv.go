package mutants

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// kvEnv is what local KV mutants share between the port they hand the base
// factory and the adapter they wrap.
type kvEnv struct {
	// port is the port the suite gave the factory (nil outside the local
	// KV checks).
	port localkv.RuntimePort
	mu   sync.Mutex
	// fingerprint is the last key fingerprint the adapter sent its port.
	fingerprint string
	// shutdownFailed is set when the port failed to shut down.
	shutdownFailed atomic.Bool
}

// LocalKVPort forwards the wrapped adapter's local KV port, if any.
func (d decorator) LocalKVPort() localkv.RuntimePort {
	if p, ok := d.Adapter.(localkv.PortProvider); ok {
		return p.LocalKVPort()
	}
	return nil
}

// LocalKVDiagnostics forwards the wrapped adapter's local KV counters, if
// any.
func (d decorator) LocalKVDiagnostics() (localkv.Diagnostics, bool) {
	if p, ok := d.Adapter.(localkv.DiagnosticsProvider); ok {
		return p.LocalKVDiagnostics()
	}
	return localkv.Diagnostics{}, false
}

// The local KV mutants. None of them changes anything outside the local KV
// checks and the model check (some of whose instances get a port), so the
// runner (which hands factories no port) passes them all.
var localKVCatalogue = []Mutant{
	{
		Name: "kv-key-ignores-prefix", Breaks: "a changed prefix or option changes the eligibility key",
		Fails: all(conformance.CheckLocalKVChangedPrefix, conformance.CheckModel),
		wrap:  plain,
		port: func(p localkv.RuntimePort, _ *env) localkv.RuntimePort {
			return &firstKeyPort{portShim: portShim{p}}
		},
	},
	{
		Name: "kv-key-ignores-model", Breaks: "the model is part of the eligibility key",
		// The model catches it when a run draws a changed model after a
		// hit on the same prefix.
		Fails:         all(conformance.CheckLocalKVChangedPrefix),
		ModelByChance: true,
		wrap:          plain,
		port: func(p localkv.RuntimePort, _ *env) localkv.RuntimePort {
			return &payloadKeyPort{portShim: portShim{p}, keys: map[string]localkv.Key{}}
		},
	},
	{
		Name: "kv-ineligible-records-diagnostic", Breaks: "an ineligible local completion falls through quietly",
		Fails: all(conformance.CheckLocalKVIneligible, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &noisyFallThrough{decorator: decorator{a}} },
	},
	{
		Name: "kv-reuses-rejected-state", Breaks: "a rejected reuse is followed by a full replay",
		Fails: all(conformance.CheckLocalKVNonHit, conformance.CheckModel),
		wrap:  plain,
		port:  func(p localkv.RuntimePort, _ *env) localkv.RuntimePort { return rejectedAsHit{portShim{p}} },
	},
	{
		Name: "kv-replay-failure-swallowed", Breaks: "a failed full replay is retried through the ordinary transport",
		// The model catches it when a run arms a replay failure on an
		// instance with a port: in 7 of 10 seeds.
		Fails:         all(conformance.CheckLocalKVReplayFailure),
		ModelByChance: true,
		wrap:          plain,
		port:          func(p localkv.RuntimePort, _ *env) localkv.RuntimePort { return swallowReplay{portShim{p}} },
	},
	{
		Name: "kv-replay-failure-unreported", Breaks: "a failed local KV path records local-kv-replay-failed",
		// The model catches it when a run arms a replay failure on an
		// instance with a port: in 7 of 10 seeds.
		Fails:         all(conformance.CheckLocalKVReplayFailure),
		ModelByChance: true,
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return hideDiagnostic{decorator{a}, contract.DiagnosticLocalKVReplayFailed}
		},
	},
	{
		Name: "kv-port-for-remote", Breaks: "only a local destination reaches the local KV port",
		Fails: all(conformance.CheckLocalKVRemote, conformance.CheckModel),
		wrap:  func(a contract.Adapter, e *env) contract.Adapter { return remoteToPort{decorator{a}, e} },
	},
	{
		Name: "kv-fingerprint-in-diagnostic", Breaks: "diagnostics never hold an eligibility key",
		Fails: all(conformance.CheckLocalKVMetadataOnly, conformance.CheckModel),
		wrap:  func(a contract.Adapter, e *env) contract.Adapter { return fingerprintDiagnostic{decorator{a}, e} },
		port: func(p localkv.RuntimePort, e *env) localkv.RuntimePort {
			return fingerprintRecorder{portShim{p}, e}
		},
	},
	{
		Name: "kv-declared-port-unused", Breaks: "an adapter declaring local-kv-reuse offers eligible local completions to its port",
		Fails: all(conformance.CheckLocalKVHit, conformance.CheckLocalKVChangedPrefix, conformance.CheckLocalKVNonHit, conformance.CheckLocalKVReplayFailure, conformance.CheckLocalKVShutdownOnce, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return declaresLocalKV{decorator{a}} },
		port:  func(localkv.RuntimePort, *env) localkv.RuntimePort { return nil },
	},
}

func plain(a contract.Adapter, _ *env) contract.Adapter { return decorator{a} }

// portShim forwards to the suite's port; mutants override one method. It
// is what a broken adapter's local KV path does between the controller and
// the runtime.
type portShim struct{ localkv.RuntimePort }

// Shutdown forwards to the suite's port.
func (p portShim) Shutdown(ctx context.Context) error {
	if sp, ok := p.RuntimePort.(localkv.ShutdownPort); ok {
		return sp.Shutdown(ctx)
	}
	return nil
}

// firstKeyPort sends every request under the first key it saw, as an
// adapter whose key ignores the prefix and options would.
type firstKeyPort struct {
	portShim
	mu    sync.Mutex
	first *localkv.Key
}

func (p *firstKeyPort) key(k localkv.Key) localkv.Key {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		p.first = &k
	}
	return *p.first
}

func (p *firstKeyPort) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	r.Key = p.key(r.Key)
	return p.RuntimePort.TryReuse(ctx, r)
}

func (p *firstKeyPort) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	r.Key = p.key(r.Key)
	return p.RuntimePort.FullReplay(ctx, r)
}

// payloadKeyPort sends every request under the first key it saw for the
// same payload, as an adapter whose key ignores the model would.
type payloadKeyPort struct {
	portShim
	mu   sync.Mutex
	keys map[string]localkv.Key
}

func (p *payloadKeyPort) key(r localkv.ReuseRequest) localkv.Key {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k, ok := p.keys[string(r.Payload)]; ok {
		return k
	}
	p.keys[string(r.Payload)] = r.Key
	return r.Key
}

func (p *payloadKeyPort) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	r.Key = p.key(r)
	return p.RuntimePort.TryReuse(ctx, r)
}

func (p *payloadKeyPort) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	r.Key = p.key(r)
	return p.RuntimePort.FullReplay(ctx, r)
}

// noisyFallThrough records a diagnostic for every local completion that
// went through the ordinary transport.
type noisyFallThrough struct {
	decorator
	mu    sync.Mutex
	extra []contract.Diagnostic
}

func (m *noisyFallThrough) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted && r.LocalKV == nil && r.Privacy.Destination == contract.DestinationLocal {
		m.mu.Lock()
		m.extra = append(m.extra, contract.Diagnostic{Code: "local-kv-bypassed", Severity: contract.SeverityInfo,
			Message: "Local KV reuse was bypassed", Capability: contract.CapabilityLocalKVReuse})
		m.mu.Unlock()
	}
	return r
}

func (m *noisyFallThrough) Diagnostics() []contract.Diagnostic {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(m.Adapter.Diagnostics(), m.extra...)
}

// rejectedAsHit treats state the runtime rejected as reusable.
type rejectedAsHit struct{ portShim }

func (p rejectedAsHit) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	a, err := p.RuntimePort.TryReuse(ctx, r)
	if err == nil && a.Status == localkv.ReuseRejected {
		return localkv.ReuseAnswer{Status: localkv.ReuseHit, Output: json.RawMessage(conformance.LocalKVHitOutput), SavedPrefillTokens: r.PrefixTokenCount}, nil
	}
	return a, err
}

// swallowReplay reports a failed full replay as an empty completion.
type swallowReplay struct{ portShim }

func (p swallowReplay) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	a, err := p.RuntimePort.FullReplay(ctx, r)
	if err != nil {
		return localkv.ReplayAnswer{Output: json.RawMessage(conformance.LocalKVReplayOutput)}, nil
	}
	return a, nil
}

// remoteToPort offers remote completions to the local KV port before
// completing them.
type remoteToPort struct {
	decorator
	env *env
}

func (m remoteToPort) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if port := m.env.kv.port; port != nil {
		if res, err := m.Adapter.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: req.Provider, Payload: req.Payload}); err == nil && res.Destination == contract.DestinationRemote {
			_, _ = port.TryReuse(ctx, localkv.ReuseRequest{Provider: req.Provider, Model: req.Model, Payload: res.Payload})
		}
	}
	return m.Adapter.Complete(ctx, req)
}

// fingerprintRecorder remembers the last fingerprint the adapter sent.
type fingerprintRecorder struct {
	portShim
	env *env
}

func (p fingerprintRecorder) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	p.env.kv.mu.Lock()
	p.env.kv.fingerprint = r.Key.Fingerprint
	p.env.kv.mu.Unlock()
	return p.RuntimePort.TryReuse(ctx, r)
}

// fingerprintDiagnostic reports the last fingerprint in a diagnostic.
type fingerprintDiagnostic struct {
	decorator
	env *env
}

func (m fingerprintDiagnostic) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	m.env.kv.mu.Lock()
	defer m.env.kv.mu.Unlock()
	if fp := m.env.kv.fingerprint; fp != "" {
		ds = append(ds, contract.Diagnostic{Code: "local-kv-state", Severity: contract.SeverityInfo,
			Message: "Local KV state " + fp + " is warm", Capability: contract.CapabilityLocalKVReuse})
	}
	return ds
}

// declaresLocalKV declares local KV reuse whatever its adapter does (its
// factory is given no port).
type declaresLocalKV struct{ decorator }

func (m declaresLocalKV) CapabilityDeclarations() []contract.CapabilityDeclaration {
	ds := m.Adapter.CapabilityDeclarations()
	out := make([]contract.CapabilityDeclaration, 0, len(ds)+1)
	for _, d := range ds {
		if d.ID != contract.CapabilityLocalKVReuse {
			out = append(out, d)
		}
	}
	return append(out, contract.CapabilityDeclaration{ID: contract.CapabilityLocalKVReuse, Supported: true, Version: contract.LocalKVRuntimePortVersion})
}

func (m declaresLocalKV) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(m.CapabilityDeclarations(), reqs)
}
