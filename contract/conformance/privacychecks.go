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
// and Complete, and judges them with the privacy configuration the factory
// declares (see probeJudge). A failure names the seed, the payload, the
// provider, the probe kind and where the probe was placed, never a token.
func checkPrivacyProbes(ctx context.Context, s *Session) error {
	return checkPrivacyProbesSeed(ctx, s, randomSeed(), privacyProbeCount, false)
}

// seed returns the run's seed, or a fresh random one drawn once per run
// of a check; the check's failure carries it (Result.Seed).
func (e *env) seed() uint64 {
	if e.drawn == 0 {
		e.drawn = e.opts.Seed
		if e.drawn == 0 && e.opts.sharded() {
			panic(abort{errors.New("conformance: " + e.opts.shardText() + " names no campaign: every shard needs the campaign's seed (WithSeed)")})
		}
		if e.drawn == 0 {
			e.drawn = randomSeed()
		}
	}
	return e.drawn
}

func privacyChecks() []Check {
	return []Check{
		{ID: CheckPrivacyProbes, Kind: KindExtended, seeded: true,
			Summary: fmt.Sprintf("keeps %d generated payloads' content of classes the declared privacy configuration blocks, and their secrets, from remote providers: random probes in every content key, marker class and casing, broken marker structure, escaped names, look-alike providers, partly inspectable values; without a declared configuration, only what every configuration keeps", privacyProbeCount),
			Rule:    "no content of a class the destination does not allow, and no secret the configuration redacts, reaches a provider — whatever the key, depth, marker casing, marker structure or escaping; allowed content does; a completion sends what enforcement returns; a payload that cannot be fully inspected fails closed without a transport call",
			run: func(ctx context.Context, e *env) error {
				s, err := e.start(ctx)
				if err != nil {
					return err
				}
				return checkPrivacyProbesSeed(ctx, s, e.seed(), privacyProbeCount, e.opts.StrictPrivacy)
			}},
		{ID: CheckPrivacyEngine, Kind: KindExtended, seeded: true,
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

// checkPrivacyProbesSeed is checkPrivacyProbes with n payloads from seed;
// strict demands the Go kit's member-name rule.
func checkPrivacyProbesSeed(ctx context.Context, s *Session, seed uint64, n int, strict bool) error {
	j := probeJudge{strict: strict, dests: map[string]contract.Destination{}}
	var named []string
	if cfg := s.instance.PrivacyConfig; cfg != nil {
		eng, err := privacy.New(*cfg)
		if err != nil {
			return broken("a declared privacy configuration must be valid", "a configuration privacy.New accepts", "rejected: "+q(err.Error()))
		}
		j.eng, j.cfg = eng, cfg
		named = slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders)))
	}
	b := newProbeBatch(seed, n, s.fixture.Model.Provider, named...)
	tokens := b.tokens()
	deviating := 0
	for _, c := range b.cases {
		deviates, err := j.checkCase(ctx, s, b.seed, c, tokens)
		if err != nil {
			return err
		}
		if deviates {
			deviating++
		}
	}
	s.limits.addDeviation(LimitMemberNameFloor, deviating)
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
	ruleFailClosed  = "a payload that cannot be fully inspected, even in one nested value beside inspectable content, must fail closed"
	ruleDest        = "the destination follows the provider name trimmed and lower-cased: the declared configuration's local providers are local, every other name is remote"
	ruleDestSame    = "the destination follows the provider name trimmed and lower-cased: one name, in any case and with any surrounding whitespace, has one destination"
	ruleDestSent    = "the transport must be told the destination privacy decided"
	ruleSentSame    = "a completion sends the transport what EnforcePrivacy returns for the same request"
	ruleBlocked     = "content of a class the provider is not allowed must never reach it, wherever it is placed and however its markers are cased"
	ruleSecret      = "secrets (PEM private keys, sk-, sk-ant-, gh?_, AKIA credentials, Bearer tokens, secret assignments) in content must be redacted before a remote provider receives it, when the configuration redacts secrets"
	ruleAllowed     = "content of a class the provider is allowed must reach it: sanitisation withholds only what the policy blocks"
	ruleLocal       = "a local provider is allowed every class and no secret is redacted for it: all its content must reach it"
	ruleKeyKept     = "a member name that reaches the provider comes out as it was, its markers removed"
	ruleUnsanitised = "text outside content context without a marker is not sanitised: it reaches the provider as it is"
	ruleDisabled    = "a disabled configuration returns the payload unchanged, with changed false and zero counts"
	ruleChanged     = "enforcement must report changed when it applied a marker, redacted a secret or withheld content"
	ruleCountBlock  = "each withheld segment counts one blocked block"
	ruleCountRedac  = "each redacted secret counts one redaction"
)

// probeJudge judges the enforcements of privacy-probes.
//
// With the configuration the factory declares (Instance.PrivacyConfig,
// eng), each probe is judged by its class under that configuration: the
// class of the segment holding it is at least the higher of its marker's
// class and the payload's default class — the configuration's default,
// raised by the payload's marker floor — and exactly that when the floor
// is known. A probe whose possible classes the provider is allowed none of
// must not reach it, nor a secret when the configuration redacts secrets
// for it; a probe whose possible classes it is allowed all of must, its
// member name kept; a string or name that is not sanitised reaches it as
// it is. Destination, counts and changed follow the configuration; a
// disabled one changes nothing.
//
// Latitude: without a declared configuration, the checks ask only what
// holds under every configuration SPEC §8 allows (a disabled one, one
// that allows remote providers every class or redacts nothing,
// any local providers): a payload that cannot be fully inspected fails
// closed; one provider name in any case and surrounding whitespace has one
// destination; a local destination receives every probe; a probe that
// does not reach the provider counts changed, and a withheld one a blocked
// block. With or without one, a completion sends the transport what
// EnforcePrivacy returns for the same request, to the destination it
// reports.
//
// Latitude: SPEC §8 marks one rule "Go kit only": a member name with an
// opening marker outside a closed pair raises the floor. Unless strict, a
// payload whose only such difference is that rule left out is judged as
// the TypeScript kit's engine enforces it, and counted in the limit
// LimitMemberNameFloor.
type probeJudge struct {
	eng    *privacy.Engine // nil when no configuration is declared
	cfg    *privacy.Config
	strict bool
	// dests holds the destination each canonical provider name got, for
	// the latitude without a declared configuration.
	dests map[string]contract.Destination
}

// checkCase checks one payload of the batch; deviates reports that the
// adapter enforced it without the Go kit's member-name rule.
func (j probeJudge) checkCase(ctx context.Context, s *Session, seed uint64, c *probeCase, tokens []string) (deviates bool, err error) {
	a, tr := s.Adapter(), s.transport
	where := c.where(seed)
	model := s.fixture.Model.ID
	res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: c.provider, Payload: c.payload()})
	if c.failing != "" {
		nested := fmt.Sprintf("%s, which nests %s at %s", where, c.failing, c.failPath)
		if err == nil {
			return false, broken(ruleFailClosed+": EnforcePrivacy must return an error", "an error", "a sanitised result for "+nested)
		}
		if quotesPayload(err.Error(), tokens) {
			return false, broken("an enforcement error is metadata only: it must not quote the payload", "an error naming no content", "an error quoting the payload (not shown) for "+nested)
		}
		before := tr.Len()
		r := a.Complete(ctx, contract.CompletionRequest{Provider: c.provider, Model: model, Payload: c.payload()})
		if r.Status != contract.StatusFallback || r.Code != contract.FallbackPrivacyEnforcementFail {
			return false, broken(ruleFailClosed+": Complete must fall back with privacy-enforcement-failed",
				fmt.Sprintf("fallback %q", contract.FallbackPrivacyEnforcementFail), describeResult(r)+" for "+nested)
		}
		if n := tr.Len() - before; n != 0 {
			return false, broken("the transport must not be called when privacy enforcement fails", "0 transport requests", fmt.Sprintf("%d transport requests for %s", n, nested))
		}
		return false, nil
	}
	if err != nil {
		return false, failed("EnforcePrivacy must sanitise an inspectable payload", &probeError{where: where, err: err, tokens: tokens})
	}
	if err := j.checkDestination(res.Destination, c, where); err != nil {
		return false, err
	}
	pol := j.policy(c.provider, res.Destination)
	deviates, err = j.judge(res.Payload, &res, c, pol, where, "EnforcePrivacy's result")
	if err != nil {
		return false, err
	}
	before := tr.Len()
	r := a.Complete(ctx, contract.CompletionRequest{Provider: c.provider, Model: model, Payload: c.payload()})
	if r.Status != contract.StatusCompleted {
		return false, broken("a completion with an inspectable payload and a working transport must complete", "status \"completed\"", describeResult(r)+" for "+where)
	}
	if r.Privacy.Destination != res.Destination {
		return false, broken(ruleDestSent+" (in the completion's privacy summary)", q(string(res.Destination)), q(string(r.Privacy.Destination))+" for "+where)
	}
	if n := tr.Len() - before; n != 1 {
		return false, broken("a completion must call the transport exactly once", "1 transport request", fmt.Sprintf("%d transport requests for %s", n, where))
	}
	sent := tr.Requests()[before]
	if sent.Destination != res.Destination {
		return false, broken(ruleDestSent, q(string(res.Destination)), q(string(sent.Destination))+" for "+where)
	}
	sentDeviates, err := j.judge(sent.Payload, nil, c, pol, where, "the transport")
	if err != nil {
		return false, err
	}
	if d := diffPayloads(res.Payload, sent.Payload); d != "" {
		return false, broken(ruleSentSame, "the payload EnforcePrivacy returned", d+" at the transport for "+where)
	}
	return deviates || sentDeviates, nil
}

// checkDestination checks the destination EnforcePrivacy reported for the
// case's provider: the declared configuration's, or, without one, the one
// every spelling of the provider name got.
func (j probeJudge) checkDestination(got contract.Destination, c *probeCase, where string) error {
	if got != contract.DestinationLocal && got != contract.DestinationRemote {
		return broken("the destination is local or remote", `"local" or "remote"`, q(string(got))+" from EnforcePrivacy for "+where)
	}
	if j.eng != nil {
		pol, err := j.eng.Policy(c.provider)
		if err != nil {
			return failed("the privacy engine must accept the provider", err)
		}
		if got != pol.Destination {
			return broken(ruleDest, q(string(pol.Destination)), q(string(got))+" from EnforcePrivacy for "+where)
		}
		return nil
	}
	if prev, ok := j.dests[c.canonical]; ok && prev != got {
		return broken(ruleDestSame, q(string(prev))+", as for another spelling of the name", q(string(got))+" from EnforcePrivacy for "+where)
	}
	j.dests[c.canonical] = got
	return nil
}

// probePolicy is what the judge knows of the policy for one provider.
type probePolicy struct {
	known   bool // a configuration is declared
	enabled bool
	local   bool
	def     privacy.Classification
	allowed [4]bool // by rank
	redact  bool
}

// policy returns the judge's policy for provider, which EnforcePrivacy
// gave destination dest.
func (j probeJudge) policy(provider string, dest contract.Destination) probePolicy {
	p := probePolicy{local: dest == contract.DestinationLocal}
	if j.eng == nil {
		return p
	}
	pol, err := j.eng.Policy(provider)
	if err != nil {
		return p
	}
	p.known, p.enabled, p.def = true, j.cfg.Enabled, j.cfg.DefaultClassification
	p.redact = j.cfg.RedactSecrets && pol.Destination == privacy.Remote
	for _, c := range pol.Allowed {
		p.allowed[c.Rank()] = true
	}
	return p
}

// judge checks one sanitised payload of the case (res, when given, is
// EnforcePrivacy's result with its counts). With a declared configuration
// and a payload whose member names raise its floor, it judges it under the
// Go kit's member-name rule and, unless strict, as the TypeScript kit's
// engine enforces it (deviates).
func (j probeJudge) judge(data []byte, res *contract.PrivacyResult, c *probeCase, pol probePolicy, where, at string) (deviates bool, err error) {
	v, ok := viewPayload(data)
	if !ok {
		return false, broken("the sanitised payload must be one JSON document", "valid JSON", "invalid JSON in "+at+" for "+where)
	}
	err = judgeProbes(v, res, c, pol, true, where, at)
	if err == nil || c.nameFloor == "" || !pol.known {
		return false, err
	}
	if judgeProbes(v, res, c, pol, false, where, at) != nil {
		return false, err
	}
	if j.strict {
		var br *brokenRule
		if errors.As(err, &br) {
			return false, broken(ruleNameFloor, br.expected, br.actual+"; "+nameFloorLeftOut)
		}
		return false, err
	}
	return true, nil
}

// judgeProbes checks what v, a sanitised payload seen at at, holds of the
// case's probes under pol; nameRule applies the Go kit's member-name rule
// to the payload's default class.
func judgeProbes(v probeView, res *contract.PrivacyResult, c *probeCase, pol probePolicy, nameRule bool, where, at string) error {
	if pol.known && !pol.enabled {
		if res != nil && (res.Changed || res.BlockedBlocks != 0 || res.SecretRedactions != 0) {
			return broken(ruleDisabled, "changed false, 0 blocked blocks, 0 redactions",
				fmt.Sprintf("changed %t, %d blocked blocks, %d redactions for %s", res.Changed, res.BlockedBlocks, res.SecretRedactions, where))
		}
		for _, p := range c.plants {
			if !v.has(p.token) {
				return broken(ruleDisabled, fmt.Sprintf("the %s placed at %s in %s", p.describe(), p.path, at), "missing from "+at+" for "+where)
			}
		}
		return nil
	}
	// The payload's default class: at least def, exactly that when no
	// string value raises it.
	def, exact := pol.def, c.valueFloor == ""
	if !exact {
		def = privacy.Max(def, privacy.Classification(c.valueFloor))
	}
	if nameRule && c.nameFloor != "" {
		def = privacy.Max(def, privacy.Classification(c.nameFloor))
	}
	markers, redacted := false, false
	var missing, withheld *plantedProbe // the first probe missing, the first one not a secret
	for i, p := range c.plants {
		found := v.has(p.token)
		placed := fmt.Sprintf("the %s placed at %s", p.describe(), p.path)
		switch p.kind {
		case kindAnomaly, kindSplitPair, kindOpenBelow:
			// A stray or unclosed marker alone does not set changed.
		default:
			markers = markers || p.class != ""
		}
		if !found && missing == nil {
			missing = &c.plants[i]
		}
		if !found && !p.secret && withheld == nil {
			withheld = &c.plants[i]
		}
		if !pol.known {
			// Latitude: a local destination receives every class, with no
			// redaction, under every configuration.
			if pol.local && !found {
				return broken(ruleLocal, placed+" in "+at, "missing from "+at+" for "+where)
			}
			continue
		}
		if !p.sanitised {
			switch {
			case p.key && !v.names[p.token]:
				return broken(ruleKeyKept, placed+" as a member name in "+at, "no member of that name in "+at+" for "+where)
			case !found:
				return broken(ruleUnsanitised, placed+" in "+at, "missing from "+at+" for "+where)
			}
			continue
		}
		low := privacy.Max(def, privacy.Classification(p.class))
		none, all := pol.classes(low, exact && p.kind != kindAnomaly && p.kind != kindSplitPair && p.kind != kindOpenBelow)
		switch {
		case p.secret && pol.redact && found:
			return broken(ruleSecret, "none in "+at, placed+" reached "+at+" (not shown) for "+where)
		case none && found:
			return broken(ruleBlocked, "none in "+at, placed+" reached "+at+" (not shown) for "+where)
		case all && !(p.secret && pol.redact) && !found:
			return broken(map[bool]string{true: ruleLocal, false: ruleAllowed}[pol.local], placed+" in "+at, "missing from "+at+" for "+where)
		case all && !(p.secret && pol.redact) && p.key && !v.names[p.token]:
			rule := ruleKeyKept
			if pol.local {
				rule = ruleLocal + " (a member name loses only its markers)"
			}
			return broken(rule, placed+" as a member name in "+at, "no member of that name in "+at+" for "+where)
		}
		redacted = redacted || (p.secret && pol.redact && all)
	}
	if res == nil {
		return nil
	}
	// Only withholding and redaction take text out of a payload, under
	// every configuration.
	switch {
	case missing != nil && !res.Changed:
		return broken(ruleChanged, "changed true", fmt.Sprintf("changed false, and the %s placed at %s missing from %s for %s", missing.describe(), missing.path, at, where))
	case withheld != nil && res.BlockedBlocks == 0:
		return broken(ruleCountBlock, "blockedBlocks of at least 1", fmt.Sprintf("blockedBlocks 0, and the %s placed at %s missing from %s for %s", withheld.describe(), withheld.path, at, where))
	case !pol.known:
		return nil
	}
	if !res.Changed && (markers || redacted) {
		return broken(ruleChanged, "changed true", "changed false for "+where)
	}
	if redacted && res.SecretRedactions == 0 {
		return broken(ruleCountRedac, "secretRedactions of at least 1", "secretRedactions 0 for "+where)
	}
	return nil
}

// classes reports whether the policy allows none and whether it allows all
// of the classes a segment may have: exactly low when exact, else low or
// any class above it.
func (p probePolicy) classes(low privacy.Classification, exact bool) (none, all bool) {
	none, all = true, true
	for r := low.Rank(); r < len(p.allowed); r++ {
		none = none && !p.allowed[r]
		all = all && p.allowed[r]
		if exact {
			break
		}
	}
	return none, all
}

// diffPayloads describes the first difference between two sanitised
// payloads, compared as parsed JSON, by path and sizes; "" when they are
// equal.
func diffPayloads(want, got []byte) string {
	w, err := jsonw.Parse(want)
	if err != nil {
		return "EnforcePrivacy's payload does not parse"
	}
	g, err := jsonw.Parse(got)
	if err != nil {
		return "the payload is not one JSON document"
	}
	return diffJSON("$", w, g)
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
