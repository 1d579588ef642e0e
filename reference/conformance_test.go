package reference

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

const (
	probePrivate    = "DS4_CONFORMANCE_PRIVATE_VALUE"
	probeCredential = "sk-conformance-credential"
)

func probePayload() any {
	return map[string]any{"messages": []any{map[string]any{
		"role":    "user",
		"content": "[ds4:local-only]" + probePrivate + "[/ds4:local-only] public " + probeCredential + "-123456",
	}}}
}

func leaksProbe(b []byte) bool {
	return strings.Contains(string(b), probePrivate) || strings.Contains(string(b), probeCredential)
}

// TestConformanceFactoryCases checks the seven conformance cases directly
// against an instance from NewConformanceFactory, in the runner's order.
func TestConformanceFactoryCases(t *testing.T) {
	ctx := context.Background()
	fx := conformance.NewFixture()
	tr := conformance.NewRecordingTransport()
	f := NewConformanceFactory()
	if f.Name() != AdapterName {
		t.Fatalf("factory name %q", f.Name())
	}
	inst, err := f.Create(ctx, conformance.Setup{Fixture: fx, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	a := inst.Adapter
	path := a.(*Adapter).store.path
	defer func() {
		a.Shutdown(ctx)
		if err := inst.Cleanup(ctx); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Error("cleanup left the history behind")
		}
	}()

	t.Run("identity", func(t *testing.T) {
		id := a.Identity()
		if id.ContractVersion != contract.ContractVersion || id.RuntimeID != fx.RuntimeID || contract.IsBlank(id.AdapterName) || contract.IsBlank(id.AdapterVersion) {
			t.Fatalf("identity %+v", id)
		}
		root, err := a.TrustedProjectRoot(ctx)
		if err != nil || root != inst.ExpectedProjectRoot {
			t.Fatalf("root %q (%v), want %q", root, err, inst.ExpectedProjectRoot)
		}
		m, err := a.CurrentModel(ctx)
		if err != nil || m == nil || m.Provider != fx.Model.Provider || m.ID != fx.Model.ID || m.ContextWindow != fx.Model.ContextWindow {
			t.Fatalf("model %+v (%v)", m, err)
		}
	})

	t.Run("capabilities", func(t *testing.T) {
		var reqs []contract.CapabilityRequest
		for _, id := range contract.CapabilityIDs() {
			reqs = append(reqs, contract.CapabilityRequest{ID: id})
		}
		n := a.NegotiateCapabilities(reqs)
		if n.ContractVersion != contract.ContractVersion || len(n.Statuses) != 4 {
			t.Fatalf("negotiation %+v", n)
		}
		for _, s := range n.Statuses {
			if s.Supported && s.Version == "" || !s.Supported && s.Reason == "" {
				t.Fatalf("status %+v", s)
			}
			named := slices.ContainsFunc(n.Diagnostics, func(d contract.Diagnostic) bool { return d.Capability == s.ID })
			if !s.Supported && !named {
				t.Fatalf("no diagnostic names %s", s.ID)
			}
		}
	})

	var base contract.HistorySnapshot
	t.Run("canonical-history", func(t *testing.T) {
		s, err := a.SnapshotHistory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		base = s
		ids := make([]string, len(s.Messages))
		for i := range s.Messages {
			ids[i] = s.Messages[i].ID
		}
		if s.RuntimeID != fx.RuntimeID || s.SessionID != fx.SessionID || s.ProjectRoot != inst.ExpectedProjectRoot || !reflect.DeepEqual(ids, fx.MessageIDs()) {
			t.Fatalf("snapshot identity or ids differ: %v", ids)
		}
		if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
			t.Fatalf("issues %+v", issues)
		}
		g := s.ToolAtomicGroups
		if len(g) != 1 || !g[0].Complete || !reflect.DeepEqual(g[0].ToolCallIDs, []string{"tool-call-1"}) || !reflect.DeepEqual(g, contract.BuildToolAtomicGroups(s.Messages)) {
			t.Fatalf("groups %+v", g)
		}
	})

	t.Run("rebuild", func(t *testing.T) {
		r, err := a.RebuildDerivedState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(contract.ValidateHistorySnapshot(&r)) != 0 || r.Revision != base.Revision || r.SessionID != base.SessionID ||
			r.ProjectRoot != base.ProjectRoot || !reflect.DeepEqual(r.Messages, base.Messages) || !reflect.DeepEqual(r.ToolAtomicGroups, base.ToolAtomicGroups) {
			t.Fatal("rebuilt snapshot differs from the canonical one")
		}
	})

	t.Run("privacy", func(t *testing.T) {
		res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: probePayload()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Destination != contract.DestinationRemote || !res.Changed || leaksProbe(res.Payload) {
			t.Fatalf("enforcement: destination %s changed %v leaked %v", res.Destination, res.Changed, leaksProbe(res.Payload))
		}
		before := tr.Len()
		r := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: probePayload()})
		if r.Status != contract.StatusCompleted || tr.Len() != before+1 {
			t.Fatalf("completion %+v, %d transport calls", r, tr.Len()-before)
		}
		sent := tr.Requests()[tr.Len()-1]
		if sent.Destination != contract.DestinationRemote || leaksProbe(sent.Payload) || r.Privacy.Destination != contract.DestinationRemote {
			t.Fatal("transport saw a remote request that is not sanitised")
		}
		r = a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: map[string]any{"bad": func() {}}})
		if r.Status != contract.StatusFallback || r.Code != contract.FallbackPrivacyEnforcementFail || tr.Len() != before+1 {
			t.Fatalf("uninspectable payload: %+v", r)
		}
	})

	t.Run("fallback", func(t *testing.T) {
		before := tr.Len()
		tr.FailNext()
		r := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: probePayload()})
		if r.Status != contract.StatusFallback || r.Code != contract.FallbackTransportFailed || !r.Retryable || tr.Len() != before {
			t.Fatalf("result %+v", r)
		}
		if !hasDiagnostic(a.(*Adapter), contract.DiagnosticCompletionTransportFailed) {
			t.Fatal("no completion-transport-failed diagnostic")
		}
	})

	t.Run("lifecycle", func(t *testing.T) {
		if a.Shutdown(ctx) != nil || a.Shutdown(ctx) != nil {
			t.Fatal("shutdown failed")
		}
		if r := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID}); r.Code != contract.FallbackAdapterClosed {
			t.Fatalf("result %+v", r)
		}
		if _, err := a.SnapshotHistory(ctx); err == nil {
			t.Fatal("snapshot after shutdown")
		}
		if !hasDiagnostic(a.(*Adapter), contract.DiagnosticAdapterClosed) {
			t.Fatal("no adapter-closed diagnostic")
		}
	})

	diags, _ := json.Marshal(a.Diagnostics())
	if leaksProbe(diags) {
		t.Fatal("diagnostics carry a probe")
	}
}

func TestConformanceFactoryCleansUpOnFailure(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fx := conformance.NewFixture()
	fx.Messages = append(fx.Messages, fx.Messages[0]) // does not validate
	_, err := NewConformanceFactory().Create(context.Background(), conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if !errors.Is(err, ErrHistoryInvalid) {
		t.Fatalf("error %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("a failed Create left %d entries behind", len(left))
	}
}
