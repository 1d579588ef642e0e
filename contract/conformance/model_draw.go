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

// drawProvider draws the provider of a request: mostly the fixture
// model's, or a realistic one or a look-alike, or one the declared privacy
// configuration names (its local providers above all), now and then a
// blank one.
func drawProvider(rnd *rand.Rand, seed int, fx Fixture, cfg *privacy.Config) string {
	switch rnd.IntN(12) {
	case 0:
		return blankNames[rnd.IntN(len(blankNames))]
	case 1, 2, 3:
		return gen.Provider().Example(seed)
	case 4, 5:
		if cfg != nil {
			named := slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders)))
			if len(named) > 0 {
				p := named[rnd.IntN(len(named))]
				if rnd.IntN(2) == 0 {
					p = " " + strings.ToUpper(p)
				}
				return p
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
// registry ids in other casing or with spaces.
var unknownRequestIDs = []contract.CapabilityID{"Embeddings", " compaction", "local-kv-reuse ", "LOCAL-KV-REUSE", "provider_continuation", "x-vendor", ""}

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
