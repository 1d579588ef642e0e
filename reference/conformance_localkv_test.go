package reference

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// With a local KV port in the setup, the conformance factory's adapter
// declares local-kv-reuse, uses that port, enabled, for the suite's payload
// shape, and shuts it down; without one it declares the capability
// unsupported.
func TestConformanceFactoryLocalKV(t *testing.T) {
	ctx := context.Background()
	f := NewConformanceFactory()
	create := func(setup conformance.Setup) (*Adapter, func()) {
		t.Helper()
		inst, err := f.Create(ctx, setup)
		if err != nil {
			t.Fatal(err)
		}
		return inst.Adapter.(*Adapter), func() {
			inst.Adapter.Shutdown(ctx)
			if err := inst.Cleanup(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	fx := conformance.NewFixture()

	plain, done := create(conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if plain.LocalKVPort() != nil || plain.CapabilityDeclarations()[3].Supported {
		t.Fatal("without a port the adapter declares local KV reuse")
	}
	done()

	port, tr := conformance.NewRecordingKVPort(), conformance.NewRecordingTransport()
	a, done := create(conformance.Setup{Fixture: fx, Transport: tr, LocalKVPort: port})
	if a.LocalKVPort() != port {
		t.Fatal("the adapter does not use the setup's port")
	}
	if d := a.CapabilityDeclarations()[3]; !d.Supported || d.Version != contract.LocalKVRuntimePortVersion {
		t.Fatalf("declaration %+v", d)
	}
	payload := conformance.LocalKVPayload(conformance.LocalKVPrompt{Prefix: "system prompt",
		ToolOptions: json.RawMessage(`[{"name":"read"}]`), PrefixTokens: 4, ContextTokens: 9})
	req := contract.CompletionRequest{Provider: conformance.LocalKVProvider, Model: conformance.LocalKVModel, Payload: payload}
	first, second := a.Complete(ctx, req), a.Complete(ctx, req)
	if first.LocalKV == nil || first.LocalKV.Mode != contract.LocalKVFullReplay || string(first.Output) != conformance.LocalKVReplayOutput {
		t.Fatalf("first completion %+v", first)
	}
	if second.LocalKV == nil || second.LocalKV.Mode != contract.LocalKVHit || string(second.Output) != conformance.LocalKVHitOutput {
		t.Fatalf("second completion %+v", second)
	}
	if tr.Len() != 0 {
		t.Fatal("the transport was called")
	}
	// Other payloads take the ordinary transport.
	if r := a.Complete(ctx, contract.CompletionRequest{Provider: conformance.LocalKVProvider, Model: conformance.LocalKVModel,
		Payload: json.RawMessage(`{"messages":[]}`)}); r.LocalKV != nil || tr.Len() != 1 {
		t.Fatalf("plain payload: %+v", r)
	}
	done()
	if port.Shutdowns() != 1 {
		t.Fatalf("port shut down %d times", port.Shutdowns())
	}
}
