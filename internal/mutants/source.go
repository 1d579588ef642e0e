package mutants

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The mutants of the source, aliasing and cancellation rules. Each
// changes the adapter only where the canonical source changed, a snapshot
// or payload is edited, or a context is done, so the seven cases pass.
var sourceCatalogue = []Mutant{
	{
		Name: "rebuild-serves-stale-state", Breaks: "rebuilding re-reads the canonical source and returns what it holds now",
		Fails: all(conformance.CheckSourceAppend, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &staleRebuildState{decorator: decorator{a}} },
	},
	{
		Name: "revision-never-changes", Breaks: "the revision changes when the canonical content does",
		Fails: all(conformance.CheckSourceAppend, conformance.CheckSourceRevision, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &fixedRevision{decorator: decorator{a}} },
	},
	{
		Name: "snapshot-revision-set-by-rebuild", Breaks: "a snapshot's revision is the revision of the content it holds",
		Fails: all(conformance.CheckSourceRevision, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &rebuildRevisionOnly{decorator: decorator{a}}
		},
	},
	{
		Name: "corrupt-source-read-as-empty", Breaks: "a corrupt source is never projected as an empty history",
		Fails: all(conformance.CheckSourceCorrupt, conformance.CheckModel),
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			return &emptyOnFailure{decorator: decorator{a}, session: e.fixture.SessionID}
		},
	},
	{
		Name: "corrupt-source-unreported", Breaks: "a failed read of a corrupt source records an error diagnostic",
		Fails: all(conformance.CheckSourceCorrupt, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return hideHistoryErrors{decorator{a}} },
	},
	{
		Name: "read-error-quotes-history", Breaks: "errors are metadata only: a failed read never quotes the history it read (SPEC §4)",
		Fails: all(conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &quotingReadErrors{decorator: decorator{a}} },
	},
	{
		Name: "failed-rebuild-clears-earlier-snapshot", Breaks: "a failed rebuild leaves earlier snapshots untouched",
		Fails: all(conformance.CheckSourceCorrupt, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &clearOnFailure{decorator: decorator{a}} },
	},
	{
		Name: "snapshot-aliases-cache", Breaks: "a snapshot is a copy the caller owns",
		Fails: all(conformance.CheckSnapshotAliasing, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &aliasedCache{decorator: decorator{a}} },
	},
	{
		Name: "privacy-sanitises-caller-map", Breaks: "privacy enforcement never modifies the caller's payload",
		Fails: all(conformance.CheckPayloadUnmodified, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return inPlaceMap{decorator{a}} },
	},
	{
		Name: "complete-redacts-caller-buffer", Breaks: "a completion never modifies the caller's payload",
		Fails: all(conformance.CheckPayloadUnmodified, conformance.CheckPrivacyProbes, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return inPlaceBuffer{decorator{a}} },
	},
	{
		Name: "complete-hangs-when-cancelled", Breaks: "a call with a cancelled context returns promptly",
		Fails: all(conformance.CheckCancellation, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &hangOnCancel{decorator: decorator{a}, closed: make(chan struct{})}
		},
	},
	{
		Name: "cancelled-read-breaks-adapter", Breaks: "a cancelled call leaves the adapter working",
		Fails: all(conformance.CheckCancellation),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &stickyCancel{decorator: decorator{a}} },
	},
}

// shutdownFlag remembers whether the adapter was shut down, so that a
// mutant breaks a rule of an open adapter only.
type shutdownFlag struct{ closed atomic.Bool }

func (f *shutdownFlag) open() bool { return !f.closed.Load() }

// staleRebuildState keeps the first history it read as derived state: a
// rebuild re-reads the source (and fails when that fails) but returns the
// kept history.
type staleRebuildState struct {
	decorator
	mu    sync.Mutex
	first *contract.HistorySnapshot
}

func (m *staleRebuildState) keep(s contract.HistorySnapshot) contract.HistorySnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.first == nil {
		c := contract.CloneSnapshot(&s)
		m.first = &c
	}
	return contract.CloneSnapshot(m.first)
}

func (m *staleRebuildState) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil {
		m.keep(s)
	}
	return s, err
}

func (m *staleRebuildState) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	if err != nil {
		return s, err
	}
	return m.keep(s), nil
}

// fixedRevision reports the first revision it saw for every later
// snapshot and rebuild.
type fixedRevision struct {
	decorator
	mu       sync.Mutex
	revision string
}

func (m *fixedRevision) fix(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err != nil {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.revision == "" {
		m.revision = s.Revision
	}
	s.Revision = m.revision
	return s, nil
}

func (m *fixedRevision) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.fix(m.Adapter.SnapshotHistory(ctx))
}

func (m *fixedRevision) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.fix(m.Adapter.RebuildDerivedState(ctx))
}

// rebuildRevisionOnly keeps the revision as derived state: a snapshot
// holds the messages read now but the revision of the first snapshot or
// the last rebuild.
type rebuildRevisionOnly struct {
	decorator
	mu       sync.Mutex
	revision string
}

func (m *rebuildRevisionOnly) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.revision == "" {
		m.revision = s.Revision
	}
	s.Revision = m.revision
	return s, nil
}

func (m *rebuildRevisionOnly) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	if err == nil {
		m.mu.Lock()
		m.revision = s.Revision
		m.mu.Unlock()
	}
	return s, err
}

// emptyOnFailure projects a history that fails to read, while the adapter
// is open and the call's context live, as an empty one.
type emptyOnFailure struct {
	decorator
	shutdownFlag
	session string
}

func (m *emptyOnFailure) empty(ctx context.Context, s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err == nil || !m.open() || ctx.Err() != nil {
		return s, err
	}
	root, rerr := m.Adapter.TrustedProjectRoot(ctx)
	if rerr != nil {
		return s, err
	}
	return contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: m.Adapter.Identity().RuntimeID,
		SessionID: m.session, Revision: "empty", ProjectRoot: root, Messages: []contract.Message{}, ToolAtomicGroups: []contract.ToolAtomicGroup{}}, nil
}

func (m *emptyOnFailure) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	return m.empty(ctx, s, err)
}

func (m *emptyOnFailure) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	return m.empty(ctx, s, err)
}

func (m *emptyOnFailure) Shutdown(ctx context.Context) error {
	m.closed.Store(true)
	return m.Adapter.Shutdown(ctx)
}

// hideHistoryErrors drops the error diagnostics of failed history reads.
type hideHistoryErrors struct{ decorator }

func (m hideHistoryErrors) Diagnostics() []contract.Diagnostic {
	return slices.DeleteFunc(m.Adapter.Diagnostics(), func(d contract.Diagnostic) bool {
		return d.Severity == contract.SeverityError && strings.HasPrefix(d.Code, "canonical-history-")
	})
}

// quotingReadErrors says, in the error of a read that failed, what the
// last message it read said: "after …", as a parser's error names where it
// stopped.
type quotingReadErrors struct {
	decorator
	mu   sync.Mutex
	last string
}

func (m *quotingReadErrors) read(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		m.last = ""
		for i := len(s.Messages) - 1; i >= 0 && m.last == ""; i-- {
			for _, b := range s.Messages[i].Blocks {
				if t, ok := b.(*contract.TextBlock); ok {
					m.last = t.Text
					break
				}
			}
		}
		return s, nil
	}
	return s, fmt.Errorf("%w (after %q)", err, m.last)
}

func (m *quotingReadErrors) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.read(m.Adapter.SnapshotHistory(ctx))
}

func (m *quotingReadErrors) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.read(m.Adapter.RebuildDerivedState(ctx))
}

// clearOnFailure drops its derived state on a failed rebuild by clearing,
// in place, the messages of the last snapshot it handed out.
type clearOnFailure struct {
	decorator
	shutdownFlag
	mu   sync.Mutex
	last []contract.Message
}

func (m *clearOnFailure) keep(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err == nil {
		m.mu.Lock()
		m.last = s.Messages
		m.mu.Unlock()
	}
	return s, err
}

func (m *clearOnFailure) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.keep(m.Adapter.SnapshotHistory(ctx))
}

func (m *clearOnFailure) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	if err != nil && m.open() {
		m.mu.Lock()
		clear(m.last)
		m.last = nil
		m.mu.Unlock()
		return s, err
	}
	return m.keep(s, err)
}

func (m *clearOnFailure) Shutdown(ctx context.Context) error {
	m.closed.Store(true)
	return m.Adapter.Shutdown(ctx)
}

// aliasedCache hands out the snapshot it caches, slices and all, while the
// revision is unchanged.
type aliasedCache struct {
	decorator
	mu    sync.Mutex
	cache *contract.HistorySnapshot
}

func (m *aliasedCache) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil || m.cache.Revision != s.Revision {
		m.cache = &s
	}
	return *m.cache, nil
}

// inPlaceMap writes the sanitised payload back into a caller's map.
type inPlaceMap struct{ decorator }

func (m inPlaceMap) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	r, err := m.Adapter.EnforcePrivacy(ctx, req)
	if p, ok := req.Payload.(map[string]any); ok && err == nil {
		var sanitised map[string]any
		if json.Unmarshal(r.Payload, &sanitised) == nil {
			clear(p)
			for k, v := range sanitised {
				p[k] = v
			}
		}
	}
	return r, err
}

// inPlaceBuffer masks credential-shaped text in a caller's byte buffer, in
// place, before completing.
type inPlaceBuffer struct{ decorator }

func (m inPlaceBuffer) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	var buf []byte
	switch p := req.Payload.(type) {
	case []byte:
		buf = p
	case json.RawMessage:
		buf = p
	}
	for i := 0; i+3 <= len(buf); i++ {
		if string(buf[i:i+3]) == "sk-" {
			buf[i], buf[i+1] = 'x', 'x'
		}
	}
	return m.Adapter.Complete(ctx, req)
}

// hangOnCancel's Complete, given a context already done, waits for the
// adapter to shut down instead of returning.
type hangOnCancel struct {
	decorator
	once   sync.Once
	closed chan struct{}
}

func (m *hangOnCancel) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if ctx.Err() != nil {
		<-m.closed
	}
	return m.Adapter.Complete(ctx, req)
}

func (m *hangOnCancel) Shutdown(ctx context.Context) error {
	m.once.Do(func() { close(m.closed) })
	return m.Adapter.Shutdown(ctx)
}

// stickyCancel remembers that a snapshot's context was done and fails
// every later snapshot with that error.
type stickyCancel struct {
	decorator
	mu  sync.Mutex
	err error
}

func (m *stickyCancel) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	m.mu.Lock()
	if m.err == nil && ctx.Err() != nil {
		m.err = ctx.Err()
	}
	err := m.err
	m.mu.Unlock()
	if err != nil {
		return contract.HistorySnapshot{}, err
	}
	return m.Adapter.SnapshotHistory(ctx)
}
