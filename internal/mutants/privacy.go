package mutants

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// The privacy mutants: adapters whose privacy enforcement breaks one rule
// of the privacy engine, in what EnforcePrivacy returns and in what
// Complete sends through the transport.
var privacyCatalogue = []Mutant{
	{
		Name: "replaces-fixed-probes-only", Breaks: "sanitisation applies the policy, not a list of known values",
		Fails: all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		port:  leakyPort,
		wrap:  leaky(replaceFixedProbes, nil),
	},
	{
		Name: "sanitises-messages-only", Breaks: "every member of a payload is sanitised, not only messages",
		Fails: all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		port:  leakyPort,
		wrap:  leaky(sanitiseMessagesOnly, nil),
	},
	{
		Name: "case-sensitive-markers", Breaks: "privacy markers match whatever their case",
		Fails: all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		port:  leakyPort,
		wrap:  leaky(caseSensitiveMarkers, nil),
	},
	{
		Name: "ollama-substring-is-local", Breaks: "a provider is local only when it is a configured local provider",
		// The model draws a provider holding "ollama" now and then: it
		// catches this mutant in 2 of 10 seeds.
		Fails:         all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes),
		ModelByChance: true,
		port:          leakyPort,
		wrap:          leaky(ollamaIsLocal, nil),
	},
	{
		Name: "drops-nested-func", Breaks: "a payload that cannot be encoded fails closed, even nested",
		Fails: all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes),
		port:  leakyPort,
		wrap: leaky(sanitise, func(provider string, payload any, _ error) (contract.PrivacyResult, error) {
			return dropNestedFuncs(provider, payload)
		}),
	},
	{
		Name: "sends-empty-payload", Breaks: "sanitisation withholds only what the policy blocks",
		Fails: all(conformance.CheckCancellation, conformance.CheckConcurrency, conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		port:  leakyPort,
		wrap:  leaky(dropEverything, nil),
	},
	{
		Name: "redacts-content-members-only", Breaks: "secrets are redacted in every string of a payload",
		Fails: all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		port:  leakyPort,
		wrap:  leaky(redactContentOnly, nil),
	},
	{
		Name: "one-slot-marker-floor", Breaks: "open privacy markers form a stack: a close pops the innermost and the outer stays open",
		// The model draws such markers only now and then: it catches this
		// mutant in about half the seeds.
		Fails:         all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes),
		ModelByChance: true,
		port:          leakyPort,
		wrap:          leaky(oneSlotFloor, nil),
	},
	{
		// Allowed: SPEC §8 marks the member-name floor "Go kit only". An
		// adapter built on the TypeScript kit's engine passes, with the
		// limit member-name-floor (it fails under WithStrictPrivacy).
		Name: "upstream-privacy-engine", Breaks: "nothing SPEC's shared rules state: its engine leaves out the Go kit's member-name floor, as the TypeScript kit's does",
		port: leakyPort,
		wrap: leaky(upstreamEngine, nil),
	},
	{
		// Allowed: a configuration stricter than the default is the
		// adapter's own; the privacy checks judge it by the one declared.
		Name: "stricter-privacy-declared", Breaks: "nothing: it enforces a configuration stricter than the default, and declares it",
		port:     leakyPort,
		wrap:     configured(stricter),
		instance: declarePrivacy(&stricterConfig),
	},
	{
		// Allowed: without a declared configuration, the privacy checks
		// ask only what holds under every configuration SPEC allows.
		Name: "stricter-privacy-undeclared", Breaks: "nothing: it enforces a configuration stricter than the default, and declares none",
		port:     leakyPort,
		wrap:     configured(stricter),
		instance: declarePrivacy(nil),
	},
	{
		Name: "declares-a-stricter-privacy-config", Breaks: "enforcement follows the privacy configuration the adapter declares",
		Fails:    all(conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:     func(a contract.Adapter, _ *env) contract.Adapter { return a },
		instance: declarePrivacy(&stricterConfig),
	},
	{
		Name: "error-quotes-payload", Breaks: "a privacy error is metadata only, never the payload",
		Fails: all(conformance.CheckPrivacyProbes, conformance.CheckModel),
		port:  leakyPort,
		wrap:  leaky(sanitise, echoPayloadError),
	},
}

// Enforcement is a privacy enforcement of payload for provider, as a
// privacy mutant does it.
type Enforcement func(provider string, payload any) (contract.PrivacyResult, error)

// brokenEnforcements are the privacy mutants' enforcements that get only
// the content they return wrong, by mutant name.
var brokenEnforcements = map[string]Enforcement{
	"replaces-fixed-probes-only":   replaceFixedProbes,
	"sanitises-messages-only":      sanitiseMessagesOnly,
	"case-sensitive-markers":       caseSensitiveMarkers,
	"ollama-substring-is-local":    ollamaIsLocal,
	"redacts-content-members-only": redactContentOnly,
	"one-slot-marker-floor":        oneSlotFloor,
	"upstream-privacy-engine":      upstreamEngine,
}

// BrokenEnforcement returns the enforcement of the privacy mutant name, for
// tests that put it behind other metadata; nil when name is not one of
// the mutants whose only defect is the content they return.
func BrokenEnforcement(name string) Enforcement { return brokenEnforcements[name] }

// leaky returns a wrap whose privacy enforcement is enforce; onError,
// when set, answers instead of the wrapped adapter's failed enforcement.
func leaky(enforce Enforcement, onError func(provider string, payload any, err error) (contract.PrivacyResult, error)) func(contract.Adapter, *env) contract.Adapter {
	return func(a contract.Adapter, e *env) contract.Adapter {
		return &leakyPrivacy{decorator: decorator{a}, env: e, enforce: enforce, onError: onError}
	}
}

// configured returns a wrap whose privacy enforcement is enforce, a
// correct enforcement of another configuration with the same local
// providers: Complete sends what it gives and reports its summary.
func configured(enforce Enforcement) func(contract.Adapter, *env) contract.Adapter {
	return func(a contract.Adapter, e *env) contract.Adapter {
		return &leakyPrivacy{decorator: decorator{a}, env: e, enforce: enforce, summary: true}
	}
}

// declarePrivacy returns an instance hook declaring cfg as the instance's
// privacy configuration (nil: none).
func declarePrivacy(cfg *privacy.Config) func(*conformance.Instance) error {
	return func(inst *conformance.Instance) error {
		inst.PrivacyConfig = cfg
		return nil
	}
}

// stricterConfig is the default privacy configuration with remote
// providers allowed normal content only.
var stricterConfig = func() privacy.Config {
	cfg := privacy.DefaultConfig()
	cfg.RemoteDefaultAllowed = []privacy.Classification{privacy.Normal}
	return cfg
}()

var stricterEngine = func() *privacy.Engine {
	e, err := privacy.New(stricterConfig)
	if err != nil {
		panic(err)
	}
	return e
}()

// stricter is stricterConfig's enforcement, as a correct adapter enforces
// it.
func stricter(provider string, payload any) (contract.PrivacyResult, error) {
	r, err := stricterEngine.SanitizePayload(provider, payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	return r.ForProvider(provider), nil
}

// leakyPrivacy keeps the wrapped adapter's enforcement for what is not
// about the payload (a closed adapter, a blank provider, the diagnostic of
// a failure) and replaces its result with enforce's. Complete has the
// wrapped adapter send enforce's payload, to the transport or the local
// KV port, instead of its own, one completion at a time, so concurrent
// ones never share the raw slot; with summary set, a completed result
// reports enforce's summary too.
type leakyPrivacy struct {
	decorator
	env     *env
	enforce Enforcement
	onError func(provider string, payload any, err error) (contract.PrivacyResult, error)
	summary bool
	serial  sync.Mutex
}

func (m *leakyPrivacy) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	res, err := m.Adapter.EnforcePrivacy(ctx, req)
	if err != nil {
		if m.onError == nil || m.closed(ctx) || contract.IsBlank(req.Provider) {
			return res, err
		}
		return m.onError(req.Provider, req.Payload, err)
	}
	return m.enforce(req.Provider, req.Payload)
}

// closed reports whether the wrapped adapter has shut down.
func (m *leakyPrivacy) closed(ctx context.Context) bool {
	_, err := m.Adapter.CurrentModel(ctx)
	return err != nil
}

func (m *leakyPrivacy) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if contract.IsBlank(req.Provider) {
		return m.Adapter.Complete(ctx, req)
	}
	res, err := m.enforce(req.Provider, req.Payload)
	if err != nil {
		return m.Adapter.Complete(ctx, req)
	}
	m.serial.Lock()
	defer m.serial.Unlock()
	m.env.mu.Lock()
	m.env.raw = res.Payload
	m.env.mu.Unlock()
	defer func() {
		m.env.mu.Lock()
		m.env.raw = nil
		m.env.mu.Unlock()
	}()
	r := m.Adapter.Complete(ctx, req)
	if m.summary && r.Status == contract.StatusCompleted {
		r.Privacy = res.Summary()
	}
	return r
}

// sanitise is the default policy's enforcement, as a correct adapter
// enforces it.
func sanitise(provider string, payload any) (contract.PrivacyResult, error) {
	r, err := defaultEngine.SanitizePayload(provider, payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	return r.ForProvider(provider), nil
}

// defaultEngine is the privacy engine under the default policy.
var defaultEngine = func() *privacy.Engine {
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		panic(err)
	}
	return e
}()

// toJSON reads a payload: a byte slice is JSON, anything else is encoded
// with encoding/json.
func toJSON(payload any) ([]byte, error) {
	switch p := payload.(type) {
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	return json.Marshal(payload)
}

func decodeAny(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	return v, d.Decode(&v)
}

// replaceFixedProbes removes only the two fixed probes of the kit's
// privacy case.
func replaceFixedProbes(provider string, payload any) (contract.PrivacyResult, error) {
	raw, err := toJSON(payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	pol, err := defaultEngine.Policy(provider)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	out := strings.ReplaceAll(string(raw), conformance.ProbePrivateValue, "")
	out = strings.ReplaceAll(out, conformance.ProbeCredential, "")
	return contract.PrivacyResult{Provider: provider, Destination: pol.Destination, Payload: json.RawMessage(out), Changed: out != string(raw)}, nil
}

// sanitiseMessagesOnly sanitises the messages member and passes every
// other member through.
func sanitiseMessagesOnly(provider string, payload any) (contract.PrivacyResult, error) {
	raw, err := toJSON(payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	v, err := decodeAny(raw)
	m, ok := v.(map[string]any)
	if err != nil || !ok || m["messages"] == nil {
		return sanitise(provider, json.RawMessage(raw))
	}
	res, err := sanitise(provider, map[string]any{"messages": m["messages"]})
	if err != nil {
		return res, err
	}
	var sm map[string]json.RawMessage
	if err := json.Unmarshal(res.Payload, &sm); err != nil {
		return contract.PrivacyResult{}, err
	}
	m["messages"] = sm["messages"]
	res.Payload, err = json.Marshal(m)
	return res, err
}

var anyMarker = regexp.MustCompile(`(?i)\[/?ds4:(normal|internal|sensitive|local-only)\]`)

// caseSensitiveMarkers sees only lower-case markers: every other one is
// broken up before the wrapped adapter reads the payload.
func caseSensitiveMarkers(provider string, payload any) (contract.PrivacyResult, error) {
	raw, err := toJSON(payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	v, err := decodeAny(raw)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	fix := func(s string) string {
		return anyMarker.ReplaceAllStringFunc(s, func(m string) string {
			if m == strings.ToLower(m) {
				return m
			}
			return "[\u200b" + m[1:]
		})
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return fix(v)
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[fix(k)] = walk(x)
			}
			return out
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	return sanitise(provider, json.RawMessage(out))
}

// ollamaIsLocal treats every provider whose name contains "ollama" as the
// local ollama.
func ollamaIsLocal(provider string, payload any) (contract.PrivacyResult, error) {
	p := provider
	if strings.Contains(strings.ToLower(provider), "ollama") {
		p = "ollama"
	}
	res, err := sanitise(p, payload)
	res.Provider = provider
	return res, err
}

// dropNestedFuncs drops funcs and channels nested in maps and slices and
// sanitises the rest.
func dropNestedFuncs(provider string, payload any) (contract.PrivacyResult, error) {
	var drop func(v any, depth int) (any, bool)
	drop = func(v any, depth int) (any, bool) {
		if depth > 64 {
			return v, true
		}
		if k := reflect.ValueOf(v).Kind(); k == reflect.Func || k == reflect.Chan {
			return nil, false
		}
		switch v := v.(type) {
		case []any:
			out := make([]any, 0, len(v))
			for _, x := range v {
				if y, ok := drop(x, depth+1); ok {
					out = append(out, y)
				}
			}
			return out, true
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				if y, ok := drop(x, depth+1); ok {
					out[k] = y
				}
			}
			return out, true
		}
		return v, true
	}
	kept, _ := drop(payload, 0)
	return sanitise(provider, kept)
}

// dropEverything withholds the whole payload: it sends {}.
func dropEverything(provider string, payload any) (contract.PrivacyResult, error) {
	res, err := sanitise(provider, payload)
	if err != nil {
		return res, err
	}
	res.Payload, res.Changed = json.RawMessage(`{}`), true
	return res, nil
}

// markersOnly is the default policy without secret redaction.
var markersOnly = func() *privacy.Engine {
	cfg := privacy.DefaultConfig()
	cfg.RedactSecrets = false
	e, err := privacy.New(cfg)
	if err != nil {
		panic(err)
	}
	return e
}()

// redactContentOnly applies markers everywhere but redacts secrets only
// in strings under a "content" member.
func redactContentOnly(provider string, payload any) (contract.PrivacyResult, error) {
	r, err := markersOnly.SanitizePayload(provider, payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	v, err := decodeAny(r.Value)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	n := 0
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && strings.EqualFold(k, "content") {
					t, _ := defaultEngine.SanitizeText(provider, s)
					n += t.SecretRedactions
					v[k] = t.Text
					continue
				}
				v[k] = walk(x)
			}
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	res := r.ForProvider(provider)
	res.Payload, res.SecretRedactions, res.Changed = out, res.SecretRedactions+n, res.Changed || n > 0
	return res, nil
}

// echoPayloadError fails as the wrapped adapter did, with an error that
// quotes the payload.
func echoPayloadError(_ string, payload any, err error) (contract.PrivacyResult, error) {
	return contract.PrivacyResult{}, fmt.Errorf("cannot enforce privacy on %q: %w", payloadText(payload, nil, 0), err)
}

// payloadText appends the strings of payload to out, down to a depth of 64
// so that a cyclic payload ends.
func payloadText(payload any, out []string, depth int) []string {
	if depth > 64 {
		return out
	}
	switch v := payload.(type) {
	case string:
		return append(out, v)
	case json.RawMessage:
		return append(out, string(v))
	case []byte:
		return append(out, string(v))
	case []any:
		for _, x := range v {
			out = payloadText(x, out, depth+1)
		}
	case map[string]any:
		for k, x := range v {
			out = payloadText(x, append(out, k), depth+1)
		}
	}
	return out
}

// rawPort hands the local KV port the payload the mutant set in env.raw,
// when it set one.
type rawPort struct {
	portShim
	env *env
}

func (p rawPort) request(req localkv.ReuseRequest) localkv.ReuseRequest {
	p.env.mu.Lock()
	defer p.env.mu.Unlock()
	if p.env.raw != nil {
		req.Payload = slices.Clone(p.env.raw)
	}
	return req
}

func (p rawPort) TryReuse(ctx context.Context, req localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	return p.RuntimePort.TryReuse(ctx, p.request(req))
}

func (p rawPort) FullReplay(ctx context.Context, req localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	return p.RuntimePort.FullReplay(ctx, p.request(req))
}

// leakyPort is the port of every privacy mutant.
func leakyPort(p localkv.RuntimePort, e *env) localkv.RuntimePort { return rawPort{portShim{p}, e} }
