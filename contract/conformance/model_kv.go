package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// This file is the local KV part of the model (SPEC §11): what an instance
// whose factory was given a local KV port must do with a completion, what
// its port receives and what its counters say. Like the rest of the model,
// it is written from SPEC; "latitude:" marks what SPEC leaves open.
//
// §11's reference adapter integration says when the local KV path is taken
// (a configured, enabled port; a local sanitised destination; a prompt
// prepare finds), what a KV completion returns and that a failed KV path
// records local-kv-replay-failed and retries through the ordinary
// transport. The fixed local KV checks hold every adapter declaring
// local-kv-reuse to these rules (a factory given a port enables it and
// prepares with ReadLocalKVPrompt, see Setup), and so does the model; what
// only the reference adapter does is marked latitude.

// modelKVOdds: one instance in modelKVOdds is given a local KV port (when
// its adapter then declares local-kv-reuse, the model holds it to §11).
const modelKVOdds = 3

// modelKVPrefixMarker starts every prompt prefix the model draws: no
// diagnostic, fallback reason or error may ever hold it.
const modelKVPrefixMarker = "DS4_MODEL_KV_PREFIX"

// kvMaxSafe is 2^53−1, the largest token count and the value counters
// saturate at (§11).
const kvMaxSafe = 1<<53 - 1

// kvModel is what the model knows of an instance's local KV: the recording
// port its factory was given, the port's state as the model follows it from
// the port's documented behaviour, and the counters §11 makes the
// controller keep.
type kvModel struct {
	port *RecordingKVPort
	// warm, reject, failReuse and failReplay mirror the port: the
	// fingerprints it holds state for, and what it is armed to do next.
	warm                          map[string]bool
	reject, failReuse, failReplay bool
	// tries and replays are how many requests of each kind the port had
	// received when the model last looked.
	tries, replays int
	// want are the counters §11 gives; slack is how many completions an
	// adapter other than the reference may also have counted as bypassed.
	want  localkv.Diagnostics
	slack int64
	// pairOf maps each providerModelHash seen to the provider and model
	// it was sent for; hashOf the reverse (held stable for the reference
	// adapter only). privacyHash and runtimeHash are the first seen.
	pairOf, hashOf           map[string]string
	privacyHash, runtimeHash string
	// keys are every key digest the port received: no report may hold one.
	keys map[string]bool
	// asked are earlier requests, drawn again so that reuse happens.
	asked []kvAsk
}

// kvAsk is one drawn local KV request.
type kvAsk struct {
	prompt          LocalKVPrompt
	provider, model string
}

func newKVModel(port *RecordingKVPort) *kvModel {
	return &kvModel{port: port, warm: map[string]bool{}, pairOf: map[string]string{}, hashOf: map[string]string{}, keys: map[string]bool{},
		want: localkv.Diagnostics{Version: contract.LocalKVDiagnosticsVersion}}
}

// kvPrefixes are the texts drawn prefixes are made of.
var kvPrefixes = []string{"you review the reference project; tools: read, grep.", "system: answer briefly.",
	"résumé ✓ 𝄞 — ünïcödé prefix", "<&> \u2028 tags and separators", "a"}

// kvOptions are the drawn options, as raw JSON (nil: absent). Some differ
// only in member order or number spelling, which stable JSON writes alike.
var kvOptions = []json.RawMessage{nil, json.RawMessage(`null`), json.RawMessage(`{"seed":7,"temperature":0}`),
	json.RawMessage(`{"temperature":0,"seed":7}`), json.RawMessage(`{"seed":8,"temperature":0}`),
	json.RawMessage(`[{"name":"read","schema":{"type":"object"}}]`), json.RawMessage(`[]`), json.RawMessage(`"<&>\u2028"`),
	json.RawMessage(`{"n":-0,"big":1e21,"f":0.10}`), json.RawMessage(`{"n":0,"big":1000000000000000000000,"f":0.1}`),
	json.RawMessage(`true`), json.RawMessage(`{"é":"ü","a":[1,2,3]}`)}

// drawPrompt draws a fresh prompt: mostly eligible, now and then with an
// empty prefix or token counts §11 excludes.
func drawPrompt(rnd *rand.Rand) LocalKVPrompt {
	p := LocalKVPrompt{
		Prefix:        fmt.Sprintf("%s %d: %s", modelKVPrefixMarker, rnd.IntN(6), kvPrefixes[rnd.IntN(len(kvPrefixes))]),
		SystemOptions: kvOptions[rnd.IntN(len(kvOptions))],
		ToolOptions:   kvOptions[rnd.IntN(len(kvOptions))],
	}
	p.ContextTokens = rnd.Int64N(8000)
	p.PrefixTokens = rnd.Int64N(p.ContextTokens + 1)
	switch rnd.IntN(48) {
	case 0:
		p.Prefix = ""
	case 1:
		p.PrefixTokens = p.ContextTokens + 1 + rnd.Int64N(10)
	case 2:
		p.PrefixTokens = -1
	case 3:
		p.ContextTokens = kvMaxSafe + 1
	case 4, 5:
		// The largest counts §11 allows: sums of them saturate.
		p.PrefixTokens, p.ContextTokens = kvMaxSafe-rnd.Int64N(2), kvMaxSafe
	}
	return p
}

// draw draws the provider, model and prompt of a local KV completion:
// often an earlier request again (a hit when the port holds its state),
// sometimes with one thing changed (a miss, as the key changed), to local
// providers mostly and to remote ones too.
func (k *kvModel) draw(rnd *rand.Rand, seed int, fx Fixture, cfg *privacy.Config) (kvAsk, string) {
	if len(k.asked) > 0 && rnd.IntN(3) != 0 {
		a := k.asked[rnd.IntN(len(k.asked))]
		what := "again"
		switch rnd.IntN(12) {
		case 0:
			a.prompt.Prefix += "!"
			what = "prefix changed"
		case 1:
			a.prompt.SystemOptions = kvOptions[rnd.IntN(len(kvOptions))]
			what = "system options drawn again"
		case 2:
			a.prompt.ToolOptions = kvOptions[rnd.IntN(2)] // null or absent
			what = "tool options null or absent"
		case 3:
			a.model += "-other"
			what = "model changed"
		case 4:
			a.provider = kvProvider(rnd, seed, fx, cfg)
			what = "provider drawn again"
		case 5:
			// Token counts are not part of the key: a hit still.
			a.prompt.PrefixTokens = rnd.Int64N(a.prompt.PrefixTokens/2 + 1)
			what = "fewer prefix tokens"
		}
		return a, what
	}
	a := kvAsk{prompt: drawPrompt(rnd), provider: kvProvider(rnd, seed, fx, cfg), model: LocalKVModel}
	switch rnd.IntN(24) {
	case 0, 1, 2:
		a.model = LocalKVModel + "-other"
	case 3:
		a.model = fx.Model.ID
	case 4:
		a.model = " " + LocalKVModel // not trimmed: invalid-model
	case 5:
		a.model = "local\x01model" // a control character: invalid-model
	case 6:
		a.model = strings.Repeat("m", localkv.MaxIdentifierLength+1)
	case 7, 8:
		// JavaScript's trim keeps U+0085 (Go's strings.TrimSpace drops
		// it): an eligible model, which reaches the port as given.
		a.model = LocalKVModel + "\u0085"
	}
	if len(k.asked) < 8 {
		k.asked = append(k.asked, a)
	} else {
		k.asked[rnd.IntN(len(k.asked))] = a
	}
	return a, "new"
}

// kvProvider draws the provider of a local KV completion: mostly the local
// provider of the local KV checks, sometimes another local one, an
// untrimmed or recased one, the fixture's or any the model draws.
func kvProvider(rnd *rand.Rand, seed int, fx Fixture, cfg *privacy.Config) string {
	switch rnd.IntN(16) {
	case 0:
		return otherLocalProvider
	case 1:
		return " " + LocalKVProvider // local, but not a valid identifier
	case 2:
		return strings.ToUpper(LocalKVProvider)
	case 3:
		return fx.Model.Provider
	case 4:
		return drawProvider(rnd, seed, fx, cfg)
	}
	return LocalKVProvider
}

// arm arms the port at random before a local KV completion, and follows it
// in the mirror.
func (k *kvModel) arm(rnd *rand.Rand) string {
	switch rnd.IntN(10) {
	case 0:
		k.port.RejectNext()
		k.reject = true
		return ", port armed to reject"
	case 1:
		k.port.FailReuseNext()
		k.failReuse = true
		return ", port armed to fail reuse"
	case 2:
		k.port.FailReplayNext()
		k.failReplay = true
		return ", port armed to fail replay"
	case 3:
		k.port.Forget()
		clear(k.warm)
		return ", port forgot its state"
	}
	return ""
}

// eligibility is §11's eligibility of a request the adapter prepared from
// prompt. The adapter's own configuration (runtime identity and revision,
// model revision, capability and privacy policy versions) is not visible
// to the model: valid stand-ins take its place, which leaves the reason a
// request is excluded for, and the prefix and options hashes, as the
// adapter's (§11 checks the configuration before the prompt, and the
// fixed local KV checks require an enabled, valid configuration).
func kvEligibility(provider, model string, p LocalKVPrompt) localkv.Eligibility {
	system, tool := p.Options()
	return localkv.DeriveEligibility(localkv.EligibilityInput{
		Enabled: true, CapabilityEnabled: true, CapabilityVersion: contract.LocalKVRuntimePortVersion,
		Destination: string(contract.DestinationLocal), RuntimeID: "model-runtime", RuntimeRevision: "model-runtime-revision",
		ModelRevision: "model-revision", PrivacyPolicyVersion: "model-privacy-policy",
		Provider: provider, Model: model, PromptPrefix: []byte(p.Prefix), SystemOptions: system, ToolOptions: tool,
		PrefixTokenCount: p.PrefixTokens, ContextTokenCount: p.ContextTokens,
	})
}

// newRequests returns the port requests received since the last call.
func (k *kvModel) newRequests() (tries, replays []localkv.ReuseRequest) {
	tries, replays = k.port.since(k.tries, k.replays)
	k.tries += len(tries)
	k.replays += len(replays)
	return tries, replays
}

// quiet checks the port received nothing during an operation that SPEC
// does not let reach it.
func (k *kvModel) quiet(rule, op string) error {
	tries, replays := k.newRequests()
	if len(tries)+len(replays) > 0 {
		return broken(rule, "no local KV port call", fmt.Sprintf("%s: %d reuse attempt(s), %d full replay(s)", op, len(tries), len(replays)))
	}
	return nil
}

// isHex64 reports whether s is a lowercase hex SHA-256 digest.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkKey checks the key an eligible request reached the port with
// against §11's key: the parts the model can compute exactly (version,
// prefix and options hashes, the fingerprint over the parts), and for the
// parts built from the adapter's configuration, what §11 still pins.
func (k *kvModel) checkKey(reference bool, got, want localkv.Key, provider, model, desc string) error {
	const rule = "the port receives §11's eligibility key: version, prefixHash = H(prefix), optionsHash = H(S({systemOptions, toolOptions})), providerModelHash naming provider and model, and the fingerprint over them"
	parts := []string{got.Fingerprint, got.PrefixHash, got.ProviderModelHash, got.OptionsHash, got.PrivacyHash, got.RuntimeHash}
	for _, s := range parts {
		if !isHex64(s) {
			return broken(rule, "lowercase hex SHA-256 digests", desc+": a key member is not one")
		}
		k.keys[s] = true
	}
	switch {
	case got.Version != contract.LocalKVEligibilityVersion:
		return broken(rule, "version "+contract.LocalKVEligibilityVersion, desc+": version "+q(got.Version))
	case got.PrefixHash != want.PrefixHash:
		return broken(rule, "the prefix hash of the request's prefix", desc+": another prefix hash")
	case got.OptionsHash != want.OptionsHash:
		return broken(rule, "the options hash of the request's system and tool options", desc+": another options hash")
	}
	fp, err := localkv.StableHash(map[string]any{"version": got.Version, "prefixHash": got.PrefixHash, "providerModelHash": got.ProviderModelHash,
		"optionsHash": got.OptionsHash, "privacyHash": got.PrivacyHash, "runtimeHash": got.RuntimeHash})
	if err != nil || fp != got.Fingerprint {
		return broken(rule, "fingerprint = H(S({version, prefixHash, providerModelHash, optionsHash, privacyHash, runtimeHash}))", desc+": another fingerprint")
	}
	// providerModelHash = H(S({provider, model, modelRevision})): whatever
	// the model revision, one hash never names two provider-model pairs.
	pair := provider + "\x00" + model
	if was, ok := k.pairOf[got.ProviderModelHash]; ok && was != pair {
		return broken(rule, "a providerModelHash of its own for every provider and model", desc+": the providerModelHash of another provider or model")
	}
	k.pairOf[got.ProviderModelHash] = pair
	// latitude: the model revision, privacy policy version, runtime
	// revision and capability version are the adapter's configuration,
	// which §11 does not forbid to change during an instance's life; the
	// reference adapter's constructor fixes them (§11: "the constructor
	// trims … and rejects any that is empty"), so its hashes are stable.
	if !reference {
		return nil
	}
	if was, ok := k.hashOf[pair]; ok && was != got.ProviderModelHash {
		return broken("the reference adapter's key parts are fixed by its configuration (§11): one providerModelHash per provider and model, one privacyHash, one runtimeHash",
			"the providerModelHash sent before for this provider and model", desc+": another")
	}
	k.hashOf[pair] = got.ProviderModelHash
	if k.privacyHash == "" {
		k.privacyHash, k.runtimeHash = got.PrivacyHash, got.RuntimeHash
	}
	if got.PrivacyHash != k.privacyHash || got.RuntimeHash != k.runtimeHash {
		return broken("the reference adapter's key parts are fixed by its configuration (§11): one providerModelHash per provider and model, one privacyHash, one runtimeHash",
			"the privacyHash and runtimeHash of earlier requests", fmt.Sprintf("%s: privacyHash equal %t, runtimeHash equal %t", desc, got.PrivacyHash == k.privacyHash, got.RuntimeHash == k.runtimeHash))
	}
	return nil
}

// checkRequest checks what the port received for an eligible completion.
func checkKVRequest(req localkv.ReuseRequest, provider, model string, payload json.RawMessage, p LocalKVPrompt, what, desc string) error {
	if req.Provider != provider || req.Model != model || !sameJSON(req.Payload, payload) || req.PrefixTokenCount != p.PrefixTokens || req.ContextTokenCount != p.ContextTokens {
		return broken("the port receives the request's provider and model as given, the complete sanitised payload and the prompt's token counts (§11), never a handle",
			fmt.Sprintf("the %s of provider of %d bytes, model of %d bytes, the sanitised payload, tokens %d/%d", what, len(provider), len(model), p.PrefixTokens, p.ContextTokens),
			fmt.Sprintf("%s: provider equal %t, model equal %t, payload equal %t, tokens %d/%d", desc, req.Provider == provider, req.Model == model,
				sameJSON(req.Payload, payload), req.PrefixTokenCount, req.ContextTokenCount))
	}
	return nil
}

// kvOutcome is what the local KV path of one completion came to.
type kvOutcome uint8

const (
	kvHit kvOutcome = iota
	kvReplayed
	kvFailed
)

// satAdd adds n to a counter, saturating at 2^53−1 (§11).
func satAdd(v *int64, n int64) {
	if n > kvMaxSafe-*v {
		*v = kvMaxSafe
		return
	}
	*v += n
}

// use follows an eligible completion through the port: it checks the
// requests the port received, predicts the port's answers from its
// mirrored state and counts them as §11's controller does.
func (k *kvModel) use(reference bool, e localkv.Eligibility, provider, model string, payload json.RawMessage, p LocalKVPrompt, desc string) (kvOutcome, error) {
	tries, replays := k.newRequests()
	if len(tries) != 1 {
		if len(tries) == 0 && len(replays) == 0 {
			return 0, broken(ruleUsesPort, "one reuse attempt for an eligible local completion", desc+": the port was never called")
		}
		return 0, broken("an eligible local completion tries reuse exactly once (§11)", "one reuse attempt", fmt.Sprintf("%s: %d", desc, len(tries)))
	}
	if err := checkKVRequest(tries[0], provider, model, payload, p, "reuse attempt", desc); err != nil {
		return 0, err
	}
	if err := k.checkKey(reference, tries[0].Key, e.Key, provider, model, desc); err != nil {
		return 0, err
	}
	fp := tries[0].Key.Fingerprint
	w := &k.want
	satAdd(&w.Requests, 1)
	satAdd(&w.EligibleRequests, 1)
	satAdd(&w.PrefixTokens, p.PrefixTokens)
	satAdd(&w.ContextTokens, p.ContextTokens)
	// The port's answer, from its documented behaviour: an armed failure
	// first, then an armed rejection, then a hit for state it holds.
	switch {
	case k.failReuse:
		k.failReuse = false
		satAdd(&w.Unavailable, 1)
	case k.reject:
		k.reject = false
		satAdd(&w.Rejected, 1)
	case k.warm[fp]:
		satAdd(&w.Hits, 1)
		satAdd(&w.SavedPrefillTokens, p.PrefixTokens)
		if len(replays) != 0 {
			return 0, broken("a hit is not replayed (§11)", "no full replay after a hit", fmt.Sprintf("%s: %d full replay(s)", desc, len(replays)))
		}
		return kvHit, nil
	default:
		satAdd(&w.Misses, 1)
	}
	satAdd(&w.FullReplays, 1)
	if len(replays) != 1 {
		return 0, broken("every answer but a hit — a miss, a rejection, a port error — is followed by exactly one full replay of the complete payload (§11)",
			"one full replay", fmt.Sprintf("%s: %d", desc, len(replays)))
	}
	if err := checkKVRequest(replays[0], provider, model, payload, p, "full replay", desc); err != nil {
		return 0, err
	}
	if replays[0].Key != tries[0].Key {
		return 0, broken("a full replay carries the key of its reuse attempt (§11)", "the same key", desc+": another key")
	}
	if k.failReplay {
		k.failReplay = false
		satAdd(&w.TransportFailures, 1)
		return kvFailed, nil
	}
	k.warm[fp] = true
	satAdd(&w.ReplayPrefillTokens, p.ContextTokens)
	w.ReplayPrefillLatencyMs += recordingReplayLatencyMs
	return kvReplayed, nil
}

// checkKVResult checks the result of a completion served by the port: its
// output and its localKv metadata (§11) and its privacy summary (§9).
func checkKVResult(res contract.CompletionResult, out kvOutcome, p LocalKVPrompt, want contract.PrivacySummary, desc string) error {
	wantMeta := contract.LocalKVMetadata{Mode: contract.LocalKVHit, PrefixTokens: p.PrefixTokens, ContextTokens: p.ContextTokens,
		SavedPrefillTokens: p.PrefixTokens, PrefillLatencyMs: recordingHitLatencyMs}
	output := LocalKVHitOutput
	if out == kvReplayed {
		wantMeta = contract.LocalKVMetadata{Mode: contract.LocalKVFullReplay, PrefixTokens: p.PrefixTokens, ContextTokens: p.ContextTokens,
			ReplayPrefillTokens: p.ContextTokens, PrefillLatencyMs: recordingReplayLatencyMs}
		output = LocalKVReplayOutput
	}
	switch {
	case res.Status != contract.StatusCompleted || !sameJSONText(res.Output, output):
		return broken("a completion the port served is completed with the port's output (§11)", fmt.Sprintf("completed, the port's %s output", wantMeta.Mode), desc+": "+describeKVResult(res))
	case res.LocalKV == nil || *res.LocalKV != wantMeta:
		return broken("a local KV completion carries §11's metadata: mode, prefixTokens, contextTokens, savedPrefillTokens, replayPrefillTokens, prefillLatencyMs",
			describeKVMeta(&wantMeta), desc+": "+describeKVMeta(res.LocalKV))
	case res.Privacy != want:
		return broken("a local KV completion reports the privacy enforcement of its payload (§9, §11)", fmt.Sprintf("destination %s, changed %t", want.Destination, want.Changed),
			fmt.Sprintf("%s: provider equal %t, destination %s, changed %t", desc, res.Privacy.Provider == want.Provider, q(string(res.Privacy.Destination)), res.Privacy.Changed))
	}
	return nil
}

func describeKVMeta(m *contract.LocalKVMetadata) string {
	if m == nil {
		return "no local KV metadata"
	}
	return fmt.Sprintf("mode %s, prefix %d, context %d, saved %d, replayed %d tokens, latency %g ms", q(string(m.Mode)), m.PrefixTokens, m.ContextTokens,
		m.SavedPrefillTokens, m.ReplayPrefillTokens, m.PrefillLatencyMs)
}

// checkCounters compares the adapter's local KV counters with the model's.
//
// latitude: §11's reference adapter integration calls the controller only
// for a local completion whose payload prepare finds a prompt in, so only
// those count as requests; an adapter other than the reference may also
// count other completions it reached the transport with as bypassed
// requests (§11 says what the controller counts, not when others call it).
func (k *kvModel) checkCounters(reference bool, got localkv.Diagnostics) error {
	want := k.want
	bypassOK := got.BypassedRequests == want.BypassedRequests && got.Requests == want.Requests
	if !reference {
		bypassOK = got.BypassedRequests >= want.BypassedRequests && got.BypassedRequests <= want.BypassedRequests+k.slack &&
			got.Requests == min(kvMaxSafe, want.EligibleRequests+got.BypassedRequests)
	}
	gotRest, wantRest := got, want
	gotRest.Requests, gotRest.BypassedRequests, wantRest.Requests, wantRest.BypassedRequests = 0, 0, 0, 0
	if !bypassOK || gotRest != wantRest {
		return broken("the local KV counters count as §11's controller does: every request, eligible and bypassed ones, hits, misses, rejections, unavailable answers, full replays, failures and token sums, saturating at 2^53−1",
			describeCounters(want), describeCounters(got))
	}
	return nil
}

func describeCounters(d localkv.Diagnostics) string {
	return fmt.Sprintf("version %s, requests %d (eligible %d, bypassed %d), hits %d, misses %d, rejected %d, unavailable %d, replays %d, failures %d, tokens prefix %d context %d saved %d replayed %d, replay latency %g ms",
		q(d.Version), d.Requests, d.EligibleRequests, d.BypassedRequests, d.Hits, d.Misses, d.Rejected, d.Unavailable, d.FullReplays, d.TransportFailures,
		d.PrefixTokens, d.ContextTokens, d.SavedPrefillTokens, d.ReplayPrefillTokens, d.ReplayPrefillLatencyMs)
}

// holdsKey reports whether s holds a key digest the port received: it
// looks up every run of 64 lowercase hex digits.
func (k *kvModel) holdsKey(s string) bool {
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			run++
			continue
		}
		for j := i - run; j+64 <= i; j++ {
			if k.keys[s[j:j+64]] {
				return true
			}
		}
		run = 0
	}
	return false
}

// kvMarkedNote is a message every model's local KV payload carries besides
// LocalKVPayload's: privacy markers, which enforcement removes even for a
// local destination (§8), so the port's payload — the sanitised one —
// differs from the payload as given.
const kvMarkedNote = "[ds4:internal]a note for the local model[/ds4:internal]"

// kvPayload is LocalKVPayload(p) with kvMarkedNote as a second message.
func kvPayload(p LocalKVPrompt) json.RawMessage {
	var v struct {
		LocalKV  json.RawMessage  `json:"localKv"`
		Messages []localKVMessage `json:"messages"`
	}
	_ = json.Unmarshal(LocalKVPayload(p), &v)
	v.Messages = append(v.Messages, localKVMessage{Role: "user", Content: kvMarkedNote})
	b, _ := json.Marshal(v)
	return b
}
