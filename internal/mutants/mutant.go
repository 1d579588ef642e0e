package mutants

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// ErrMutant is the error mutants return where they break a rule by failing.
var ErrMutant = errors.New("mutant: deliberate failure")

// Mutant is one deliberately broken adapter and the outcome it must have.
type Mutant struct {
	// Name identifies the mutant.
	Name string
	// Breaks states the rule the mutant breaks.
	Breaks string
	// RunnerErr, when set, is the error Run must return instead of a report.
	RunnerErr error
	// Races marks a mutant with a real data race: under the race detector
	// it is run in a child process only.
	Races bool
	// Fails lists the ids of the checks that must fail (or error): in the
	// catalogue run by conformance.RunChecks and the CLI, and in the Ginkgo
	// suite, whose specs carry the checks' ids. For a mutant of Pending, the
	// checks that fail it today; for a legal variant (LegalVariants), none.
	Fails []string
	// ModelByChance marks a mutant whose rule another check enforces and
	// which the model check catches in some draws only: whether the model
	// check fails it is not part of its outcome (Fails names the model
	// check only for mutants it catches in every run).
	ModelByChance bool
	// SuiteByChance marks a mutant the catalogue's projection check
	// catches in every run but the Ginkgo suite's projection spec — a
	// property run of draws of its own — in some runs only: the suite need
	// not fail it there.
	SuiteByChance bool
	// Family names the kind of input or interleaving a mutant of Pending
	// or a legal variant is about (the family constants below).
	Family string
	// Awaits lists, for a mutant of Pending, the checks that must fail it
	// once they draw the input that shows its defect, and pass it today.
	Awaits []string
	// OverDemands lists, for a legal variant, the checks that fail it
	// today although SPEC allows what it does: demands of the kit beyond
	// SPEC, each to be lifted.
	OverDemands []string
	wrap        func(inner contract.Adapter, env *env) contract.Adapter
	// port, when set, replaces the local KV port a setup carries before
	// the base factory sees it (see localkv.go).
	port func(suite localkv.RuntimePort, env *env) localkv.RuntimePort
	// before, when set, runs before the base factory sees the setup: it may
	// refuse the setup's history (see refuse.go) or change it.
	before func(setup *conformance.Setup) error
	// instance, when set, changes the instance the base factory created
	// (after wrap).
	instance func(inst *conformance.Instance) error
	// holds makes the instance report, as the history it holds, the
	// setup's history as before left it (see refuse.go).
	holds bool
	// limits are the limits the instance declares.
	limits []gen.Family
	// after, when set, runs last: it may replace the instance's adapter
	// or reach what the base factory made (the history file, see
	// historyPath), knowing the setup the factory was given.
	after func(setup conformance.Setup, inst *conformance.Instance, e *env) error
}

// env is what a mutant may use besides the adapter it wraps.
type env struct {
	transport contract.Transport
	fixture   conformance.Fixture
	// raw, when set, replaces the payload the inner adapter hands the
	// transport (see unsanitisedPayload).
	mu  sync.Mutex
	raw json.RawMessage
	// kv is the local KV state of mutants that break local KV rules.
	kv kvEnv
	// shared is what every instance of one factory shares.
	shared *sharedEnv
}

// sharedEnv is the state every instance of one mutant factory shares, as
// an adapter's package-level variables would.
type sharedEnv struct {
	mu     sync.Mutex
	newest contract.Adapter // the adapter of the instance created last
}

// ReadsTheHistoryFile reports whether the mutant reads the history file of
// the reference adapter's conformance factory itself: its base factory
// must be that one (reference.NewConformanceFactory).
func (m Mutant) ReadsTheHistoryFile() bool { return m.after != nil }

// RunnerFails returns the contract cases conformance.Run must report
// failed: the cases among Fails, in run order (none when RunnerErr is set).
func (m Mutant) RunnerFails() []string {
	if m.RunnerErr != nil {
		return nil
	}
	var ids []string
	for _, id := range conformance.CaseIDs() {
		if slices.Contains(m.Fails, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Factory returns base's factory with every instance wrapped by the mutant.
func (m Mutant) Factory(base conformance.Factory) conformance.Factory {
	shared := &sharedEnv{}
	return conformance.NewFactory("mutant "+m.Name, func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		e := &env{transport: setup.Transport, fixture: setup.Fixture, shared: shared}
		setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
			e.mu.Lock()
			if e.raw != nil {
				req.Payload = e.raw
			}
			e.mu.Unlock()
			return e.transport.Send(ctx, req)
		})
		if setup.LocalKVPort != nil {
			e.kv.port = setup.LocalKVPort
			if m.port != nil {
				setup.LocalKVPort = m.port(setup.LocalKVPort, e)
			}
		}
		if m.before != nil {
			if err := m.before(&setup); err != nil {
				return conformance.Instance{}, err
			}
		}
		inst, err := base.Create(ctx, setup)
		if err != nil {
			return inst, err
		}
		inst.Adapter = m.wrap(inst.Adapter, e)
		if m.holds {
			inst.Held = contract.CloneMessages(setup.Fixture.Messages)
		}
		inst.Limits = m.limits
		if m.instance != nil {
			if err := m.instance(&inst); err != nil {
				return inst, err
			}
		}
		if m.after != nil {
			if err := m.after(setup, &inst, e); err != nil {
				err = errors.Join(err, inst.Adapter.Shutdown(ctx))
				if inst.Cleanup != nil {
					err = errors.Join(err, inst.Cleanup(ctx))
				}
				return conformance.Instance{}, err
			}
		}
		return inst, nil
	})
}

// decorator forwards everything, including an embedding port, to the
// adapter it wraps; mutants override the one method they break.
type decorator struct{ contract.Adapter }

// EmbeddingPort forwards the wrapped adapter's port, if any.
func (d decorator) EmbeddingPort() contract.EmbeddingPort {
	if p, ok := d.Adapter.(contract.EmbeddingPortProvider); ok {
		return p.EmbeddingPort()
	}
	return nil
}

// Catalogue returns every mutant.
func Catalogue() []Mutant {
	caught := slices.DeleteFunc(roundTwo(), func(m Mutant) bool { return len(m.Awaits) > 0 })
	return slices.Concat(catalogue, identityCatalogue, contentCatalogue, localKVCatalogue, refusalCatalogue, sourceCatalogue, fallbackCatalogue, privacyCatalogue, modelCatalogue, familyCatalogue, caught)
}

func all(ids ...string) []string { return ids }

var catalogue = []Mutant{
	{
		Name: "wrong-runtime-id", Breaks: "Identity().RuntimeID is the runtime the factory was given",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return wrongRuntimeID{decorator{a}} },
	},
	{
		Name: "wrong-contract-version", Breaks: "Identity().ContractVersion is runtime-adapter-v1",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return wrongContract{decorator{a}} },
	},
	{
		Name: "wrong-trusted-root", Breaks: "TrustedProjectRoot is the canonical root",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return wrongRoot{decorator{a}} },
	},
	{
		Name: "wrong-model-limits", Breaks: "CurrentModel reports the selected model's limits",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return wrongModel{decorator{a}} },
	},
	{
		Name: "panics-in-identity", Breaks: "adapter methods do not panic",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return panicIdentity{decorator{a}} },
	},
	{
		Name: "supported-without-version", Breaks: "a supported capability carries a version",
		Fails: all(conformance.CaseCapabilities, conformance.CheckInOrder, conformance.CheckNegotiation, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return supportedNoVersion{decorator{a}} },
	},
	{
		Name: "unsupported-without-diagnostic", Breaks: "a requested unsupported capability has a diagnostic",
		Fails: all(conformance.CaseCapabilities, conformance.CheckInOrder, conformance.CheckNegotiation, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return noNegotiationDiagnostics{decorator{a}} },
	},
	{
		Name: "required-treated-as-optional", Breaks: "a required request is negotiated as required",
		Fails: all(conformance.CheckNegotiation, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return ignoreRequired{decorator{a}} },
	},
	{
		Name: "drops-a-message", Breaks: "a snapshot holds every canonical message",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CaseRebuild, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return dropMessage{decorator{a}} },
	},
	{
		Name: "reorders-messages", Breaks: "a snapshot keeps history order",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CaseRebuild, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return reorder{decorator{a}} },
	},
	{
		Name: "invents-a-message", Breaks: "a snapshot never invents history",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CaseRebuild, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return invent{decorator{a}} },
	},
	{
		Name: "incomplete-exchange-marked-complete", Breaks: "a call still waiting for its result is in an incomplete group",
		// The model check catches it in most runs (28 of seeds 1–30);
		// projection's fixed histories always do.
		Fails:         all(conformance.CheckProjection),
		ModelByChance: true,
		wrap:          func(a contract.Adapter, _ *env) contract.Adapter { return allComplete{decorator{a}} },
	},
	{
		Name: "splits-parallel-batch", Breaks: "a parallel tool batch stays in one atomic group",
		Fails: all(conformance.CheckProjection, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return splitBatch{decorator{a}} },
	},
	{
		Name: "rebuild-changes-revision", Breaks: "rebuilding keeps the revision of an unchanged history",
		Fails: all(conformance.CaseRebuild, conformance.CheckInOrder, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return rebuildRevision{decorator{a}} },
	},
	{
		Name: "forwards-unsanitised-payload", Breaks: "the transport receives the sanitised payload only",
		Fails: all(conformance.CasePrivacy, conformance.CheckInOrder, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			return &unsanitised{decorator: decorator{a}, env: e}
		},
	},
	{
		Name: "transport-after-privacy-failure", Breaks: "the transport is not called when privacy enforcement fails",
		Fails: all(conformance.CasePrivacy, conformance.CheckInOrder, conformance.CheckFallbacks, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:  func(a contract.Adapter, e *env) contract.Adapter { return transportAfterFailure{decorator{a}, e} },
	},
	{
		Name: "remote-reported-local", Breaks: "enforcement reports the destination it decided",
		Fails: all(conformance.CasePrivacy, conformance.CheckInOrder, conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return localDestination{decorator{a}} },
	},
	{
		Name: "sanitised-reported-unchanged", Breaks: "enforcement reports that it changed the payload",
		Fails: all(conformance.CasePrivacy, conformance.CheckInOrder, conformance.CheckPrivacyEngine, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return unchanged{decorator{a}} },
	},
	{
		Name: "no-diagnostic-on-transport-failure", Breaks: "a transport failure records completion-transport-failed",
		Fails: all(conformance.CaseFallback, conformance.CheckInOrder, conformance.CheckFallbacks, conformance.CheckModel, conformance.CheckBoundedDiagnostics),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return hideDiagnostic{decorator{a}, contract.DiagnosticCompletionTransportFailed}
		},
	},
	{
		Name: "transport-error-reported-completed", Breaks: "a transport failure is a fallback, never a completion",
		Fails: all(conformance.CaseFallback, conformance.CheckInOrder, conformance.CheckFallbacks, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return transportCompleted{decorator{a}} },
	},
	{
		Name: "transport-failure-not-retryable", Breaks: "a transport-failed fallback is retryable",
		Fails: all(conformance.CaseFallback, conformance.CheckInOrder, conformance.CheckFallbacks, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return notRetryable{decorator{a}} },
	},
	{
		Name: "second-shutdown-errors", Breaks: "shutdown is idempotent",
		Fails: all(conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckClosed, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown, conformance.CheckLocalKVShutdownOnce, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &secondShutdown{decorator: decorator{a}} },
	},
	{
		Name: "shutdown-errors-once-closed", Breaks: "shutdown is idempotent (the runner's final shutdown fails too)",
		RunnerErr: conformance.ErrShutdown, Fails: all(conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckClosed, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown, conformance.CheckLocalKVShutdownOnce, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter { return &closedShutdown{decorator: decorator{a}} },
	},
	{
		Name: "reads-history-after-shutdown", Breaks: "history reads fail after shutdown",
		Fails: all(conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckClosed, conformance.CheckSourceCorrupt, conformance.CheckConcurrentShutdown, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &staleSnapshot{decorator: decorator{a}} },
	},
	{
		Name: "rebuilds-after-shutdown", Breaks: "rebuilding fails after shutdown",
		Fails: all(conformance.CheckClosed, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &staleRebuild{decorator: decorator{a}} },
	},
	{
		Name: "completes-after-shutdown", Breaks: "completions fall back with adapter-closed after shutdown",
		Fails: all(conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return closedCompletes{decorator{a}} },
	},
	{
		Name: "transport-called-after-shutdown", Breaks: "a closed adapter never reaches the transport",
		Fails: all(conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckModel),
		wrap:  func(a contract.Adapter, e *env) contract.Adapter { return closedSends{decorator{a}, e} },
	},
	{
		Name: "no-adapter-closed-diagnostic", Breaks: "shutdown records adapter-closed",
		Fails: all(conformance.CaseLifecycle, conformance.CheckInOrder, conformance.CheckShutdownOnce, conformance.CheckConcurrentShutdown, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return hideDiagnostic{decorator{a}, contract.DiagnosticAdapterClosed}
		},
	},
	{
		Name: "leaks-probe-into-diagnostic", Breaks: "diagnostics are metadata only",
		Fails: all(conformance.CheckDiagnosticsPrivacy, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &leakyDiagnostics{decorator: decorator{a}} },
	},
	{
		Name: "unbounded-diagnostics", Breaks: "diagnostics are a bounded list",
		Fails: all(conformance.CheckBoundedDiagnostics, conformance.CheckFallbacks, conformance.CheckClosedFirst, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &unboundedDiagnostics{decorator: decorator{a}}
		},
	},
	{
		Name: "races-under-concurrency", Breaks: "an adapter is safe for concurrent use", Races: true,
		Fails: all(conformance.CheckConcurrency),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &racySnapshot{decorator: decorator{a}} },
	},
	{
		Name: "zero-vector-embeddings", Breaks: "a declared embedding port embeds texts into non-zero vectors",
		Fails: all(conformance.CheckEmbeddingPort, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return zeroEmbeddings{decorator{a}} },
	},
	{
		Name: "embeddings-truncate-large-batches", Breaks: "an embedding port returns one vector per text, whatever the batch size",
		Fails: all(conformance.CheckEmbeddingPort, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return truncatingEmbeddings{decorator{a}} },
	},
	{
		Name: "embeddings-declared-without-port", Breaks: "an adapter declaring embeddings exposes its port",
		Fails: all(conformance.CheckEmbeddingPort, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return portlessEmbeddings{decorator{a}} },
	},
	{
		Name: "reference-hides-its-embedding-port", Breaks: "the reference adapter declares embeddings supported exactly when a port is configured (§12)",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return hiddenEmbeddings{decorator{a}} },
	},
}

type wrongRuntimeID struct{ decorator }

func (m wrongRuntimeID) Identity() contract.Identity {
	id := m.Adapter.Identity()
	id.RuntimeID += "-elsewhere"
	return id
}

type wrongContract struct{ decorator }

func (m wrongContract) Identity() contract.Identity {
	id := m.Adapter.Identity()
	id.ContractVersion = "runtime-adapter-v0"
	return id
}

type wrongRoot struct{ decorator }

func (m wrongRoot) TrustedProjectRoot(ctx context.Context) (string, error) {
	root, err := m.Adapter.TrustedProjectRoot(ctx)
	return root + "/sub/..", err
}

type wrongModel struct{ decorator }

func (m wrongModel) CurrentModel(ctx context.Context) (*contract.ModelDescriptor, error) {
	d, err := m.Adapter.CurrentModel(ctx)
	if d != nil {
		c := *d
		c.ContextWindow *= 2
		d = &c
	}
	return d, err
}

type panicIdentity struct{ decorator }

func (panicIdentity) Identity() contract.Identity { panic("mutant: identity unavailable") }

type supportedNoVersion struct{ decorator }

func (m supportedNoVersion) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	n := m.Adapter.NegotiateCapabilities(reqs)
	for i, st := range n.Statuses {
		if !st.Supported {
			n.Statuses[i].Supported, n.Statuses[i].Version, n.Statuses[i].Reason = true, "", ""
			n.Diagnostics = slices.DeleteFunc(n.Diagnostics, func(d contract.Diagnostic) bool { return d.Capability == st.ID })
			break
		}
	}
	return n
}

type noNegotiationDiagnostics struct{ decorator }

func (m noNegotiationDiagnostics) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	n := m.Adapter.NegotiateCapabilities(reqs)
	n.Diagnostics = []contract.Diagnostic{}
	return n
}

type ignoreRequired struct{ decorator }

func (m ignoreRequired) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	optional := make([]contract.CapabilityRequest, len(reqs))
	for i, r := range reqs {
		optional[i] = contract.CapabilityRequest{ID: r.ID}
	}
	return m.Adapter.NegotiateCapabilities(optional)
}

type dropMessage struct{ decorator }

func (m dropMessage) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil && len(s.Messages) > 0 {
		s.Messages = s.Messages[:len(s.Messages)-1]
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	}
	return s, err
}

// reorder swaps the first two messages of every snapshot.
type reorder struct{ decorator }

func (m reorder) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil && len(s.Messages) > 1 {
		s.Messages[0], s.Messages[1] = s.Messages[1], s.Messages[0]
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	}
	return s, err
}

// invent appends a synthetic assistant message to every snapshot.
type invent struct{ decorator }

func (m invent) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil {
		entry := "invented"
		s.Messages = append(s.Messages, contract.Message{
			ID: s.SessionID + ":" + entry, SourceEntryID: entry, Role: contract.RoleAssistant,
			Blocks:     []contract.Block{&contract.TextBlock{Text: "summary"}},
			Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: s.SessionID, EntryID: entry, RuntimeID: new(s.RuntimeID)},
			Flags:      contract.Flags{Synthetic: new(true)},
		})
	}
	return s, err
}

// allComplete marks every tool atomic group complete.
type allComplete struct{ decorator }

func (m allComplete) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	for i := range s.ToolAtomicGroups {
		s.ToolAtomicGroups[i].Complete = true
	}
	return s, err
}

type splitBatch struct{ decorator }

// SnapshotHistory gives every call of a multi-call group a group of its own.
func (m splitBatch) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	var groups []contract.ToolAtomicGroup
	for _, g := range s.ToolAtomicGroups {
		if len(g.ToolCallIDs) < 2 {
			groups = append(groups, g)
			continue
		}
		for _, call := range g.ToolCallIDs {
			groups = append(groups, contract.ToolAtomicGroup{ID: g.ID + "/" + call, MessageIDs: g.MessageIDs, ToolCallIDs: []string{call}, Complete: g.Complete})
		}
	}
	s.ToolAtomicGroups = groups
	return s, nil
}

type rebuildRevision struct{ decorator }

func (m rebuildRevision) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	s.Revision += "-rebuilt"
	return s, err
}

// unsanitised lets the inner adapter sanitise (so failures still fail
// closed) but has the transport receive the raw payload instead. It runs
// one completion at a time, so concurrent ones never share the raw slot.
type unsanitised struct {
	decorator
	env    *env
	serial sync.Mutex
}

func (m *unsanitised) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	m.serial.Lock()
	defer m.serial.Unlock()
	raw, err := json.Marshal(req.Payload)
	if err != nil {
		return m.Adapter.Complete(ctx, req)
	}
	m.env.mu.Lock()
	m.env.raw = raw
	m.env.mu.Unlock()
	defer func() {
		m.env.mu.Lock()
		m.env.raw = nil
		m.env.mu.Unlock()
	}()
	return m.Adapter.Complete(ctx, req)
}

type transportAfterFailure struct {
	decorator
	env *env
}

func (m transportAfterFailure) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Code == contract.FallbackPrivacyEnforcementFail {
		_, _ = m.env.transport.Send(ctx, contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: contract.DestinationRemote, Payload: json.RawMessage(`{}`)})
	}
	return r
}

type unchanged struct{ decorator }

func (m unchanged) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	r.Changed = false
	return r, err
}

type localDestination struct{ decorator }

func (m localDestination) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	r.Destination = contract.DestinationLocal
	return r, err
}

type hideDiagnostic struct {
	decorator
	code string
}

func (m hideDiagnostic) Diagnostics() []contract.Diagnostic {
	return slices.DeleteFunc(m.Adapter.Diagnostics(), func(d contract.Diagnostic) bool { return d.Code == m.code })
}

type transportCompleted struct{ decorator }

func (m transportCompleted) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Code == contract.FallbackTransportFailed {
		return contract.Completed(json.RawMessage(`null`), contract.PrivacySummary{Provider: req.Provider, Destination: contract.DestinationRemote}, nil)
	}
	return r
}

type notRetryable struct{ decorator }

func (m notRetryable) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Code == contract.FallbackTransportFailed {
		r.Retryable = false
	}
	return r
}

type secondShutdown struct {
	decorator
	mu    sync.Mutex
	calls int
}

func (m *secondShutdown) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	err := m.Adapter.Shutdown(ctx)
	if n == 2 {
		return ErrMutant
	}
	return err
}

type closedShutdown struct {
	decorator
	mu     sync.Mutex
	closed bool
}

func (m *closedShutdown) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	was := m.closed
	m.closed = true
	m.mu.Unlock()
	if was {
		return ErrMutant
	}
	return m.Adapter.Shutdown(ctx)
}

// staleCache remembers the last snapshot an adapter gave and serves it when
// the adapter refuses one.
type staleCache struct {
	mu   sync.Mutex
	last *contract.HistorySnapshot
}

func (c *staleCache) serve(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.last = &s
	} else if c.last != nil {
		return *c.last, nil
	}
	return s, err
}

// staleSnapshot serves its last snapshot when the adapter refuses one.
type staleSnapshot struct {
	decorator
	cache staleCache
}

func (m *staleSnapshot) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.cache.serve(m.Adapter.SnapshotHistory(ctx))
}

func (m *staleSnapshot) Shutdown(ctx context.Context) error {
	_, _ = m.SnapshotHistory(ctx)
	return m.Adapter.Shutdown(ctx)
}

// staleRebuild serves its last rebuild when the adapter refuses one.
type staleRebuild struct {
	decorator
	cache staleCache
}

func (m *staleRebuild) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.cache.serve(m.Adapter.RebuildDerivedState(ctx))
}

func (m *staleRebuild) Shutdown(ctx context.Context) error {
	_, _ = m.RebuildDerivedState(ctx)
	return m.Adapter.Shutdown(ctx)
}

type closedCompletes struct{ decorator }

func (m closedCompletes) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Code == contract.FallbackAdapterClosed {
		return contract.Completed(json.RawMessage(`null`), contract.PrivacySummary{Provider: req.Provider, Destination: contract.DestinationRemote}, nil)
	}
	return r
}

// closedSends still calls the transport after shutdown, then reports
// adapter-closed as it should.
type closedSends struct {
	decorator
	env *env
}

func (m closedSends) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Code == contract.FallbackAdapterClosed {
		_, _ = m.env.transport.Send(ctx, contract.TransportRequest{Provider: req.Provider, Model: req.Model, Destination: contract.DestinationRemote, Payload: json.RawMessage(`{}`)})
	}
	return r
}

// leakyDiagnostics records a diagnostic quoting the payload of every
// completion that fails.
type leakyDiagnostics struct {
	decorator
	mu    sync.Mutex
	extra []contract.Diagnostic
}

func (m *leakyDiagnostics) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusFallback {
		raw, _ := json.Marshal(req.Payload)
		m.mu.Lock()
		m.extra = append(m.extra[max(0, len(m.extra)-9):], contract.Diagnostic{Code: "completion-failed", Severity: contract.SeverityWarning, Message: "completion failed for " + string(raw)})
		m.mu.Unlock()
	}
	return r
}

func (m *leakyDiagnostics) Diagnostics() []contract.Diagnostic {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(m.Adapter.Diagnostics(), m.extra...)
}

// unboundedDiagnostics keeps a diagnostic for every failed completion.
type unboundedDiagnostics struct {
	decorator
	mu    sync.Mutex
	extra []contract.Diagnostic
}

func (m *unboundedDiagnostics) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusFallback {
		m.mu.Lock()
		m.extra = append(m.extra, contract.Diagnostic{Code: contract.DiagnosticCompletionTransportFailed, Severity: contract.SeverityWarning, Message: "Completion transport failed"})
		m.mu.Unlock()
	}
	return r
}

func (m *unboundedDiagnostics) Diagnostics() []contract.Diagnostic {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(m.Adapter.Diagnostics(), m.extra...)
}

// racySnapshot copies every snapshot's messages through one shared,
// unsynchronised buffer, so concurrent snapshots corrupt one another.
type racySnapshot struct {
	decorator
	scratch []contract.Message
}

func (m *racySnapshot) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	m.scratch = m.scratch[:0]
	for _, msg := range s.Messages {
		m.scratch = append(m.scratch, msg)
		time.Sleep(time.Microsecond)
	}
	s.Messages = slices.Clone(m.scratch)
	return s, nil
}

// truncatingEmbeddings declares an embedding port that embeds at most 64
// texts per call.
type truncatingEmbeddings struct{ decorator }

func (m truncatingEmbeddings) CapabilityDeclarations() []contract.CapabilityDeclaration {
	return withEmbeddings(m.Adapter.CapabilityDeclarations())
}

func (m truncatingEmbeddings) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(m.CapabilityDeclarations(), reqs)
}

func (truncatingEmbeddings) EmbeddingPort() contract.EmbeddingPort { return truncatingPort{} }

type truncatingPort struct{}

func (truncatingPort) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "mutant", Model: "ones", Dimensions: 4, Destination: contract.DestinationLocal}
}

func (truncatingPort) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, min(len(texts), 64))
	for i := range out {
		out[i] = []float64{1, 1, 1, 1}
	}
	return out, nil
}

// zeroEmbeddings declares an embedding port whose vectors are all zeros.
type zeroEmbeddings struct{ decorator }

func (m zeroEmbeddings) CapabilityDeclarations() []contract.CapabilityDeclaration {
	return withEmbeddings(m.Adapter.CapabilityDeclarations())
}

func (m zeroEmbeddings) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(m.CapabilityDeclarations(), reqs)
}

func (zeroEmbeddings) EmbeddingPort() contract.EmbeddingPort { return zeroPort{} }

type zeroPort struct{}

func (zeroPort) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "mutant", Model: "zero", Dimensions: 4, Destination: contract.DestinationLocal}
}

func (zeroPort) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i := range out {
		out[i] = make([]float64, 4)
	}
	return out, nil
}

// hiddenEmbeddings is the reference adapter given an embedding port that
// declares embeddings unsupported, with the reason of one given none. (The
// port is zeroPort: with the capability declared unsupported, no check
// asks it for vectors.)
type hiddenEmbeddings struct{ decorator }

func (hiddenEmbeddings) EmbeddingPort() contract.EmbeddingPort { return zeroPort{} }

func (m hiddenEmbeddings) CapabilityDeclarations() []contract.CapabilityDeclaration {
	out := slices.DeleteFunc(slices.Clone(m.Adapter.CapabilityDeclarations()), func(d contract.CapabilityDeclaration) bool {
		return strings.EqualFold(d.ID, contract.CapabilityEmbeddings)
	})
	return append(out, contract.CapabilityDeclaration{ID: contract.CapabilityEmbeddings, Reason: "no embedding port was configured"})
}

func (m hiddenEmbeddings) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(m.CapabilityDeclarations(), reqs)
}

// portlessEmbeddings declares embeddings but exposes no port.
type portlessEmbeddings struct{ decorator }

func (m portlessEmbeddings) CapabilityDeclarations() []contract.CapabilityDeclaration {
	return withEmbeddings(m.Adapter.CapabilityDeclarations())
}

func (m portlessEmbeddings) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(m.CapabilityDeclarations(), reqs)
}

func (portlessEmbeddings) EmbeddingPort() contract.EmbeddingPort { return nil }

func withEmbeddings(ds []contract.CapabilityDeclaration) []contract.CapabilityDeclaration {
	out := slices.DeleteFunc(slices.Clone(ds), func(d contract.CapabilityDeclaration) bool {
		return strings.EqualFold(d.ID, contract.CapabilityEmbeddings)
	})
	return append(out, contract.CapabilityDeclaration{ID: contract.CapabilityEmbeddings, Supported: true, Version: "embedding-port-v1"})
}
