package mutants_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// reindent re-encodes a JSON payload with other whitespace: the same JSON
// value in other bytes.
func reindent(p json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Indent(&b, p, "", "\t") != nil {
		return p
	}
	return b.Bytes()
}

// reindentingPort hands the runtime every payload re-indented.
type reindentingPort struct{ inner localkv.RuntimePort }

func (p reindentingPort) TryReuse(ctx context.Context, req localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	req.Payload = reindent(req.Payload)
	return p.inner.TryReuse(ctx, req)
}

func (p reindentingPort) FullReplay(ctx context.Context, req localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	req.Payload = reindent(req.Payload)
	return p.inner.FullReplay(ctx, req)
}

func (p reindentingPort) Shutdown(ctx context.Context) error {
	if s, ok := p.inner.(localkv.ShutdownPort); ok {
		return s.Shutdown(ctx)
	}
	return nil
}

// reindenting is the reference adapter re-indenting every payload it hands
// the transport and the local KV port: SPEC gives payload bytes no meaning,
// so it keeps the contract.
func reindenting() conformance.Factory {
	return conformance.NewFactory("re-indenting", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		tr := setup.Transport
		setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
			req.Payload = reindent(req.Payload)
			return tr.Send(ctx, req)
		})
		if setup.LocalKVPort != nil {
			setup.LocalKVPort = reindentingPort{setup.LocalKVPort}
		}
		return base().Create(ctx, setup)
	})
}

// Payloads compare as JSON values in every check: an adapter that
// re-indents what it sends passes the local KV checks (which once compared
// bytes) and the privacy and concurrency checks alike.
func TestAReindentingAdapterPasses(t *testing.T) {
	for _, c := range conformance.Checks() {
		switch {
		case c.Capability == contract.CapabilityLocalKVReuse, c.ID == conformance.CasePrivacy,
			c.ID == conformance.CheckConcurrency, c.ID == conformance.CheckPrivacyProbes:
		default:
			continue
		}
		if r := c.Run(context.Background(), reindenting(), conformance.WithSeed(seed)); r.Status != conformance.StatusPass {
			t.Errorf("%s: %s %v", c.ID, r.Status, r.Failure)
		}
	}
}
