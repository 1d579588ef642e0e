package mutants

import (
	"context"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The mutants of canonical sources SPEC §7 and §12 make a snapshot refuse,
// and of an in-place overwrite a cache misses. The kit's source hook
// (conformance.Source) writes only valid messages, a corrupt line and, with
// SourceRewriter, valid in-place rewrites; none of these mutants shows
// before the kit can write the source as it stands here — a duplicate id,
// a byte that is not UTF-8, bytes after the last newline, a result without
// its call, another runtime's header, an overwrite of the same size. Each
// reads the reference adapter's history file itself when the reference
// adapter refuses it, with one tolerance, and is otherwise as strict; its
// diagnostics are its own list (ownLog), which records nothing for a read
// it let through.
var pendingSources = []Mutant{
	{
		Name: "accepts-duplicate-message-ids", Family: FamilySources,
		Breaks: "a history with a duplicate message id is invalid and its snapshot an error (§7 step 4, §12); this reader keeps messages in a map by id, so a later record of an id replaces the earlier one",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{lastDuplicateWins: true}),
		after:  lenientAfter,
	},
	{
		Name: "derives-entry-ids-when-reading", Family: FamilySources,
		Breaks: "a record whose sourceEntryId is not its provenance's entryId, or whose entryId is blank, makes the history invalid (§7 step 4, §12); this reader takes sourceEntryId from the provenance and a blank entryId from the message id",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{derivedEntryIDs: true}),
		after:  lenientAfter,
	},
	{
		Name: "accepts-invalid-utf8", Family: FamilySources,
		Breaks: "a history that is not valid UTF-8 is corrupt (§12: the Go kit rejects what the TypeScript kit replaces); this reader decodes it as encoding/json does, each invalid byte becoming U+FFFD",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{invalidUTF8: true}),
		after:  lenientAfter,
	},
	{
		Name: "ignores-unterminated-final-record", Family: FamilySources,
		Breaks: "a history whose last record does not end in a newline is corrupt (§12: \"unterminated final record\"), never a shorter history; this reader reads whole lines only and leaves the rest for later",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{unterminatedTail: true}),
		after:  lenientAfter,
	},
	{
		Name: "accepts-orphaned-tool-results", Family: FamilySources,
		Breaks: "a tool result without its call makes a history invalid (§7 step 6, §12); this reader skips that validation step",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{orphanResults: true}),
		after:  lenientAfter,
	},
	{
		Name: "snapshots-another-runtimes-history", Family: FamilySources,
		Breaks: "a snapshot of a source whose header names another runtime or root is an error (§4, §12: canonical-history-identity-mismatch); this reader checks the header's type only and fills the identity from its own configuration",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{anyIdentity: true}),
		after:  lenientAfter,
	},
	{
		Name: "snapshot-cached-by-file-size", Family: FamilySources,
		Breaks: "a snapshot holds what the source holds now (§7, §12: an unchanged file is proven unchanged byte for byte); this adapter serves its cached snapshot while the history's size is unchanged, so it misses an in-place overwrite of the same length",
		Fails:  all(conformance.CheckModel),
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return &sizeCache{decorator: decorator{a}} },
	},
}

// sizeCache serves its cached snapshot while the history's size — the
// bytes of its records — is unchanged, as a cache keyed on a file's size
// and modification time does within one tick of the clock.
type sizeCache struct {
	decorator
	mu     sync.Mutex
	size   int
	cached *contract.HistorySnapshot
}

func historySize(s *contract.HistorySnapshot) int {
	n := 0
	for i := range s.Messages {
		n += recordLen(&s.Messages[i])
	}
	return n
}

func (m *sizeCache) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	size := historySize(&s)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cached != nil && m.size == size {
		return contract.CloneSnapshot(m.cached), nil
	}
	c := contract.CloneSnapshot(&s)
	m.cached, m.size = &c, size
	return s, nil
}

func (m *sizeCache) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	m.mu.Lock()
	m.cached = nil
	m.mu.Unlock()
	return m.Adapter.RebuildDerivedState(ctx)
}
