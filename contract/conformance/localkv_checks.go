package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
)

// kvPrefix is the reusable prefix of the local KV checks. Like the payload
// around it, it must never appear in what an adapter reports.
const kvPrefix = "DS4_CONFORMANCE_KV_PREFIX: you review the reference project; tools: read, grep."

// kvPrompt is the prompt every local KV check starts from.
func kvPrompt() LocalKVPrompt {
	return LocalKVPrompt{
		Prefix:        kvPrefix,
		SystemOptions: json.RawMessage(`{"seed":7,"temperature":0}`),
		ToolOptions:   json.RawMessage(`[{"name":"read","schema":{"type":"object"}}]`),
		PrefixTokens:  120,
		ContextTokens: 160,
	}
}

// ruleUsesPort is the rule broken by an adapter that declares local KV
// reuse but never offers an eligible completion to its factory's port.
const ruleUsesPort = "an adapter declaring local-kv-reuse offers eligible local completions to the runtime port its factory was given (Setup.LocalKVPort)"

// kvSession is an instance created with a recording local KV port.
type kvSession struct {
	s    *Session
	a    contract.Adapter
	port *RecordingKVPort
}

// startLocalKV creates an instance whose factory is handed a recording
// port, skips the check when the adapter then does not declare local KV
// reuse, and checks the local KV provider is local for it.
func startLocalKV(ctx context.Context, e *env) (*kvSession, error) {
	port := NewRecordingKVPort()
	s, err := e.startKV(ctx, port)
	if err != nil {
		return nil, err
	}
	a := s.Adapter()
	if !capabilityDeclared(a, contract.CapabilityLocalKVReuse) {
		return nil, skip("the adapter does not declare the local-kv-reuse capability as supported when its factory is given a local KV port")
	}
	res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: LocalKVProvider, Payload: LocalKVPayload(kvPrompt())})
	if err != nil || res.Destination != contract.DestinationLocal {
		return nil, broken("the local KV checks complete with provider "+LocalKVProvider+", which the adapter's privacy configuration must treat as local",
			"destination local", fmt.Sprintf("destination %q (enforcement failed: %t)", Redact(string(res.Destination)), err != nil))
	}
	return &kvSession{s: s, a: a, port: port}, nil
}

// complete sends prompt's payload to the local KV provider.
func (k *kvSession) complete(ctx context.Context, p LocalKVPrompt) contract.CompletionResult {
	return k.completeAs(ctx, p, LocalKVProvider, LocalKVModel)
}

// completeAs sends prompt's payload to provider and model.
func (k *kvSession) completeAs(ctx context.Context, p LocalKVPrompt, provider, model string) contract.CompletionResult {
	return k.a.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: model, Payload: LocalKVPayload(p)})
}

// isLocal reports whether the adapter's privacy enforcement sends
// provider's payloads to a local destination.
func (k *kvSession) isLocal(ctx context.Context, provider string) bool {
	res, err := k.a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: provider, Payload: PlainPayload()})
	return err == nil && res.Destination == contract.DestinationLocal
}

// sanitised returns what privacy enforcement makes of prompt's payload.
func (k *kvSession) sanitised(ctx context.Context, p LocalKVPrompt) json.RawMessage {
	res, err := k.a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: LocalKVProvider, Payload: LocalKVPayload(p)})
	if err != nil {
		panic(abort{broken("EnforcePrivacy sanitises a local payload", "a sanitised payload", "error: "+Redact(err.Error()))})
	}
	return res.Payload
}

// describeKVResult shows a completion result as metadata: status, code,
// local KV mode and counts, and which fixed output it carries.
func describeKVResult(r contract.CompletionResult) string {
	if r.Status != contract.StatusCompleted {
		return Redact(fmt.Sprintf("status %q, code %q", r.Status, r.Code))
	}
	out := "another output"
	switch {
	case sameJSONText(r.Output, LocalKVHitOutput):
		out = "the port's hit output"
	case sameJSONText(r.Output, LocalKVReplayOutput):
		out = "the port's replay output"
	case sameJSONText(r.Output, TransportOutput):
		out = "the transport's output"
	}
	if r.LocalKV == nil {
		return "completed with " + out + ", no local KV metadata"
	}
	m := r.LocalKV
	return Redact(fmt.Sprintf("completed with %s, local KV mode %q (prefix %d, context %d, saved %d, replayed %d tokens)",
		out, m.Mode, m.PrefixTokens, m.ContextTokens, m.SavedPrefillTokens, m.ReplayPrefillTokens))
}

// wantMode ends the check unless r completed through the port in mode with output.
func (k *kvSession) wantMode(r contract.CompletionResult, mode contract.LocalKVMode, output, rule, when string) {
	if r.Status == contract.StatusCompleted && r.LocalKV != nil && r.LocalKV.Mode == mode && sameJSONText(r.Output, output) {
		return
	}
	if k.port.Calls() == 0 {
		panic(abort{broken(ruleUsesPort, "port calls for an eligible local completion "+when, "the port was never called; "+describeKVResult(r))})
	}
	want := "the port's replay output"
	if mode == contract.LocalKVHit {
		want = "the port's hit output"
	}
	panic(abort{broken(rule, fmt.Sprintf("completed with %s, local KV mode %q, %s", want, mode, when), describeKVResult(r))})
}

// wantNoTransport ends the check if the ordinary transport was called.
func (k *kvSession) wantNoTransport(rule string) {
	if n := k.s.Transport().Len(); n != 0 {
		panic(abort{broken(rule, "no request through the ordinary transport", fmt.Sprintf("%d request(s)", n))})
	}
}

func checkKVHit(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	const rule = "a completion whose prefix, options, model, privacy policy and runtime match state the runtime holds reuses it"
	p := kvPrompt()
	k.wantMode(k.complete(ctx, p), contract.LocalKVFullReplay, LocalKVReplayOutput,
		"the first completion of a prefix misses and is fully replayed", "on the first call (the runtime holds no state yet)")
	second := k.complete(ctx, p)
	k.wantMode(second, contract.LocalKVHit, LocalKVHitOutput, rule, "on the second identical call")
	if m := second.LocalKV; m.PrefixTokens != p.PrefixTokens || m.ContextTokens != p.ContextTokens || m.SavedPrefillTokens != p.PrefixTokens || m.ReplayPrefillTokens != 0 {
		return broken("a hit reports the request's token counts and the tokens the runtime saved",
			fmt.Sprintf("prefix %d, context %d, saved %d, replayed 0 tokens", p.PrefixTokens, p.ContextTokens, p.PrefixTokens), describeKVResult(second))
	}
	if second.Privacy.Destination != contract.DestinationLocal || second.Privacy.Provider != LocalKVProvider {
		return broken("a local KV completion reports the privacy decision of its payload", "provider "+LocalKVProvider+", destination local",
			Redact(fmt.Sprintf("provider %q, destination %q", second.Privacy.Provider, second.Privacy.Destination)))
	}
	k.wantNoTransport("a completion served by the local KV port does not also go through the ordinary transport")
	tries := k.port.Tries()
	if len(tries) != 2 || tries[0].Key != tries[1].Key || tries[0].Key.Version != contract.LocalKVEligibilityVersion {
		return broken("identical requests have one eligibility key ("+contract.LocalKVEligibilityVersion+")",
			"two reuse attempts under one key", fmt.Sprintf("%d reuse attempt(s), keys equal %t", len(tries), len(tries) == 2 && tries[0].Key == tries[1].Key))
	}
	want := k.sanitised(ctx, p)
	for i, r := range append(tries, k.port.Replays()...) {
		if !sameJSON(r.Payload, want) || r.Provider != LocalKVProvider || r.Model != LocalKVModel ||
			r.PrefixTokenCount != p.PrefixTokens || r.ContextTokenCount != p.ContextTokens {
			return broken("the port receives the request's provider, model, token counts and complete sanitised payload",
				"the sanitised payload of the completion", fmt.Sprintf("port request #%d differs (payload equal %t, provider and model equal %t, token counts %d/%d)",
					i, sameJSON(r.Payload, want), r.Provider == LocalKVProvider && r.Model == LocalKVModel, r.PrefixTokenCount, r.ContextTokenCount))
		}
	}
	return nil
}

func checkKVChanged(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	const rule = "a change to one prefix byte, one option, the model or the provider changes the eligibility key, so the runtime's state is not reused and the completion is fully replayed"
	base := kvPrompt()
	k.wantMode(k.complete(ctx, base), contract.LocalKVFullReplay, LocalKVReplayOutput,
		"the first completion of a prefix misses and is fully replayed", "on the first call (the runtime holds no state yet)")
	baseKey := k.port.Tries()[0].Key
	// The last two variants differ from each other only in null versus
	// absent, which hash differently.
	variants := []kvVariant{
		{"the prefix's last byte", func(p *LocalKVPrompt) { p.Prefix = p.Prefix[:len(p.Prefix)-1] + "!" }, LocalKVProvider, LocalKVModel},
		{"one system option", func(p *LocalKVPrompt) { p.SystemOptions = json.RawMessage(`{"seed":8,"temperature":0}`) }, LocalKVProvider, LocalKVModel},
		{"one tool option", func(p *LocalKVPrompt) {
			p.ToolOptions = json.RawMessage(`[{"name":"grep","schema":{"type":"object"}}]`)
		}, LocalKVProvider, LocalKVModel},
		{"tool options to null", func(p *LocalKVPrompt) { p.ToolOptions = json.RawMessage(`null`) }, LocalKVProvider, LocalKVModel},
		{"tool options to absent", func(p *LocalKVPrompt) { p.ToolOptions = nil }, LocalKVProvider, LocalKVModel},
	}
	variants = append(variants, kvVariant{"the model", func(*LocalKVPrompt) {}, LocalKVProvider, LocalKVModel + "-other"})
	if k.isLocal(ctx, otherLocalProvider) {
		variants = append(variants, kvVariant{"the provider to another local one", func(*LocalKVPrompt) {}, otherLocalProvider, LocalKVModel})
	}
	for _, v := range variants {
		p := kvPrompt()
		v.change(&p)
		replays := len(k.port.Replays())
		r := k.completeAs(ctx, p, v.provider, v.model)
		k.wantMode(r, contract.LocalKVFullReplay, LocalKVReplayOutput, rule, "after changing "+v.name)
		tries := k.port.Tries()
		if last := tries[len(tries)-1].Key; last.Fingerprint == baseKey.Fingerprint || len(k.port.Replays()) != replays+1 {
			return broken(rule, "a new fingerprint and one full replay after changing "+v.name,
				fmt.Sprintf("fingerprint unchanged %t, %d full replay(s)", last.Fingerprint == baseKey.Fingerprint, len(k.port.Replays())-replays))
		}
	}
	k.wantNoTransport("completions served by the local KV port do not also go through the ordinary transport")
	return nil
}

// kvVariant changes one thing in the base prompt or the request.
type kvVariant struct {
	name            string
	change          func(p *LocalKVPrompt)
	provider, model string
}

// otherLocalProvider is a provider the default privacy configuration also
// treats as local; the provider variant runs when the adapter agrees.
const otherLocalProvider = "llama-cpp"

func checkKVNonHit(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	const rule = "every answer but a hit — a rejection, a miss, a port error — is followed by a full replay of the complete payload"
	p := kvPrompt()
	k.wantMode(k.complete(ctx, p), contract.LocalKVFullReplay, LocalKVReplayOutput,
		"the first completion of a prefix misses and is fully replayed", "on the first call (the runtime holds no state yet)")
	for _, c := range []struct {
		when string
		arm  func()
	}{
		{"after the runtime rejects its state as stale", k.port.RejectNext},
		{"after the runtime lost its state (a miss)", k.port.Forget},
		{"after the port's reuse attempt failed", k.port.FailReuseNext},
	} {
		c.arm()
		replays := len(k.port.Replays())
		k.wantMode(k.complete(ctx, p), contract.LocalKVFullReplay, LocalKVReplayOutput, rule, c.when)
		if n := len(k.port.Replays()) - replays; n != 1 {
			return broken(rule, "one full replay "+c.when, fmt.Sprintf("%d full replay(s)", n))
		}
	}
	k.wantNoTransport("completions served by the local KV port do not also go through the ordinary transport")
	return nil
}

func checkKVReplayFailure(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	const rule = "when the local KV path fails, the completion is retried with the full sanitised payload through the ordinary transport, and local-kv-replay-failed is recorded"
	p := kvPrompt()
	k.port.FailReplayNext()
	r := k.complete(ctx, p)
	if k.port.Calls() == 0 {
		return broken(ruleUsesPort, "port calls for an eligible local completion", "the port was never called; "+describeKVResult(r))
	}
	if r.Status != contract.StatusCompleted || r.LocalKV != nil || !sameJSONText(r.Output, TransportOutput) {
		return broken(rule, "completed with the transport's output, no local KV metadata", describeKVResult(r))
	}
	reqs := k.s.Transport().Requests()
	want := k.sanitised(ctx, p)
	if len(reqs) != 1 || !sameJSON(reqs[0].Payload, want) || reqs[0].Destination != contract.DestinationLocal ||
		reqs[0].Provider != LocalKVProvider || reqs[0].Model != LocalKVModel {
		same := len(reqs) == 1 && sameJSON(reqs[0].Payload, want)
		return broken(rule, "one transport request with the local provider, model and full sanitised payload",
			fmt.Sprintf("%d transport request(s), payload equal %t", len(reqs), same))
	}
	ds := k.a.Diagnostics()
	if !slices.ContainsFunc(ds, func(d contract.Diagnostic) bool {
		return d.Code == contract.DiagnosticLocalKVReplayFailed && d.Severity == contract.SeverityWarning && d.Capability == contract.CapabilityLocalKVReuse
	}) {
		return broken(rule, "a diagnostic local-kv-replay-failed (warning, capability local-kv-reuse)",
			fmt.Sprintf("diagnostic codes %q", diagnosticCodes(ds)))
	}
	return nil
}

func checkKVRemote(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	fx := k.s.Fixture()
	r := k.a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: LocalKVPayload(kvPrompt())})
	if n := k.port.Calls(); n != 0 {
		return broken("only a completion whose sanitised destination is local may use local KV state",
			"no port call for the remote provider "+fx.Model.Provider, fmt.Sprintf("%d port call(s)", n))
	}
	if r.Status != contract.StatusCompleted || r.LocalKV != nil || k.s.Transport().Len() != 1 {
		return broken("a remote completion goes through the ordinary transport", "completed through one transport request, no local KV metadata",
			fmt.Sprintf("%s; %d transport request(s)", describeKVResult(r), k.s.Transport().Len()))
	}
	return nil
}

func checkKVMetadataOnly(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	p := kvPrompt()
	var reports []string
	add := func(what string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(abort{broken("what an adapter reports is plain JSON", "a JSON encoding of "+what, "error: "+Redact(err.Error()))})
		}
		reports = append(reports, what+"\x00"+string(b))
	}
	complete := func(what string) {
		r := k.complete(ctx, p)
		r.Output = nil // the runtime's output is not the adapter's report
		add(what, r)
	}
	// Every path: replay, hit, rejection, port error, failed replay.
	complete("the first completion")
	complete("a hit")
	k.port.RejectNext()
	complete("a completion after a rejection")
	k.port.FailReuseNext()
	complete("a completion after a port error")
	k.port.Forget()
	k.port.FailReplayNext()
	complete("a completion after a failed full replay")
	for i, d := range k.a.Diagnostics() {
		add(fmt.Sprintf("diagnostic #%d (code %q)", i, Redact(d.Code)), d)
	}
	{
		if d, ok := k.s.adapter.localKVDiagnostics(); ok {
			add("the aggregate local KV diagnostics", d)
		}
	}
	secrets := []string{kvPrefix, "DS4_CONFORMANCE_KV_PREFIX", LocalKVMessageText(), LocalKVHandleProbe}
	secrets = append(secrets, string(LocalKVPayload(p)))
	for _, r := range append(k.port.Tries(), k.port.Replays()...) {
		key := r.Key
		secrets = append(secrets, key.Fingerprint, key.PrefixHash, key.ProviderModelHash, key.OptionsHash, key.PrivacyHash, key.RuntimeHash, string(r.Payload))
	}
	for _, rep := range reports {
		what, text, _ := strings.Cut(rep, "\x00")
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				return broken("diagnostics, completion results and local KV counters are metadata only: never a prompt prefix, a payload, an eligibility key or a cache handle (not even one a port error names)",
					"none of them in any report", what+" holds one (not shown)")
			}
		}
	}
	return nil
}

func checkKVIneligible(ctx context.Context, e *env) error {
	k, err := startLocalKV(ctx, e)
	if err != nil {
		return err
	}
	const rule = "a local completion the eligibility rules exclude, or one with no reusable prefix, falls through to the ordinary transport quietly: no port call (and, for the reference adapter, no diagnostic)"
	diagnostics := len(k.a.Diagnostics())
	empty := kvPrompt()
	empty.Prefix = ""
	inverted := kvPrompt()
	inverted.PrefixTokens = inverted.ContextTokens + 1
	for _, c := range []struct {
		what    string
		payload any
	}{
		{"an empty prefix", LocalKVPayload(empty)},
		{"more prefix than context tokens", LocalKVPayload(inverted)},
		{"a payload without a reusable prefix", PlainPayload()},
	} {
		before := k.s.Transport().Len()
		r := k.a.Complete(ctx, contract.CompletionRequest{Provider: LocalKVProvider, Model: LocalKVModel, Payload: c.payload})
		if r.Status != contract.StatusCompleted || r.LocalKV != nil || !sameJSONText(r.Output, TransportOutput) || k.s.Transport().Len() != before+1 {
			return broken(rule, "completed through one ordinary transport request, no local KV metadata, for "+c.what,
				fmt.Sprintf("%s; %d transport request(s)", describeKVResult(r), k.s.Transport().Len()-before))
		}
	}
	if n := k.port.Calls(); n != 0 {
		return broken(rule, "no port call", fmt.Sprintf("%d port call(s)", n))
	}
	// §11: the reference adapter's ineligible answer falls through
	// "without a diagnostic".
	// latitude: that sentence is in the reference adapter's paragraph;
	// other adapters may record what they like here.
	if ds := k.a.Diagnostics(); len(ds) != diagnostics && k.a.Identity().AdapterName == referenceAdapterName {
		return broken(rule, fmt.Sprintf("%d diagnostics, as before", diagnostics), fmt.Sprintf("diagnostics %s", qs(diagnosticCodes(ds))))
	}
	return nil
}

func localKVChecks() []Check {
	kv := func(id, summary, rule string, run func(context.Context, *env) error) Check {
		return Check{ID: id, Kind: KindFeature, Capability: contract.CapabilityLocalKVReuse, Summary: summary, Rule: rule, run: run}
	}
	return []Check{
		kv(CheckLocalKVHit, "reuses local KV state for an identical prefix on the second call",
			"a completion whose prefix, options, model, privacy policy and runtime match state the runtime holds reuses it", checkKVHit),
		kv(CheckLocalKVChangedPrefix, "fully replays when one prefix byte, one option, the model or the provider changes",
			"a change to one prefix byte, one option, the model or the provider changes the eligibility key, so the completion is fully replayed", checkKVChanged),
		kv(CheckLocalKVIneligible, "sends ineligible local completions through the ordinary transport, quietly",
			"an ineligible local completion falls through to the ordinary transport without a port call (and, for the reference adapter, without a diagnostic)", checkKVIneligible),
		kv(CheckLocalKVNonHit, "fully replays after a stale rejection, a cache loss and a port error",
			"every answer but a hit is followed by a full replay of the complete payload", checkKVNonHit),
		kv(CheckLocalKVReplayFailure, "retries a failed full replay through the ordinary transport and records local-kv-replay-failed",
			"a failed local KV path is retried with the full sanitised payload through the ordinary transport and records local-kv-replay-failed", checkKVReplayFailure),
		kv(CheckLocalKVRemote, "never offers a remote completion to the local KV port",
			"only a completion whose sanitised destination is local may use local KV state", checkKVRemote),
		kv(CheckLocalKVMetadataOnly, "keeps prefixes, payloads, keys and handles out of diagnostics, results and counters",
			"local KV diagnostics, results and counters are metadata only", checkKVMetadataOnly),
	}
}
