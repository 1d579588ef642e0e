package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/upstream"
)

// privacyProbeCount is the number of payloads one run of checkPrivacyProbes
// sends, each through EnforcePrivacy and Complete.
const privacyProbeCount = 64

// privacyEngineCount is the number of payloads one run of
// checkPrivacyEngine sends, each for several providers.
const privacyEngineCount = 32

// checkPrivacyProbes sends a batch of generated payloads (see
// privacyprobe.go), drawn from a fresh random seed, through EnforcePrivacy
// and Complete, and checks them against the default privacy policy: no
// blocked-class token (including text that only the marker-structure
// floor withholds) and no secret reaches a remote provider, in the
// result or at the transport; allowed content and unmarked member names of
// a clean payload reach it unchanged; a local provider receives
// everything; each provider gets the right destination; and a payload
// with an uninspectable value nested beside the probes fails closed
// without a transport call, with an error that quotes none of it. A failure names the seed, the payload, the
// provider, the probe kind and where the probe was placed, never a token.
func checkPrivacyProbes(ctx context.Context, s *Session) error {
	return checkPrivacyProbesSeed(ctx, s, randomSeed(), privacyProbeCount)
}

// seed returns the run's seed, or a fresh random one drawn once per run
// of a check; the check's failure carries it (Result.Seed).
func (e *env) seed() uint64 {
	if e.drawn == 0 {
		e.drawn = e.opts.Seed
		if e.drawn == 0 {
			e.drawn = randomSeed()
		}
	}
	return e.drawn
}

func privacyChecks() []Check {
	return []Check{
		{ID: CheckPrivacyProbes, Kind: KindExtended,
			Summary: fmt.Sprintf("keeps %d generated payloads' local-only content and secrets from remote providers: random probes in every content key, marker class and casing, broken marker structure, escaped names, look-alike providers, partly inspectable values", privacyProbeCount),
			Rule:    "no content of a class the destination does not allow, and no secret, reaches a remote provider — whatever the key, depth, marker casing, marker structure or escaping; allowed content does; a payload that cannot be fully inspected fails closed without a transport call",
			run: func(ctx context.Context, e *env) error {
				s, err := e.start(ctx)
				if err != nil {
					return err
				}
				return checkPrivacyProbesSeed(ctx, s, e.seed(), privacyProbeCount)
			}},
		{ID: CheckPrivacyEngine, Kind: KindExtended,
			Summary: fmt.Sprintf("enforces privacy exactly as privacy.Engine does under the configuration the factory declares, for %d generated payloads", privacyEngineCount),
			Rule:    "an adapter declaring its privacy configuration (Instance.PrivacyConfig) enforces it exactly as the reference engine does: the same destination, counts and sanitised payload",
			run: func(ctx context.Context, e *env) error {
				s, err := e.start(ctx)
				if err != nil {
					return err
				}
				if s.instance.PrivacyConfig == nil {
					return skip("the factory declares no privacy configuration (Instance.PrivacyConfig)")
				}
				return checkPrivacyEngineSeed(ctx, s, *s.instance.PrivacyConfig, e.seed(), privacyEngineCount, e.opts.StrictPrivacy)
			}},
	}
}

// checkPrivacyProbesSeed is checkPrivacyProbes with n payloads from seed.
func checkPrivacyProbesSeed(ctx context.Context, s *Session, seed uint64, n int) error {
	b := newProbeBatch(seed, n, s.fixture.Model.Provider)
	tokens := b.tokens()
	for _, c := range b.cases {
		if err := checkProbeCase(ctx, s, b.seed, c, tokens); err != nil {
			return err
		}
	}
	return nil
}

// probeError is an adapter error shown in a failure, prefixed with the
// case it happened on. Its text is left out when it may quote the payload:
// when it holds a token of the batch, a marker, a JSON member or an escape.
type probeError struct {
	where  string
	err    error
	tokens []string
}

func (e *probeError) Error() string {
	s := e.err.Error()
	if quotesPayload(s, e.tokens) {
		s = "the error text is not shown: it may quote the payload"
	}
	return e.where + ": " + s
}

// quotesPayload reports whether an error text s may quote a payload of the
// batch: whether it holds a token, a marker, a JSON member or an escape.
func quotesPayload(s string, tokens []string) bool {
	quotes := strings.Contains(strings.ToLower(s), "ds4:") || strings.Contains(s, `":`) || strings.Contains(s, `\u`)
	for _, t := range tokens {
		quotes = quotes || strings.Contains(s, t)
	}
	return quotes
}

func (e *probeError) Unwrap() error { return e.err }

func destinationOf(local bool) contract.Destination {
	if local {
		return contract.DestinationLocal
	}
	return contract.DestinationRemote
}

const (
	ruleFailClosed = "a payload that cannot be fully inspected, even in one nested value beside inspectable content, must fail closed"
	ruleDest       = "the destination follows the provider name trimmed and lower-cased: the default local providers (ollama, llama-cpp, lmstudio) are local, every other name is remote"
	ruleBlocked    = "content of a class a remote provider is not allowed (sensitive and local-only under the default policy) must never reach it, wherever it is placed and however its markers are cased"
	ruleSecret     = "secrets (PEM private keys, sk-, sk-ant-, gh?_, AKIA credentials, Bearer tokens, secret assignments) in content must be redacted before a remote provider receives it"
	ruleAllowed    = "content of a class the provider is allowed must reach it: sanitisation withholds only what the policy blocks"
	ruleLocal      = "a local provider is allowed every class and no secret is redacted for it: all its content must reach it"
	ruleKeyKept    = "in content context, a member name with neither a marker nor a secret must come out unchanged"
)

func checkProbeCase(ctx context.Context, s *Session, seed uint64, c *probeCase, tokens []string) error {
	a, tr := s.Adapter(), s.transport
	where := c.where(seed)
	model := s.fixture.Model.ID
	res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: c.provider, Payload: c.payload()})
	if c.failing != "" {
		nested := fmt.Sprintf("%s, which nests %s at %s", where, c.failing, c.failPath)
		if err == nil {
			return broken(ruleFailClosed+": EnforcePrivacy must return an error", "an error", "a sanitised result for "+nested)
		}
		if quotesPayload(err.Error(), tokens) {
			return broken("an enforcement error is metadata only: it must not quote the payload", "an error naming no content", "an error quoting the payload (not shown) for "+nested)
		}
		before := tr.Len()
		r := a.Complete(ctx, contract.CompletionRequest{Provider: c.provider, Model: model, Payload: c.payload()})
		if r.Status != contract.StatusFallback || r.Code != contract.FallbackPrivacyEnforcementFail {
			return broken(ruleFailClosed+": Complete must fall back with privacy-enforcement-failed",
				fmt.Sprintf("fallback %q", contract.FallbackPrivacyEnforcementFail), describeResult(r)+" for "+nested)
		}
		if n := tr.Len() - before; n != 0 {
			return broken("the transport must not be called when privacy enforcement fails", "0 transport requests", fmt.Sprintf("%d transport requests for %s", n, nested))
		}
		return nil
	}
	if err != nil {
		return failed("EnforcePrivacy must sanitise an inspectable payload", &probeError{where: where, err: err, tokens: tokens})
	}
	want := destinationOf(c.local)
	if res.Destination != want {
		return broken(ruleDest, q(string(want)), q(string(res.Destination))+" from EnforcePrivacy for "+where)
	}
	if err := checkProbeCounts(res, c, where); err != nil {
		return err
	}
	if err := checkProbeContent(res.Payload, c, where, "EnforcePrivacy's result"); err != nil {
		return err
	}
	before := tr.Len()
	r := a.Complete(ctx, contract.CompletionRequest{Provider: c.provider, Model: model, Payload: c.payload()})
	if r.Status != contract.StatusCompleted {
		return broken("a completion with an inspectable payload and a working transport must complete", "status \"completed\"", describeResult(r)+" for "+where)
	}
	if r.Privacy.Destination != want {
		return broken(ruleDest+" (in the completion's privacy summary)", q(string(want)), q(string(r.Privacy.Destination))+" for "+where)
	}
	if n := tr.Len() - before; n != 1 {
		return broken("a completion must call the transport exactly once", "1 transport request", fmt.Sprintf("%d transport requests for %s", n, where))
	}
	sent := tr.Requests()[before]
	if sent.Destination != want {
		return broken("the transport must be told the destination privacy decided", q(string(want)), q(string(sent.Destination))+" for "+where)
	}
	return checkProbeContent(sent.Payload, c, where, "the transport")
}

// checkProbeCounts checks what EnforcePrivacy says it did: a payload with
// markers (or, for a remote provider, secrets) is changed; withheld
// content and redacted secrets are counted.
func checkProbeCounts(res contract.PrivacyResult, c *probeCase, where string) error {
	markers, blocked, secrets := false, false, false
	for _, p := range c.plants {
		switch {
		case p.kind == kindAnomaly || p.kind == kindSplitPair || p.kind == kindOpenBelow:
			// A stray or unclosed marker alone does not set changed.
		case p.class != "":
			markers = true
			blocked = blocked || p.blocked
		case p.blocked:
			secrets = true
		}
	}
	if !res.Changed && (markers || (secrets && !c.local)) {
		return broken("enforcement must report changed when it applied a marker or redacted a secret", "changed true", "changed false for "+where)
	}
	if c.local || !c.clean {
		return nil
	}
	if blocked && res.BlockedBlocks == 0 {
		return broken("each withheld segment counts one blocked block", "blockedBlocks of at least 1", "blockedBlocks 0 for "+where)
	}
	if secrets && res.SecretRedactions == 0 {
		return broken("each redacted secret counts one redaction", "secretRedactions of at least 1", "secretRedactions 0 for "+where)
	}
	return nil
}

// checkProbeContent checks one sanitised payload against the case's
// planted probes; at names where the payload was seen.
func checkProbeContent(data []byte, c *probeCase, where, at string) error {
	v, ok := viewPayload(data)
	if !ok {
		return broken("the sanitised payload must be one JSON document", "valid JSON", "invalid JSON in "+at+" for "+where)
	}
	for _, p := range c.plants {
		found := v.has(p.token)
		placed := fmt.Sprintf("the %s placed at %s", p.describe(), p.path)
		switch {
		case !c.local && p.blocked && found:
			rule := ruleBlocked
			if p.class == "" {
				rule = ruleSecret
			}
			return broken(rule, "none in "+at, placed+" reached "+at+" (not shown) for "+where)
		case c.local && !found:
			return broken(ruleLocal, placed+" in "+at, "missing from "+at+" for "+where)
		case !c.local && c.clean && !p.blocked && !found:
			return broken(ruleAllowed, placed+" in "+at, "missing from "+at+" for "+where)
		case p.key && !p.blocked && (c.local || c.clean) && !v.names[p.token]:
			return broken(ruleKeyKept, placed+" as a member name in "+at, "no member of that name in "+at+" for "+where)
		case p.key && p.blocked && c.local && !v.names[p.token]:
			return broken(ruleLocal+" (a member name loses only its markers)", placed+" as a member name in "+at, "no member of that name in "+at+" for "+where)
		}
	}
	return nil
}

// describe names the probe's kind and class.
func (p plantedProbe) describe() string {
	if p.class == "" {
		return p.kind
	}
	return p.kind + " (" + p.class + ")"
}

// probeView is what a payload holds, as a receiver sees it: the raw bytes,
// every string and member name once decoded (duplicates included), and the
// set of member names.
type probeView struct {
	raw   string
	text  string
	names map[string]bool
}

func (v probeView) has(token string) bool {
	return strings.Contains(v.raw, token) || strings.Contains(v.text, token)
}

// viewPayload decodes data member by member, so that a name repeated in
// an object is seen in each occurrence. It reports false for anything that
// is not one JSON document.
func viewPayload(data []byte) (probeView, bool) {
	v := probeView{raw: string(data), names: map[string]bool{}}
	var b strings.Builder
	s := jsonw.NewScanner(data)
	var walk func(depth int) error
	walk = func(depth int) error {
		if depth > jsonw.MaxDepth {
			return errors.New("nesting too deep")
		}
		switch s.Peek() {
		case jsonw.Object:
			return s.Object(func(n string) error {
				v.names[n] = true
				b.WriteString(n)
				b.WriteByte(0)
				return walk(depth + 1)
			})
		case jsonw.Array:
			return s.Array(func(int) error { return walk(depth + 1) })
		case jsonw.String:
			str, err := s.String()
			b.WriteString(str)
			b.WriteByte(0)
			return err
		}
		return s.Skip()
	}
	if walk(0) != nil || s.End() != nil {
		return v, false
	}
	v.text = b.String()
	return v, true
}

// checkPrivacyEngine compares the adapter's EnforcePrivacy with the privacy
// engine under cfg, the configuration the adapter declares: for every
// payload of a generated batch (fresh random seed), sent to its own
// provider, two more of the batch and each provider cfg names, the
// adapter must fail exactly when the engine
// fails, and otherwise report the engine's destination, changed,
// blockedBlocks and secretRedactions and an equal payload (compared as
// parsed JSON: member order, names, strings and numbers). A failure names
// the seed, the payload, the provider and the first differing field or
// JSON path, as metadata only.
//
// Latitude: SPEC §8 marks one rule of the engine "Go kit only" (a member
// name with an opening marker outside a closed pair raises the floor);
// the TypeScript kit's engine leaves it out. Unless strict
// (WithStrictPrivacy), a result that differs from the engine's but equals
// what the engine gives without that rule is accepted, and each payload
// enforced so is counted in the limit LimitMemberNameFloor.
func checkPrivacyEngine(ctx context.Context, s *Session, cfg privacy.Config) error {
	return checkPrivacyEngineSeed(ctx, s, cfg, randomSeed(), privacyEngineCount, false)
}

const (
	ruleEngine       = "EnforcePrivacy must give exactly what the privacy engine gives under the adapter's declared configuration"
	ruleNameFloor    = "under strict privacy (WithStrictPrivacy), a member name with an opening marker outside a closed pair raises the marker floor of the whole payload (SPEC §8, Go kit only)"
	nameFloorLeftOut = "the adapter gives what the engine gives without that rule, as the TypeScript kit's engine does"
)

// checkPrivacyEngineSeed is checkPrivacyEngine with n payloads from seed;
// strict demands the Go kit's member-name rule.
func checkPrivacyEngineSeed(ctx context.Context, s *Session, cfg privacy.Config, seed uint64, n int, strict bool) error {
	eng, err := privacy.New(cfg)
	if err != nil {
		return broken("a declared privacy configuration must be valid", "a configuration privacy.New accepts", "rejected: "+q(err.Error()))
	}
	up := upstream.WithoutNameFloor(eng).(*privacy.Engine)
	b := newProbeBatch(seed, n, s.fixture.Model.Provider)
	tokens := b.tokens()
	named := configProviders(cfg)
	a := s.Adapter()
	deviating := 0
	for i, c := range b.cases {
		// Each payload goes to its own provider, the next two of the
		// batch, and every provider cfg names, as given or with other
		// case and surrounding whitespace in turn.
		providers := []string{c.provider, b.providers[i%len(b.providers)], b.providers[(i+1)%len(b.providers)]}
		for j, variants := range named {
			providers = append(providers, variants[(i+j)%2])
		}
		deviates := false
		for _, p := range providers {
			where := fmt.Sprintf("payload #%d (%s) for provider %s, seed %s", c.index, c.shape, q(p), seedText(seed))
			want, werr := eng.SanitizePayload(p, c.payload())
			got, gerr := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: p, Payload: c.payload()})
			switch {
			case werr != nil && gerr == nil:
				return broken(ruleEngine, "an error (the engine fails closed)", "a sanitised result for "+where)
			case werr == nil && gerr != nil:
				return failed(ruleEngine+": it must sanitise what the engine sanitises", &probeError{where: where, err: gerr, tokens: tokens})
			case werr != nil:
				continue
			}
			d := diffPrivacy(want.ForProvider(p), got)
			if d == "" {
				continue
			}
			if uw, err := up.SanitizePayload(p, c.payload()); err == nil && diffPrivacy(uw.ForProvider(p), got) == "" {
				if strict {
					return broken(ruleNameFloor, "the engine's result", d+" for "+where+"; "+nameFloorLeftOut)
				}
				deviates = true
				continue
			}
			return broken(ruleEngine, "the engine's result", d+" for "+where)
		}
		if deviates {
			deviating++
		}
	}
	s.limits.addDeviation(LimitMemberNameFloor, deviating)
	return nil
}

// configProviders returns, for each provider name cfg lists, the name as
// given and with other case and surrounding whitespace; names that are
// blank are left out.
func configProviders(cfg privacy.Config) [][2]string {
	var out [][2]string
	for _, n := range slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders))) {
		if !contract.IsBlank(n) {
			out = append(out, [2]string{n, " " + strings.ToUpper(n) + "\t"})
		}
	}
	return out
}

// diffPrivacy describes the first difference between the engine's result
// want and the adapter's got, as metadata, or returns "".
func diffPrivacy(want, got contract.PrivacyResult) string {
	switch {
	case got.Destination != want.Destination:
		return fmt.Sprintf("destination %s expected, %s got", q(string(want.Destination)), q(string(got.Destination)))
	case got.Changed != want.Changed:
		return fmt.Sprintf("changed %t expected, %t got", want.Changed, got.Changed)
	case got.BlockedBlocks != want.BlockedBlocks:
		return fmt.Sprintf("blockedBlocks %d expected, %d got", want.BlockedBlocks, got.BlockedBlocks)
	case got.SecretRedactions != want.SecretRedactions:
		return fmt.Sprintf("secretRedactions %d expected, %d got", want.SecretRedactions, got.SecretRedactions)
	}
	w, err := jsonw.Parse(want.Payload)
	if err != nil {
		return "the engine's payload does not parse"
	}
	g, err := jsonw.Parse(got.Payload)
	if err != nil {
		return "the payload is not one JSON document"
	}
	return diffJSON("$", w, g)
}

// shownNames are member names the generator uses as fixed structure; a
// path shows them, and any other name only by its position.
var shownNames = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`messages role content type text name tool_calls id function arguments
		system prompt instructions tools description parameters properties query filters contents parts
		system_instruction metadata detail extra notes scope origin trace summary input thinking context
		history routing label model temperature requestMetadata hook extensions options`) {
		shownNames[n] = true
	}
}

func pathName(path, name string, i int) string {
	if shownNames[name] {
		return path + "." + name
	}
	return fmt.Sprintf("%s.<member #%d>", path, i)
}

// describeName shows a member name the generator uses as fixed
// structure, and any other name by its size.
func describeName(name string) string {
	if shownNames[name] {
		return "named " + name
	}
	return fmt.Sprintf("a name of %d bytes", len(name))
}

func kindName(v jsonw.Value) string {
	switch v.Kind {
	case jsonw.String:
		return fmt.Sprintf("a string of %d bytes", len(v.Str))
	case jsonw.Object:
		return fmt.Sprintf("an object of %d members", len(v.Members))
	case jsonw.Array:
		return fmt.Sprintf("an array of %d items", len(v.Items))
	}
	return article(v.Kind.String())
}

// diffJSON describes the first difference between two parsed values at
// path, by kinds, sizes and positions only, or returns "".
func diffJSON(path string, w, g jsonw.Value) string {
	if w.Kind != g.Kind {
		return fmt.Sprintf("payload %s: %s expected, %s got", path, kindName(w), kindName(g))
	}
	switch w.Kind {
	case jsonw.String:
		if w.Str != g.Str {
			return fmt.Sprintf("payload %s: %s expected, a different string of %d bytes got", path, kindName(w), len(g.Str))
		}
	case jsonw.Number:
		if w.Num != g.Num {
			return fmt.Sprintf("payload %s: a different number", path)
		}
	case jsonw.Bool:
		if w.Bool != g.Bool {
			return fmt.Sprintf("payload %s: %t expected, %t got", path, w.Bool, g.Bool)
		}
	case jsonw.Array:
		for i := range min(len(w.Items), len(g.Items)) {
			if d := diffJSON(fmt.Sprintf("%s[%d]", path, i), w.Items[i], g.Items[i]); d != "" {
				return d
			}
		}
		if len(w.Items) != len(g.Items) {
			return fmt.Sprintf("payload %s: %s expected, %s got", path, kindName(w), kindName(g))
		}
	case jsonw.Object:
		for i := range min(len(w.Members), len(g.Members)) {
			wm, gm := w.Members[i], g.Members[i]
			if wm.Name != gm.Name {
				return fmt.Sprintf("payload %s: member #%d %s expected, %s got", path, i, describeName(wm.Name), describeName(gm.Name))
			}
			if d := diffJSON(pathName(path, wm.Name, i), wm.Value, gm.Value); d != "" {
				return d
			}
		}
		if len(w.Members) != len(g.Members) {
			return fmt.Sprintf("payload %s: %s expected, %s got", path, kindName(w), kindName(g))
		}
	}
	return ""
}
