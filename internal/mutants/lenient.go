package mutants

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// tolerance is what a lenient reader lets through that SPEC makes a read
// refuse: one field set per mutant.
type tolerance struct {
	lastDuplicateWins bool // a later record of an id replaces the earlier
	invalidUTF8       bool // invalid bytes read as U+FFFD
	unterminatedTail  bool // bytes after the last newline left unread
	orphanResults     bool // tool results without their call kept
	anyIdentity       bool // the header's runtime id and root not checked
	tornLastLine      bool // a last line that does not parse left out
	derivedEntryIDs   bool // sourceEntryId taken from provenance.entryId, a blank one from the id
}

// lenientReads answers a read the wrapped reference adapter refuses by
// reading the history file itself, with one tolerance; a read that fails
// that way too keeps the reference adapter's error.
type lenientReads struct {
	decorator
	tol                   tolerance
	mu                    sync.Mutex
	path, runtimeID, root string
}

func lenientWrap(tol tolerance) func(contract.Adapter, *env) contract.Adapter {
	return func(a contract.Adapter, e *env) contract.Adapter {
		return newOwnLog(&lenientReads{decorator: decorator{a}, tol: tol}, e, keepNewest(100))
	}
}

// lenientAfter tells the lenient reader of an instance its history file
// and the identity it checks.
func lenientAfter(setup conformance.Setup, inst *conformance.Instance, _ *env) error {
	path, err := historyPath(inst)
	if err != nil {
		return err
	}
	log, ok := inst.Adapter.(*ownLog)
	if !ok {
		return errors.New("mutants: a lenient reader's adapter is not its own")
	}
	l, ok := log.Adapter.(*lenientReads)
	if !ok {
		return errors.New("mutants: a lenient reader's adapter is not its own")
	}
	l.mu.Lock()
	l.path, l.runtimeID, l.root = path, setup.Fixture.RuntimeID, inst.ExpectedProjectRoot
	l.mu.Unlock()
	return nil
}

func (m *lenientReads) read(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err == nil || closedOrCancelled(err) {
		return s, err
	}
	m.mu.Lock()
	path, runtimeID, root := m.path, m.runtimeID, m.root
	m.mu.Unlock()
	if path == "" {
		return s, err
	}
	if ls, lerr := readLeniently(path, runtimeID, root, m.tol); lerr == nil {
		return ls, nil
	}
	return s, err
}

func (m *lenientReads) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.read(m.Adapter.SnapshotHistory(ctx))
}

func (m *lenientReads) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.read(m.Adapter.RebuildDerivedState(ctx))
}

// historyHeader is the first line of a reference history file.
type historyHeader struct {
	Type        string `json:"type"`
	RuntimeID   string `json:"runtimeId"`
	SessionID   string `json:"sessionId"`
	ProjectRoot string `json:"projectRoot"`
}

// messageRecord is every further line.
type messageRecord struct {
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
}

// readLeniently reads a reference history file as SPEC §12 reads it, but
// for what tol lets through: a snapshot of runtimeID under root, whose
// revision is the SHA-256 of the file's bytes.
func readLeniently(path, runtimeID, root string, tol tolerance) (contract.HistorySnapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return contract.HistorySnapshot{}, err
	}
	sum := sha256.Sum256(data)
	if !utf8.Valid(data) {
		if !tol.invalidUTF8 {
			return contract.HistorySnapshot{}, errors.New("history is not valid UTF-8")
		}
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		if !tol.unterminatedTail {
			return contract.HistorySnapshot{}, errors.New("unterminated final record")
		}
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	var h historyHeader
	if err := json.Unmarshal(lines[0], &h); err != nil || h.Type != "ds4-runtime-session-v1" || contract.IsBlank(h.SessionID) {
		return contract.HistorySnapshot{}, errors.New("invalid header")
	}
	if !tol.anyIdentity {
		resolved, err := filepath.EvalSymlinks(h.ProjectRoot)
		if h.RuntimeID != runtimeID || err != nil || resolved != root {
			return contract.HistorySnapshot{}, errors.New("history identity does not match")
		}
	}
	var msgs []contract.Message
	at := map[string]int{}
	for i, line := range lines[1:] {
		var rec messageRecord
		err := json.Unmarshal(line, &rec)
		var m contract.Message
		if err == nil && rec.Type == "message" {
			m, err = contract.DecodeMessage(rec.Message)
		} else if err == nil {
			err = errors.New("not a message record")
		}
		if err != nil {
			if tol.tornLastLine && i == len(lines)-2 {
				break
			}
			return contract.HistorySnapshot{}, fmt.Errorf("line %d: %w", i+2, err)
		}
		if tol.derivedEntryIDs {
			if contract.IsBlank(m.Provenance.EntryID) {
				m.Provenance.EntryID = m.ID
			}
			m.SourceEntryID = m.Provenance.EntryID
		}
		if j, ok := at[m.ID]; ok && tol.lastDuplicateWins {
			msgs[j] = m
			continue
		}
		at[m.ID] = len(msgs)
		msgs = append(msgs, m)
	}
	if msgs == nil {
		msgs = []contract.Message{}
	}
	s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: runtimeID, SessionID: h.SessionID,
		Revision: hex.EncodeToString(sum[:]), ProjectRoot: root, Messages: msgs, ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs)}
	issues := slices.DeleteFunc(contract.ValidateHistorySnapshot(&s), func(is contract.ValidationIssue) bool {
		return tol.orphanResults && is.Code == "tool-result-orphaned"
	})
	if len(issues) > 0 {
		return contract.HistorySnapshot{}, fmt.Errorf("history is invalid: %s", issues[0].Code)
	}
	return s, nil
}
