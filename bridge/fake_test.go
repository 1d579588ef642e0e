package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// fakeAdapter is a small in-memory adapter for protocol tests: it projects
// the fixture as given, "sanitises" by dropping the payload, and panics on
// demand.
type fakeAdapter struct {
	fx        conformance.Fixture
	root      string
	transport contract.Transport

	mu     sync.Mutex
	closed bool
	diags  []contract.Diagnostic
}

var errFakeClosed = errors.New("fake adapter is closed")

func (a *fakeAdapter) Identity() contract.Identity {
	return contract.Identity{RuntimeID: a.fx.RuntimeID, AdapterName: "fake", AdapterVersion: "1", ContractVersion: contract.ContractVersion}
}

func (a *fakeAdapter) CapabilityDeclarations() []contract.CapabilityDeclaration {
	return []contract.CapabilityDeclaration{
		{ID: "compaction", Supported: true, Version: "compaction-v1"},
		{ID: "embeddings", Supported: false, Reason: "no embedding port"},
	}
}

func (a *fakeAdapter) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(a.CapabilityDeclarations(), reqs)
}

func (a *fakeAdapter) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

func (a *fakeAdapter) SnapshotHistory(context.Context) (contract.HistorySnapshot, error) {
	if a.isClosed() {
		return contract.HistorySnapshot{}, errFakeClosed
	}
	return contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: a.fx.RuntimeID,
		SessionID: a.fx.SessionID, Revision: "r1", ProjectRoot: a.root, Messages: a.fx.Messages,
		ToolAtomicGroups: contract.BuildToolAtomicGroups(a.fx.Messages)}, nil
}

func (a *fakeAdapter) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return a.SnapshotHistory(ctx)
}

func (a *fakeAdapter) CurrentModel(context.Context) (*contract.ModelDescriptor, error) {
	if a.isClosed() {
		return nil, errFakeClosed
	}
	m := a.fx.Model
	return &m, nil
}

func (a *fakeAdapter) TrustedProjectRoot(context.Context) (string, error) {
	if a.isClosed() {
		return "", errFakeClosed
	}
	return a.root, nil
}

func (a *fakeAdapter) EnforcePrivacy(_ context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	if req.Provider == "panic" {
		panic("fake adapter panics on request")
	}
	if _, err := json.Marshal(req.Payload); err != nil {
		a.record("privacy-enforcement-failed", contract.SeverityError)
		return contract.PrivacyResult{}, errors.New("privacy enforcement failed closed")
	}
	return contract.PrivacyResult{Provider: req.Provider, Destination: contract.DestinationRemote,
		Payload: json.RawMessage(`{"sanitised":true}`), Changed: true}, nil
}

func (a *fakeAdapter) record(code string, sev contract.Severity) {
	a.mu.Lock()
	a.diags = append(a.diags, contract.Diagnostic{Code: code, Severity: sev, Message: "fake " + code})
	a.mu.Unlock()
}

func (a *fakeAdapter) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if a.isClosed() {
		return contract.Fallback(contract.FallbackAdapterClosed, "closed", false)
	}
	p, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: req.Provider, Payload: req.Payload})
	if err != nil {
		return contract.Fallback(contract.FallbackPrivacyEnforcementFail, "privacy enforcement failed closed", false)
	}
	out, err := a.transport.Send(ctx, contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: p.Destination, Payload: p.Payload})
	if err != nil {
		a.record("completion-transport-failed", contract.SeverityWarning)
		return contract.Fallback(contract.FallbackTransportFailed, "completion transport failed", true)
	}
	return contract.Completed(out, p.Summary(), nil)
}

func (a *fakeAdapter) Diagnostics() []contract.Diagnostic {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]contract.Diagnostic(nil), a.diags...)
}

func (a *fakeAdapter) Shutdown(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		a.closed = true
		a.diags = append(a.diags, contract.Diagnostic{Code: "adapter-closed", Severity: contract.SeverityInfo, Message: "closed"})
	}
	return nil
}

// fakeFactory creates fakeAdapters; cleanups counts cleanups run.
type fakeFactory struct {
	mu       sync.Mutex
	cleanups int
	fail     bool
}

func (f *fakeFactory) Name() string { return "fake-factory" }

func (f *fakeFactory) Create(_ context.Context, s conformance.Setup) (conformance.Instance, error) {
	if f.fail {
		return conformance.Instance{}, errors.New("fake factory refuses")
	}
	a := &fakeAdapter{fx: s.Fixture, root: "/fake/root", transport: s.Transport}
	return conformance.Instance{Adapter: a, ExpectedProjectRoot: a.root, Cleanup: func(context.Context) error {
		f.mu.Lock()
		f.cleanups++
		f.mu.Unlock()
		return nil
	}}, nil
}

func (f *fakeFactory) cleaned() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cleanups
}
