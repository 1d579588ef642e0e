package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// Own labels of the local KV checks (which also carry
// FeatureLabelPrefix+"local-kv-reuse").
const (
	LabelLocalKVHit           = "local-kv-hit"
	LabelLocalKVChangedPrefix = "local-kv-changed-prefix"
	LabelLocalKVNonHit        = "local-kv-non-hit"
	LabelLocalKVReplayFailure = "local-kv-replay-failure"
	LabelLocalKVRemote        = "local-kv-remote"
	LabelLocalKVMetadataOnly  = "local-kv-metadata-only"
)

// kvPrefix is the reusable prefix of the local KV checks. Like the payload
// around it, it must never appear in what an adapter reports.
const kvPrefix = "DS4_CONFORMANCE_KV_PREFIX: you review the reference project; tools: read, grep."

// kvPrompt is the prompt every local KV check starts from.
func kvPrompt() conformance.LocalKVPrompt {
	return conformance.LocalKVPrompt{
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

func describeLocalKV(cfg *config) {
	check := func(text, label string, body func(ctx context.Context, k *kvSession)) {
		ginkgo.It(text, ginkgo.Label(LabelExtended, label, FeatureLabelPrefix+contract.CapabilityLocalKVReuse), func(ctx ginkgo.SpecContext) {
			body(ctx, startLocalKV(ctx, cfg))
		})
	}
	check("reuses local KV state for an identical prefix on the second call", LabelLocalKVHit, checkKVHit)
	check("fully replays when one prefix byte or one option changes", LabelLocalKVChangedPrefix, checkKVChanged)
	check("fully replays after a stale rejection, a cache loss and a port error", LabelLocalKVNonHit, checkKVNonHit)
	check("retries a failed full replay through the ordinary transport and records local-kv-replay-failed", LabelLocalKVReplayFailure, checkKVReplayFailure)
	check("never offers a remote completion to the local KV port", LabelLocalKVRemote, checkKVRemote)
	check("keeps prefixes, payloads, keys and handles out of diagnostics, results and counters", LabelLocalKVMetadataOnly, checkKVMetadataOnly)
}

// kvSession is an instance created with a recording local KV port.
type kvSession struct {
	cfg  *config
	s    *conformance.Session
	a    contract.Adapter
	port *conformance.RecordingKVPort
}

// startLocalKV creates an instance whose factory is handed a recording
// port, skips the spec when the adapter then does not declare local KV
// reuse, and checks the local KV provider is local for it.
func startLocalKV(ctx context.Context, cfg *config) *kvSession {
	ginkgo.GinkgoHelper()
	port := conformance.NewRecordingKVPort()
	s, err := conformance.StartLocalKV(ctx, cfg.factory, port)
	if err != nil {
		fail(cfg, "the factory must create an instance from the conformance fixture and a local KV port", "an instance", "error: "+err.Error())
	}
	ginkgo.DeferCleanup(func(ctx context.Context) {
		if err := s.Close(ctx); err != nil {
			fail(cfg, "the instance must shut down and clean up without error", "no error", "error: "+err.Error())
		}
	})
	a := s.Adapter()
	if !capabilityDeclared(a, contract.CapabilityLocalKVReuse) {
		ginkgo.Skip("skipped, not passed: the adapter does not declare the local-kv-reuse capability as supported when its factory is given a local KV port")
	}
	res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: conformance.LocalKVProvider, Payload: conformance.LocalKVPayload(kvPrompt())})
	if err != nil || res.Destination != contract.DestinationLocal {
		fail(cfg, "the local KV checks complete with provider "+conformance.LocalKVProvider+", which the adapter's privacy configuration must treat as local",
			"destination local", fmt.Sprintf("destination %q (enforcement failed: %t)", conformance.Redact(string(res.Destination)), err != nil))
	}
	return &kvSession{cfg: cfg, s: s, a: a, port: port}
}

// complete sends prompt's payload to the local KV provider.
func (k *kvSession) complete(ctx context.Context, p conformance.LocalKVPrompt) contract.CompletionResult {
	return k.a.Complete(ctx, contract.CompletionRequest{Provider: conformance.LocalKVProvider, Model: conformance.LocalKVModel, Payload: conformance.LocalKVPayload(p)})
}

// sanitised returns what privacy enforcement makes of prompt's payload.
func (k *kvSession) sanitised(ctx context.Context, p conformance.LocalKVPrompt) json.RawMessage {
	ginkgo.GinkgoHelper()
	res, err := k.a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: conformance.LocalKVProvider, Payload: conformance.LocalKVPayload(p)})
	if err != nil {
		fail(k.cfg, "EnforcePrivacy sanitises a local payload", "a sanitised payload", "error: "+conformance.Redact(err.Error()))
	}
	return res.Payload
}

// describeKVResult shows a completion result as metadata: status, code,
// local KV mode and counts, and which fixed output it carries.
func describeKVResult(r contract.CompletionResult) string {
	if r.Status != contract.StatusCompleted {
		return conformance.Redact(fmt.Sprintf("status %q, code %q", r.Status, r.Code))
	}
	out := "another output"
	switch string(r.Output) {
	case conformance.LocalKVHitOutput:
		out = "the port's hit output"
	case conformance.LocalKVReplayOutput:
		out = "the port's replay output"
	case conformance.TransportOutput:
		out = "the transport's output"
	}
	if r.LocalKV == nil {
		return "completed with " + out + ", no local KV metadata"
	}
	m := r.LocalKV
	return conformance.Redact(fmt.Sprintf("completed with %s, local KV mode %q (prefix %d, context %d, saved %d, replayed %d tokens)",
		out, m.Mode, m.PrefixTokens, m.ContextTokens, m.SavedPrefillTokens, m.ReplayPrefillTokens))
}

// wantMode fails unless r completed through the port in mode with output.
func (k *kvSession) wantMode(r contract.CompletionResult, mode contract.LocalKVMode, output, rule, when string) {
	ginkgo.GinkgoHelper()
	if r.Status == contract.StatusCompleted && r.LocalKV != nil && r.LocalKV.Mode == mode && string(r.Output) == output {
		return
	}
	if k.port.Calls() == 0 {
		fail(k.cfg, ruleUsesPort, "port calls for an eligible local completion "+when, "the port was never called; "+describeKVResult(r))
	}
	want := "the port's replay output"
	if mode == contract.LocalKVHit {
		want = "the port's hit output"
	}
	fail(k.cfg, rule, fmt.Sprintf("completed with %s, local KV mode %q, %s", want, mode, when), describeKVResult(r))
}

// wantNoTransport fails if the ordinary transport was called.
func (k *kvSession) wantNoTransport(rule string) {
	ginkgo.GinkgoHelper()
	if n := k.s.Transport().Len(); n != 0 {
		fail(k.cfg, rule, "no request through the ordinary transport", fmt.Sprintf("%d request(s)", n))
	}
}

func checkKVHit(ctx context.Context, k *kvSession) {
	ginkgo.GinkgoHelper()
	const rule = "a completion whose prefix, options, model, privacy policy and runtime match state the runtime holds reuses it"
	p := kvPrompt()
	k.wantMode(k.complete(ctx, p), contract.LocalKVFullReplay, conformance.LocalKVReplayOutput,
		"the first completion of a prefix misses and is fully replayed", "on the first call (the runtime holds no state yet)")
	second := k.complete(ctx, p)
	k.wantMode(second, contract.LocalKVHit, conformance.LocalKVHitOutput, rule, "on the second identical call")
	if m := second.LocalKV; m.PrefixTokens != p.PrefixTokens || m.ContextTokens != p.ContextTokens || m.SavedPrefillTokens != p.PrefixTokens || m.ReplayPrefillTokens != 0 {
		fail(k.cfg, "a hit reports the request's token counts and the tokens the runtime saved",
			fmt.Sprintf("prefix %d, context %d, saved %d, replayed 0 tokens", p.PrefixTokens, p.ContextTokens, p.PrefixTokens), describeKVResult(second))
	}
	if second.Privacy.Destination != contract.DestinationLocal || second.Privacy.Provider != conformance.LocalKVProvider {
		fail(k.cfg, "a local KV completion reports the privacy decision of its payload", "provider "+conformance.LocalKVProvider+", destination local",
			conformance.Redact(fmt.Sprintf("provider %q, destination %q", second.Privacy.Provider, second.Privacy.Destination)))
	}
	k.wantNoTransport("a completion served by the local KV port does not also go through the ordinary transport")
	tries := k.port.Tries()
	if len(tries) != 2 || tries[0].Key != tries[1].Key || tries[0].Key.Version != contract.LocalKVEligibilityVersion {
		fail(k.cfg, "identical requests have one eligibility key ("+contract.LocalKVEligibilityVersion+")",
			"two reuse attempts under one key", fmt.Sprintf("%d reuse attempt(s), keys equal %t", len(tries), len(tries) == 2 && tries[0].Key == tries[1].Key))
	}
	want := k.sanitised(ctx, p)
	for i, r := range append(tries, k.port.Replays()...) {
		if string(r.Payload) != string(want) || r.Provider != conformance.LocalKVProvider || r.Model != conformance.LocalKVModel ||
			r.PrefixTokenCount != p.PrefixTokens || r.ContextTokenCount != p.ContextTokens {
			fail(k.cfg, "the port receives the request's provider, model, token counts and complete sanitised payload",
				"the sanitised payload of the completion", fmt.Sprintf("port request #%d differs (payload equal %t, provider and model equal %t, token counts %d/%d)",
					i, string(r.Payload) == string(want), r.Provider == conformance.LocalKVProvider && r.Model == conformance.LocalKVModel, r.PrefixTokenCount, r.ContextTokenCount))
		}
	}
}

func checkKVChanged(ctx context.Context, k *kvSession) {
	ginkgo.GinkgoHelper()
	const rule = "a change to one prefix byte or one option changes the eligibility key, so the runtime's state is not reused and the completion is fully replayed"
	base := kvPrompt()
	k.wantMode(k.complete(ctx, base), contract.LocalKVFullReplay, conformance.LocalKVReplayOutput,
		"the first completion of a prefix misses and is fully replayed", "on the first call (the runtime holds no state yet)")
	baseKey := k.port.Tries()[0].Key
	// The last two variants differ from each other only in null versus
	// absent, which hash differently.
	variants := []kvVariant{
		{"the prefix's last byte", func(p *conformance.LocalKVPrompt) { p.Prefix = p.Prefix[:len(p.Prefix)-1] + "!" }},
		{"one system option", func(p *conformance.LocalKVPrompt) { p.SystemOptions = json.RawMessage(`{"seed":8,"temperature":0}`) }},
		{"one tool option", func(p *conformance.LocalKVPrompt) {
			p.ToolOptions = json.RawMessage(`[{"name":"grep","schema":{"type":"object"}}]`)
		}},
		{"tool options to null", func(p *conformance.LocalKVPrompt) { p.ToolOptions = json.RawMessage(`null`) }},
		{"tool options to absent", func(p *conformance.LocalKVPrompt) { p.ToolOptions = nil }},
	}
	for _, v := range variants {
		p := kvPrompt()
		v.change(&p)
		replays := len(k.port.Replays())
		r := k.complete(ctx, p)
		k.wantMode(r, contract.LocalKVFullReplay, conformance.LocalKVReplayOutput, rule, "after changing "+v.name)
		tries := k.port.Tries()
		if last := tries[len(tries)-1].Key; last.Fingerprint == baseKey.Fingerprint || len(k.port.Replays()) != replays+1 {
			fail(k.cfg, rule, "a new fingerprint and one full replay after changing "+v.name,
				fmt.Sprintf("fingerprint unchanged %t, %d full replay(s)", last.Fingerprint == baseKey.Fingerprint, len(k.port.Replays())-replays))
		}
	}
	k.wantNoTransport("completions served by the local KV port do not also go through the ordinary transport")
}

// kvVariant changes one thing in the base prompt.
type kvVariant struct {
	name   string
	change func(p *conformance.LocalKVPrompt)
}

func checkKVNonHit(ctx context.Context, k *kvSession) {
	ginkgo.GinkgoHelper()
	const rule = "every answer but a hit — a rejection, a miss, a port error — is followed by a full replay of the complete payload"
	p := kvPrompt()
	k.wantMode(k.complete(ctx, p), contract.LocalKVFullReplay, conformance.LocalKVReplayOutput,
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
		k.wantMode(k.complete(ctx, p), contract.LocalKVFullReplay, conformance.LocalKVReplayOutput, rule, c.when)
		if n := len(k.port.Replays()) - replays; n != 1 {
			fail(k.cfg, rule, "one full replay "+c.when, fmt.Sprintf("%d full replay(s)", n))
		}
	}
	k.wantNoTransport("completions served by the local KV port do not also go through the ordinary transport")
}

func checkKVReplayFailure(ctx context.Context, k *kvSession) {
	ginkgo.GinkgoHelper()
	const rule = "when the local KV path fails, the completion is retried with the full sanitised payload through the ordinary transport, and local-kv-replay-failed is recorded"
	p := kvPrompt()
	k.port.FailReplayNext()
	r := k.complete(ctx, p)
	if k.port.Calls() == 0 {
		fail(k.cfg, ruleUsesPort, "port calls for an eligible local completion", "the port was never called; "+describeKVResult(r))
	}
	if r.Status != contract.StatusCompleted || r.LocalKV != nil || string(r.Output) != conformance.TransportOutput {
		fail(k.cfg, rule, "completed with the transport's output, no local KV metadata", describeKVResult(r))
	}
	reqs := k.s.Transport().Requests()
	want := k.sanitised(ctx, p)
	if len(reqs) != 1 || string(reqs[0].Payload) != string(want) || reqs[0].Destination != contract.DestinationLocal ||
		reqs[0].Provider != conformance.LocalKVProvider || reqs[0].Model != conformance.LocalKVModel {
		same := len(reqs) == 1 && string(reqs[0].Payload) == string(want)
		fail(k.cfg, rule, "one transport request with the local provider, model and full sanitised payload",
			fmt.Sprintf("%d transport request(s), payload equal %t", len(reqs), same))
	}
	ds := k.a.Diagnostics()
	if !slices.ContainsFunc(ds, func(d contract.Diagnostic) bool {
		return d.Code == "local-kv-replay-failed" && d.Severity == contract.SeverityWarning && d.Capability == contract.CapabilityLocalKVReuse
	}) {
		fail(k.cfg, rule, "a diagnostic local-kv-replay-failed (warning, capability local-kv-reuse)",
			fmt.Sprintf("diagnostic codes %q", diagnosticCodes(ds)))
	}
}

func checkKVRemote(ctx context.Context, k *kvSession) {
	ginkgo.GinkgoHelper()
	fx := k.s.Fixture()
	r := k.a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: conformance.LocalKVPayload(kvPrompt())})
	if n := k.port.Calls(); n != 0 {
		fail(k.cfg, "only a completion whose sanitised destination is local may use local KV state",
			"no port call for the remote provider "+fx.Model.Provider, fmt.Sprintf("%d port call(s)", n))
	}
	if r.Status != contract.StatusCompleted || r.LocalKV != nil || k.s.Transport().Len() != 1 {
		fail(k.cfg, "a remote completion goes through the ordinary transport", "completed through one transport request, no local KV metadata",
			fmt.Sprintf("%s; %d transport request(s)", describeKVResult(r), k.s.Transport().Len()))
	}
}

func checkKVMetadataOnly(ctx context.Context, k *kvSession) {
	ginkgo.GinkgoHelper()
	p := kvPrompt()
	var reports []string
	add := func(what string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			fail(k.cfg, "what an adapter reports is plain JSON", "a JSON encoding of "+what, "error: "+conformance.Redact(err.Error()))
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
		add(fmt.Sprintf("diagnostic #%d (code %q)", i, conformance.Redact(d.Code)), d)
	}
	if dp, ok := k.a.(localkv.DiagnosticsProvider); ok {
		if d, ok := dp.LocalKVDiagnostics(); ok {
			add("the aggregate local KV diagnostics", d)
		}
	}
	secrets := []string{kvPrefix, "DS4_CONFORMANCE_KV_PREFIX", conformance.LocalKVMessageText(), conformance.LocalKVHandleProbe}
	secrets = append(secrets, string(conformance.LocalKVPayload(p)))
	for _, r := range append(k.port.Tries(), k.port.Replays()...) {
		key := r.Key
		secrets = append(secrets, key.Fingerprint, key.PrefixHash, key.ProviderModelHash, key.OptionsHash, key.PrivacyHash, key.RuntimeHash, string(r.Payload))
	}
	for _, rep := range reports {
		what, text, _ := strings.Cut(rep, "\x00")
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				fail(k.cfg, "diagnostics, completion results and local KV counters are metadata only: never a prompt prefix, a payload, an eligibility key or a cache handle (not even one a port error names)",
					"none of them in any report", what+" holds one (not shown)")
			}
		}
	}
}
