package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// This file draws the inputs of the model check's operations: payloads,
// providers, completions and capability requests (model_seq.go draws the
// sequences of operations themselves).

// drawnPayload is a payload an operation sends: raw JSON, the same
// decoded into Go values, or a value that cannot be inspected.
type drawnPayload struct {
	raw     json.RawMessage
	decoded bool
	hostile bool
}

// value returns a fresh copy of the payload as the call gets it.
func (p drawnPayload) value() any {
	switch {
	case p.hostile:
		// Partly inspectable: content with secrets, and one member that
		// refuses inspection.
		var v any
		_ = json.Unmarshal(p.raw, &v)
		return map[string]any{"messages": v, modelHostileMember: HostilePayload()}
	case p.decoded:
		var v any
		_ = json.Unmarshal(p.raw, &v)
		return v
	}
	return json.RawMessage(slices.Clone(p.raw))
}

// unchanged reports whether v, a value p.value() returned and a call was
// given, is still what it was (hostile values are not compared).
func (p drawnPayload) unchanged(v any) bool {
	switch {
	case p.hostile:
		return true
	case p.decoded:
		b, err := json.Marshal(v)
		return err == nil && sameJSON(b, p.raw)
	}
	raw, ok := v.(json.RawMessage)
	return ok && string(raw) == string(p.raw)
}

func (p drawnPayload) String() string {
	switch {
	case p.hostile:
		return "uninspectable payload"
	case p.decoded:
		return fmt.Sprintf("decoded payload %d bytes", len(p.raw))
	}
	return fmt.Sprintf("payload %d bytes", len(p.raw))
}

// Sizes of drawn payloads: most up to modelSmallPayload, one in
// modelLargeOdds up to modelMaxPayload (sizes spread over the orders of
// magnitude in between).
const (
	modelSmallPayload = 16 << 10
	modelMaxPayload   = 1 << 20
	modelLargeOdds    = 16
)

func (r *modelRun) drawPayload(rnd *rand.Rand, seed int) drawnPayload {
	if rnd.IntN(10) == 0 {
		return drawnPayload{raw: gen.Payload(1 << 10).Example(seed), hostile: true}
	}
	most := modelSmallPayload
	if r.small {
		most = 1 << 10
	} else if rnd.IntN(modelLargeOdds) == 0 {
		most = modelMaxPayload
	}
	return drawnPayload{raw: gen.Payload(most).Example(seed), decoded: rnd.IntN(3) == 0}
}

// blankNames are provider and model names JavaScript's trim makes blank.
var blankNames = []string{"", " ", "\t\n", "\u00a0", "\ufeff", "\u2028", "\u3000 "}

// goBlankNames are provider names Go's strings.TrimSpace makes blank and
// JavaScript's trim does not (it keeps U+0085): not blank, remote.
var goBlankNames = []string{"\u0085", "\u0085\u3000", " \u0085\r\n"}

// nameForm is a form drawProvider gives a name the privacy configuration
// names: apply makes it, of a name holding one of letters when there is
// one. A form with letters no configured name holds is not drawn, unless
// it is fallback (it then takes any name).
type nameForm struct {
	letters  []string
	fallback bool
	apply    func(string) string
}

// holds reports whether n holds one of f's letters (or f needs none).
func (f nameForm) holds(n string) bool {
	return len(f.letters) == 0 || slices.ContainsFunc(f.letters, func(l string) bool { return strings.Contains(n, l) })
}

// plainNameForms are the ordinary forms of a configured name: as given,
// and upper-cased after a space.
var plainNameForms = []nameForm{
	{apply: func(p string) string { return p }},
	{apply: func(p string) string { return " " + strings.ToUpper(p) }},
}

// sameName is a configured name as JavaScript's trim and toLowerCase
// take it back to itself, and every one-sided slip of Go's takes it to
// another: after U+FEFF (strings.TrimSpace keeps it) and before U+3000
// (an ASCII trim keeps it), upper-cased with a Kelvin sign for K (an
// ASCII lower-casing keeps it) and, for a final sigma, a capital sigma
// (strings.ToLower makes it σ). It is of a name holding k or ς when
// there is one.
var sameName = nameForm{letters: []string{"k", "\u03c2"}, fallback: true, apply: func(p string) string {
	return "\ufeff" + strings.ReplaceAll(strings.ToUpper(p), "K", "\u212a") + "\u3000"
}}

// classNameForms are the forms of a configured name that classes of
// contract/gen's adversarial strings put on the line between JavaScript's
// comparison and Go's: sameName, a third of the draws, and names
// JavaScript takes for another provider and one slip of Go's for this one
// (strings.TrimSpace, a whitespace table before Unicode 6.3,
// strings.EqualFold, strings.ToLower, strings.ToUpper, full case
// folding). Several slips in one name would hide each other there.
var classNameForms = []nameForm{
	sameName, sameName, sameName,
	{apply: func(p string) string { return p + "\u0085" }},                                                                  // U+0085
	{apply: func(p string) string { return "\u180e" + p }},                                                                  // U+180E
	{letters: []string{"s"}, apply: func(p string) string { return strings.Replace(p, "s", "\u017f", 1) }},                  // long s
	{letters: []string{"i"}, apply: func(p string) string { return strings.ReplaceAll(strings.ToUpper(p), "I", "\u0130") }}, // capital I with dot
	{letters: []string{"i"}, apply: func(p string) string { return strings.Replace(p, "i", "\u0131", 1) }},                  // dotless i
	{letters: []string{"ss"}, apply: func(p string) string { return strings.Replace(p, "ss", "\u00df", 1) }},                // sharp s
}

// drawProvider draws the provider of a request: the fixture model's, a
// realistic one or a look-alike (gen.Provider), or one the declared
// privacy configuration names, in one of plainNameForms or, four times in
// five, of the classNameForms that apply to its names; now and then a
// blank one or one only Go's strings.TrimSpace makes blank.
func drawProvider(rnd *rand.Rand, seed int, fx Fixture, cfg *privacy.Config) string {
	switch rnd.IntN(12) {
	case 0:
		if rnd.IntN(3) == 0 {
			return goBlankNames[rnd.IntN(len(goBlankNames))]
		}
		return blankNames[rnd.IntN(len(blankNames))]
	case 1, 2, 3:
		return gen.Provider().Example(seed)
	case 4, 5, 6, 7:
		if cfg != nil {
			named := slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders)))
			if len(named) > 0 {
				form := plainNameForms[rnd.IntN(len(plainNameForms))]
				if rnd.IntN(5) != 0 {
					forms := slices.DeleteFunc(slices.Clone(classNameForms), func(f nameForm) bool {
						return !f.fallback && !slices.ContainsFunc(named, f.holds)
					})
					form = forms[rnd.IntN(len(forms))]
				}
				if holding := slices.DeleteFunc(slices.Clone(named), func(n string) bool { return !form.holds(n) }); len(holding) > 0 {
					named = holding
				}
				return form.apply(named[rnd.IntN(len(named))])
			}
		}
	}
	return fx.Model.Provider
}

// ctxMode says when a completion's context ends.
type ctxMode uint8

const (
	ctxNever ctxMode = iota
	ctxBefore
	ctxDuring
)

var ctxModeNames = [...]string{"live", "cancelled before", "cancelled during"}

// completionCall is one drawn completion: the request, how the model's
// transport answers it and when its context ends.
type completionCall struct {
	provider, model string
	payload         drawnPayload
	mode            transportMode
	ctx             ctxMode
	// kvDesc describes the local KV prompt the payload carries, "" when
	// it carries none.
	kvDesc string
}

func (c completionCall) String() string {
	return fmt.Sprintf("%s, transport %s, context %s%s", c.payload, transportModeNames[c.mode], ctxModeNames[c.ctx], c.kvDesc)
}

// drawCompletion draws a completion of in: mostly to the fixture model, now
// and then with a blank provider or model or another provider; a payload of
// any size, or the last one again; a transport answering any way; a context
// cancelled before or during the call now and then. On an instance with a
// local KV port most completions carry a local KV prompt. A cancelled
// completion (opCancelled) is a small payload whose context ends while the
// transport waits.
func (r *modelRun) drawCompletion(in *modelInst, op modelOp, rnd *rand.Rand) completionCall {
	m := in.m
	c := completionCall{provider: m.fixture.Model.Provider, model: m.fixture.Model.ID}
	switch rnd.IntN(14) {
	case 0:
		c.provider = blankNames[rnd.IntN(len(blankNames))]
	case 1:
		c.model = blankNames[rnd.IntN(len(blankNames))]
	case 2, 3, 4:
		c.provider = drawProvider(rnd, op.seed, m.fixture, in.s.instance.PrivacyConfig)
	}
	c.payload = r.drawPayload(rnd, op.seed)
	if in.lastPayload != nil && rnd.IntN(5) == 0 {
		c.payload = drawnPayload{raw: in.lastPayload} // the same request again
	}
	c.mode = transportMode(rnd.IntN(int(transportModes)))
	if rnd.IntN(2) == 0 {
		c.mode = answerObject
	}
	if rnd.IntN(4) == 0 {
		c.ctx = ctxMode(1 + rnd.IntN(2))
	}
	if op.kind == opCancelled {
		c.provider, c.model = m.fixture.Model.Provider, m.fixture.Model.ID
		c.payload = drawnPayload{raw: json.RawMessage(`{"messages":[{"role":"user","content":"a completion given up"}]}`)}
		c.mode, c.ctx = answerBlock, ctxDuring
	}
	if in.kv != nil && op.kind != opCancelled && rnd.IntN(4) != 0 {
		// A local KV payload (LocalKVPayload), to a local provider mostly.
		ask, what := in.kv.draw(rnd, op.seed, m.fixture, in.s.instance.PrivacyConfig)
		c.provider, c.model = ask.provider, ask.model
		c.payload = drawnPayload{raw: kvPayload(ask.prompt), decoded: rnd.IntN(4) == 0}
		c.kvDesc = fmt.Sprintf(", kv prompt %s (prefix %d bytes, tokens %d/%d)", what, len(ask.prompt.Prefix), ask.prompt.PrefixTokens, ask.prompt.ContextTokens) + in.kv.arm(rnd)
	}
	return c
}

// unknownRequestIDs are capability ids outside the registry, some of them
// registry ids in other casing or with spaces, and registry ids as Go's
// string functions would take them: after U+FEFF (not trimmed by
// strings.TrimSpace) or before U+0085 (trimmed by it alone), with a Kelvin
// sign (k to strings.EqualFold), a long s (s to strings.EqualFold) or a
// dotted capital I (i to strings.ToLower).
var unknownRequestIDs = []contract.CapabilityID{"Embeddings", " compaction", "local-kv-reuse ", "LOCAL-KV-REUSE", "provider_continuation", "x-vendor", "",
	"\ufeffembeddings", "compaction\u0085", "local-\u212av-reuse", "embedding\u017f", "compact\u0130on"}

func drawRequests(rnd *rand.Rand) []contract.CapabilityRequest {
	ids := contract.CapabilityIDs()
	n := rnd.IntN(9)
	out := make([]contract.CapabilityRequest, n)
	for i := range out {
		id := ids[rnd.IntN(len(ids))]
		if rnd.IntN(4) == 0 {
			id = unknownRequestIDs[rnd.IntN(len(unknownRequestIDs))]
		}
		out[i] = contract.CapabilityRequest{ID: id, Required: rnd.IntN(2) == 0}
	}
	return out
}
