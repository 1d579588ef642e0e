package mutants

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// The mutants of what the local KV port is given (§11): the sanitised
// payload, and the request's provider and model as given. The local KV
// prompts the checks draw hold no privacy marker, so for a local
// destination the sanitised payload equals the raw one; and every model
// they draw is either a valid identifier Go's TrimSpace leaves alone or
// one §11 makes ineligible.
var pendingLocalKV = []Mutant{
	{
		Name: "kv-port-gets-raw-payload", Family: FamilyLocalKV,
		Breaks: "the port receives the sanitised payload (§11: prepare and the port get a copy of it); this adapter hands the port the payload as the caller gave it, markers and all",
		Fails:  all(conformance.CheckModel),
		port:   func(p localkv.RuntimePort, _ *env) localkv.RuntimePort { return rawPayloadPort{portShim{p}} },
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return rawPayloadToPort{decorator{a}} },
	},
	{
		Name: "kv-port-model-go-trimmed", Family: FamilyLocalKV,
		Breaks: "the port receives the request's model as given (§11); this adapter cleans it with strings.TrimSpace first, so the eligible model \"m\\u0085\" (JavaScript's trim keeps U+0085) reaches the port as \"m\"",
		Awaits: all(conformance.CheckModel, conformance.CheckLocalKVChangedPrefix),
		port: func(p localkv.RuntimePort, _ *env) localkv.RuntimePort {
			return modelCleaningPort{portShim{p}, strings.TrimSpace}
		},
		wrap: plain,
	},
}

// rawPayloadKey carries, in a completion's context, the payload as the
// caller gave it.
type rawPayloadKey struct{}

// rawPayloadToPort puts each completion's payload, as given, in its
// context for rawPayloadPort.
type rawPayloadToPort struct{ decorator }

func (m rawPayloadToPort) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if raw, err := toJSON(req.Payload); err == nil {
		ctx = context.WithValue(ctx, rawPayloadKey{}, json.RawMessage(raw))
	}
	return m.Adapter.Complete(ctx, req)
}

// rawPayloadPort hands the port the payload as the caller gave it.
type rawPayloadPort struct{ portShim }

func rawPayload(ctx context.Context, r localkv.ReuseRequest) localkv.ReuseRequest {
	if raw, ok := ctx.Value(rawPayloadKey{}).(json.RawMessage); ok {
		r.Payload = append(json.RawMessage{}, raw...)
	}
	return r
}

func (p rawPayloadPort) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	return p.RuntimePort.TryReuse(ctx, rawPayload(ctx, r))
}

func (p rawPayloadPort) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	return p.RuntimePort.FullReplay(ctx, rawPayload(ctx, r))
}

// modelCleaningPort hands the port the model as clean makes it.
type modelCleaningPort struct {
	portShim
	clean func(string) string
}

func (p modelCleaningPort) TryReuse(ctx context.Context, r localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	r.Model = p.clean(r.Model)
	return p.RuntimePort.TryReuse(ctx, r)
}

func (p modelCleaningPort) FullReplay(ctx context.Context, r localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	r.Model = p.clean(r.Model)
	return p.RuntimePort.FullReplay(ctx, r)
}
