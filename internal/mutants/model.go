package mutants

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The mutants of families no fixed check names: outputs no check compares,
// inputs the checks keep small, behaviour that starts at the n-th call or
// crosses instances, and source changes other than one plain append. They
// are the slips an adapter author makes; the model check is what catches
// them (or, where it cannot, says so in its expected checks).
var modelCatalogue = []Mutant{
	{
		Name: "groups-kept-from-an-earlier-read", Breaks: "a snapshot's tool atomic groups are those of the history as it is now: a result appended after its call was read joins the call's group",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &staleGroups{decorator: decorator{a}} },
	},
	{
		Name: "privacy-summary-counts-dropped", Breaks: "a completed result reports the enforcement's counts",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return summaryCountsDropped{decorator{a}} },
	},
	{
		Name: "transport-provider-normalised", Breaks: "the transport receives the provider as given, not trimmed or lower-cased",
		Fails: all(conformance.CheckModel),
		before: wrapTransport(func(req contract.TransportRequest) contract.TransportRequest {
			req.Provider = strings.ToLower(strings.TrimSpace(req.Provider))
			return req
		}),
		wrap: plain,
	},
	{
		Name: "non-object-output-wrapped", Breaks: "a completion passes the transport's output back unchanged, whatever JSON value it is",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return wrapNonObject{decorator{a}} },
	},
	{
		Name: "partial-output-completed", Breaks: "a transport that returns an error fails the completion, even with output",
		Fails: all(conformance.CheckModel),
		before: func(setup *conformance.Setup) error {
			tr := setup.Transport
			setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
				out, err := tr.Send(ctx, req)
				if err != nil && len(out) > 0 {
					return out, nil
				}
				return out, err
			})
			return nil
		},
		wrap: plain,
	},
	{
		Name: "reason-quotes-transport-error", Breaks: "a fallback reason never quotes a transport error",
		Fails: all(conformance.CheckModel),
		before: func(setup *conformance.Setup) error {
			tr := setup.Transport
			setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
				out, err := tr.Send(ctx, req)
				if err != nil {
					lastTransportError.Store(err.Error())
				}
				return out, err
			})
			return nil
		},
		wrap: func(a contract.Adapter, _ *env) contract.Adapter { return quotingReason{decorator{a}} },
	},
	{
		Name: "diagnostics-newest-first", Breaks: "the reference adapter lists its diagnostics oldest first",
		Fails: all(conformance.CheckFallbacks, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return newestFirst{decorator{a}} },
	},
	{
		Name: "changed-always-reported", Breaks: "enforcement reports changed only when sanitising changed something",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return alwaysChanged{decorator{a}} },
	},
	{
		Name: "declarations-gone-after-shutdown", Breaks: "declarations keep working after shutdown",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &goneAfterShutdown{decorator: decorator{a}} },
	},
	{
		Name: "declarations-cached-slice", Breaks: "every returned declarations slice is the caller's copy",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &cachedDecls{decorator: decorator{a}} },
	},
	{
		Name: "diagnostics-cached-slice", Breaks: "every returned diagnostics slice is the caller's copy",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &cachedDiags{decorator: decorator{a}} },
	},
	{
		Name: "warm-path-after-32-completions", Breaks: "every completion reaches the transport, however many came before",
		Fails: all(conformance.CheckConcurrency, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &warmPath{decorator: decorator{a}} },
	},
	{
		Name: "every-16th-completion-ignores-cancellation", Breaks: "the transport gets the completion's context, every time",
		Fails: all(conformance.CheckModel),
		before: func(setup *conformance.Setup) error {
			tr := setup.Transport
			var mu sync.Mutex
			n := 0
			setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
				mu.Lock()
				n++
				nth := n%16 == 0
				mu.Unlock()
				if nth {
					ctx = context.WithoutCancel(ctx)
				}
				return tr.Send(ctx, req)
			})
			return nil
		},
		wrap: plain,
	},
	{
		Name: "cancelled-shutdown-leaves-open", Breaks: "a shutdown that succeeds closes the adapter, whatever its context",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return cancelledShutdownNoop{decorator{a}} },
	},
	{
		Name: "closed-adapter-enforces-for-local-providers", Breaks: "after shutdown, enforcement errors for every provider",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &closedLocal{decorator: decorator{a}} },
	},
	{
		Name: "revision-counts-messages", Breaks: "the revision follows the content, not the number of messages",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return countRevision{decorator{a}} },
	},
	{
		Name: "snapshot-cached-by-message-count", Breaks: "a snapshot holds what the source holds now, also after a message changed in place",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &countCache{decorator: decorator{a}} },
	},
	{
		Name: "messages-sorted-by-created-at", Breaks: "a snapshot keeps history order, whatever the timestamps say",
		Fails: all(conformance.CheckProjection, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return sortedByTime{decorator{a}} },
	},
	{
		Name: "long-texts-truncated", Breaks: "a snapshot keeps every text whole, however long",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return truncatedTexts{decorator{a}} },
	},
	{
		Name: "openai-reported-local", Breaks: "the destination follows the privacy configuration for every provider",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return openAILocal{decorator{a}} },
	},
	{
		Name: "model-descriptor-drops-cost", Breaks: "CurrentModel returns every member of the selected model",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return noCost{decorator{a}} },
	},
	{
		Name: "current-model-of-the-newest-instance", Breaks: "instances are independent: each reports its own selected model, whatever instances came after it",
		Fails: all(conformance.CheckModel),
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			e.shared.mu.Lock()
			e.shared.newest = a
			e.shared.mu.Unlock()
			return newestModel{decorator{a}, e.shared}
		},
	},
	{
		Name: "duplicate-completion-served-from-cache", Breaks: "an identical completion is sent again, never answered from a cache",
		Fails: all(conformance.CheckLocalKVHit, conformance.CheckLocalKVNonHit, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &dedupe{decorator: decorator{a}} },
	},
}

// wrapTransport returns a before hook that changes every request the
// adapter hands its transport.
func wrapTransport(change func(contract.TransportRequest) contract.TransportRequest) func(*conformance.Setup) error {
	return func(setup *conformance.Setup) error {
		tr := setup.Transport
		setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
			return tr.Send(ctx, change(req))
		})
		return nil
	}
}

type summaryCountsDropped struct{ decorator }

func (m summaryCountsDropped) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	r.Privacy.BlockedBlocks, r.Privacy.SecretRedactions = 0, 0
	return r
}

type wrapNonObject struct{ decorator }

func (m wrapNonObject) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted && (len(r.Output) == 0 || r.Output[0] != '{') {
		r.Output = json.RawMessage(`{"content":` + string(r.Output) + `}`)
	}
	return r
}

// lastTransportError is what reason-quotes-transport-error quotes.
var lastTransportError syncString

type syncString struct {
	mu sync.Mutex
	s  string
}

func (s *syncString) Store(v string) { s.mu.Lock(); s.s = v; s.mu.Unlock() }
func (s *syncString) Load() string   { s.mu.Lock(); defer s.mu.Unlock(); return s.s }

type quotingReason struct{ decorator }

func (m quotingReason) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusFallback && r.Code == contract.FallbackTransportFailed {
		r.Reason += ": " + lastTransportError.Load()
	}
	return r
}

type newestFirst struct{ decorator }

func (m newestFirst) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	slices.Reverse(ds)
	return ds
}

type alwaysChanged struct{ decorator }

func (m alwaysChanged) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	r.Changed = true
	return r, err
}

type goneAfterShutdown struct {
	decorator
	mu     sync.Mutex
	closed bool
}

func (m *goneAfterShutdown) Shutdown(ctx context.Context) error {
	err := m.Adapter.Shutdown(ctx)
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return err
}

func (m *goneAfterShutdown) CapabilityDeclarations() []contract.CapabilityDeclaration {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil
	}
	return m.Adapter.CapabilityDeclarations()
}

type cachedDecls struct {
	decorator
	once  sync.Once
	decls []contract.CapabilityDeclaration
}

func (m *cachedDecls) CapabilityDeclarations() []contract.CapabilityDeclaration {
	m.once.Do(func() { m.decls = m.Adapter.CapabilityDeclarations() })
	return m.decls
}

func (m *cachedDecls) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	return contract.NegotiateCapabilities(m.CapabilityDeclarations(), reqs)
}

type cachedDiags struct {
	decorator
	mu   sync.Mutex
	last []contract.Diagnostic
}

func (m *cachedDiags) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(ds) == len(m.last) {
		return m.last
	}
	m.last = ds
	return ds
}

type warmPath struct {
	decorator
	mu   sync.Mutex
	n    int
	last *contract.CompletionResult
}

func (m *warmPath) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	m.mu.Lock()
	m.n++
	warm, last := m.n > 32, m.last
	m.mu.Unlock()
	if warm && last != nil {
		return *last
	}
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted {
		m.mu.Lock()
		m.last = &r
		m.mu.Unlock()
	}
	return r
}

type cancelledShutdownNoop struct{ decorator }

func (m cancelledShutdownNoop) Shutdown(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	return m.Adapter.Shutdown(ctx)
}

type closedLocal struct {
	decorator
	mu     sync.Mutex
	closed bool
}

func (m *closedLocal) Shutdown(ctx context.Context) error {
	err := m.Adapter.Shutdown(ctx)
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return err
}

func (m *closedLocal) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if p := strings.ToLower(strings.TrimSpace(req.Provider)); closed && (p == "ollama" || p == "llama-cpp" || p == "lmstudio") {
		b, err := json.Marshal(req.Payload)
		return contract.PrivacyResult{Provider: req.Provider, Destination: contract.DestinationLocal, Payload: b}, err
	}
	return m.Adapter.EnforcePrivacy(ctx, req)
}

type countRevision struct{ decorator }

func (m countRevision) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil {
		s.Revision = fmt.Sprintf("messages-%d", len(s.Messages))
	}
	return s, err
}

func (m countRevision) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	if err == nil {
		s.Revision = fmt.Sprintf("messages-%d", len(s.Messages))
	}
	return s, err
}

type countCache struct {
	decorator
	mu     sync.Mutex
	cached *contract.HistorySnapshot
}

func (m *countCache) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cached != nil && len(m.cached.Messages) == len(s.Messages) {
		return contract.CloneSnapshot(m.cached), nil
	}
	c := contract.CloneSnapshot(&s)
	m.cached = &c
	return s, nil
}

func (m *countCache) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	m.mu.Lock()
	m.cached = nil
	m.mu.Unlock()
	return m.Adapter.RebuildDerivedState(ctx)
}

type sortedByTime struct{ decorator }

func (m sortedByTime) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil {
		slices.SortStableFunc(s.Messages, func(a, b contract.Message) int {
			if a.CreatedAt == nil || b.CreatedAt == nil {
				return 0
			}
			switch {
			case *a.CreatedAt < *b.CreatedAt:
				return -1
			case *a.CreatedAt > *b.CreatedAt:
				return 1
			}
			return 0
		})
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	}
	return s, err
}

type truncatedTexts struct{ decorator }

func (m truncatedTexts) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	for i := range s.Messages {
		for _, b := range s.Messages[i].Blocks {
			if t, ok := b.(*contract.TextBlock); ok && len(t.Text) > 32<<10 {
				t.Text = strings.ToValidUTF8(t.Text[:32<<10], "")
			}
		}
	}
	return s, err
}

type strippedIDs struct{ decorator }

func stripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

func (m strippedIDs) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	for i := range s.Messages {
		s.Messages[i].ID = stripMarks(s.Messages[i].ID)
	}
	for i := range s.ToolAtomicGroups {
		for j, id := range s.ToolAtomicGroups[i].MessageIDs {
			s.ToolAtomicGroups[i].MessageIDs[j] = stripMarks(id)
		}
	}
	return s, err
}

type openAILocal struct{ decorator }

func (m openAILocal) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	if req.Provider == "openai" {
		r.Destination = contract.DestinationLocal
	}
	return r, err
}

type noCost struct{ decorator }

func (m noCost) CurrentModel(ctx context.Context) (*contract.ModelDescriptor, error) {
	d, err := m.Adapter.CurrentModel(ctx)
	if d != nil {
		d.Cost = nil
	}
	return d, err
}

// newestModel keeps the selected model in one variable all instances set:
// each reports the model of the instance created last.
type newestModel struct {
	decorator
	shared *sharedEnv
}

func (m newestModel) CurrentModel(ctx context.Context) (*contract.ModelDescriptor, error) {
	m.shared.mu.Lock()
	newest := m.shared.newest
	m.shared.mu.Unlock()
	return newest.CurrentModel(ctx)
}

type dedupe struct {
	decorator
	mu   sync.Mutex
	seen map[string]contract.CompletionResult
}

func (m *dedupe) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	key := ""
	if raw, ok := req.Payload.(json.RawMessage); ok {
		key = req.Provider + "\x00" + req.Model + "\x00" + string(raw)
	}
	m.mu.Lock()
	r, hit := m.seen[key]
	m.mu.Unlock()
	if hit && key != "" {
		return r
	}
	r = m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted && key != "" {
		m.mu.Lock()
		if m.seen == nil {
			m.seen = map[string]contract.CompletionResult{}
		}
		m.seen[key] = r
		m.mu.Unlock()
	}
	return r
}

// staleGroups answers a group it has answered before as it was then, as a
// cache that extends its groups only with calls it has not seen might: a
// live call stays live after its result is appended.
type staleGroups struct {
	decorator
	mu   sync.Mutex
	seen map[string]contract.ToolAtomicGroup // by first call id
}

func (m *staleGroups) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]contract.ToolAtomicGroup{}
	}
	for i, g := range s.ToolAtomicGroups {
		if len(g.ToolCallIDs) == 0 {
			continue
		}
		// Known by its first call: a group's id follows its members.
		if old, ok := m.seen[g.ToolCallIDs[0]]; ok {
			s.ToolAtomicGroups[i] = contract.CloneGroups([]contract.ToolAtomicGroup{old})[0]
		} else {
			m.seen[g.ToolCallIDs[0]] = contract.CloneGroups([]contract.ToolAtomicGroup{g})[0]
		}
	}
	return s, nil
}
