package reference

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
)

// store reads one history file for an adapter and caches the last valid
// state. It is not safe for concurrent use; the adapter serialises it.
//
// Every load reads the whole file, and the revision is always the SHA-256
// of the bytes read now. A cached state keeps the bytes it was read from
// (heldBytes: the cached messages' strings are parts of them, so they are
// in memory once) and the SHA-256 state after them, so an unchanged file
// is proven unchanged by comparing every byte with them — never by its
// size or modification time — and only what follows them is hashed. What the cache saves is the hashing of the known bytes, the JSON
// decoding and the validation:
//
//   - the same bytes as the cached state: the cached messages and groups
//     are reused, nothing is decoded;
//   - the file grew and its first cachedSize bytes are the cached ones (an
//     append): only the new lines are decoded, and they are validated
//     against an index of known message and tool call ids instead of
//     revalidating the whole history;
//   - anything else (a rewritten or truncated file): a cold parse, in
//     blocks of whole lines (coldRead).
type store struct {
	path   string
	limits limits
	buf    []byte
	c      *cached
	block  int // the bytes a cold read reads at a time; 0 for readChunk
	// waiting, when set, is called each time a read waits for a writer
	// to finish its record (tests wait for it, not for a clock).
	waiting func()
}

// cached is a history state that passed every check. Its messages are
// held compactly (heldMessage) and never handed out; callers get deep
// copies of their expansions.
type cached struct {
	header   Header
	x        heldContext // what the messages share, from the header
	size     int64
	revision string
	msgs     []heldMessage
	groups   []contract.ToolAtomicGroup
	// ids are the message ids (a message id's position is its message's
	// index) and calls the tool call ids, both moved from state to state
	// as it is extended and built again when missing. callGroup holds, by
	// position in calls, the first message id of each call's group: it is
	// built on the first tool append.
	ids, calls *idSet
	callGroup  []string
	extends    bool // the state is the last one plus appended messages
	// held is the file's first size bytes, which the messages' strings
	// are parts of, and digest is the SHA-256 state after them. Neither
	// is written once the state is made; an extension appends blocks
	// beyond held's length and works on a copy of digest. A History keeps
	// neither.
	held   heldBytes
	digest hash.Hash
}

const readOp = "read"

// load returns the current valid state of the file, checked against the
// adapter's runtime id and trusted root; prev is the last state load
// returned, or nil. extended reports that the state is prev or prev plus
// appended messages (prev's messages are then its first ones, and its
// groups are prev's when no appended message holds a tool block). Errors: a *HistoryError wrapping ErrIdentityMismatch for
// identity, a *ValidationError for an invalid history, any other error for
// a file that cannot be read or parsed.
//
// The file is opened without waiting and must be a regular file; it is
// then read without a lock, so that readers never hold up a writer. A
// writer of this package writes each record with one write ending in its
// only '\n', so a read that ends without one caught a record half written,
// or found a torn one: settle tells the two apart. Every read, and the
// wait for a writer to finish its record, ends when ctx does.
func (s *store) load(ctx context.Context, prev *cached, runtimeID, trustedRoot string) (c *cached, extended bool, err error) {
	c, err = s.read(ctx, prev, runtimeID, trustedRoot)
	return c, err == nil && prev != nil && (c == prev || c.extends), err
}

func (s *store) read(ctx context.Context, prev *cached, runtimeID, trustedRoot string) (*cached, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, _, err := openRegular(readOp, s.path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, parseError(readOp, s.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	if fi.Size() > s.limits.maxBytes {
		return nil, parseError(readOp, s.path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
	}
	if c := prev; c != nil && c.digest != nil && fi.Size() >= c.size {
		next, suffix, err := s.extend(ctx, f, c)
		if err != nil {
			return nil, err
		}
		if next != nil {
			root, err := s.checkIdentity(&next.header, runtimeID, trustedRoot)
			if err != nil {
				return nil, err
			}
			if suffix != nil {
				if err := next.validateAppended(c, len(c.msgs), root); err != nil {
					return nil, err
				}
				next.extends = true
			}
			return next, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, parseError(readOp, s.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
		}
	}
	h, err := s.coldRead(ctx, f, fi)
	if err != nil {
		return nil, err
	}
	if h.header.RuntimeID != runtimeID || h.root != trustedRoot {
		return nil, identityError(s.path)
	}
	next := &cached{header: h.header, x: h.x, size: h.size, revision: hex.EncodeToString(h.digest.Sum(nil)), msgs: h.msgs,
		held: h.held, digest: h.digest}
	// A cold read validates as an append of every message to an empty
	// history: the same checks, the same fallback to the full validator.
	if err := next.validateAppended(&cached{}, 0, trustedRoot); err != nil {
		return nil, err
	}
	return next, nil
}

func identityError(path string) error {
	return parseError(readOp, path, 0, ErrIdentityMismatch, "header runtime id or project root does not match the adapter", nil)
}

// checkIdentity re-resolves the header's project root (its symlinks may
// have changed since the last load) and compares it and the runtime id with
// the adapter's.
func (s *store) checkIdentity(h *Header, runtimeID, trustedRoot string) (string, error) {
	root, err := resolveRoot(h.ProjectRoot)
	if err != nil {
		return "", rootError(readOp, s.path, err)
	}
	if h.RuntimeID != runtimeID || root != trustedRoot {
		return "", identityError(s.path)
	}
	return root, nil
}

// extend compares the first c.size bytes of f with c.held. When they are
// the same it reads the rest, decodes only the new lines and returns the
// extended (not yet validated) state and the new bytes (nil when there were
// none). It returns a nil state when the prefix changed.
func (s *store) extend(ctx context.Context, f *os.File, c *cached) (*cached, []byte, error) {
	if s.buf == nil {
		s.buf = make([]byte, compareChunk)
	}
	same, err := c.held.matches(ctx, io.LimitReader(f, c.size), s.buf)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, parseError(readOp, s.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	if !same {
		return nil, nil, nil
	}
	suffix, err := s.readFrom(ctx, f, c.size, 0)
	if err == nil {
		suffix, err = s.settle(ctx, f, c.size, suffix)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(suffix) == 0 {
		return c, nil, nil
	}
	switch {
	case c.size+int64(len(suffix)) > s.limits.maxBytes:
		return nil, nil, parseError(readOp, s.path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
	case suffix[len(suffix)-1] != '\n':
		return nil, nil, parseError(readOp, s.path, 0, ErrHistoryCorrupt, "unterminated final record", nil)
	case !utf8.Valid(suffix):
		// The cached prefix ends in '\n', an ASCII byte, so the file is
		// valid UTF-8 exactly when both parts are.
		return nil, nil, parseError(readOp, s.path, 0, ErrHistoryCorrupt, "file is not valid UTF-8", nil)
	case len(c.msgs)+bytes.Count(suffix, []byte{'\n'}) > s.limits.maxMessages:
		return nil, nil, parseError(readOp, s.path, 0, ErrHistoryTooLarge, "file exceeds the message bound", nil)
	}
	digest, err := copyDigest(c.digest)
	if err != nil {
		return nil, nil, err
	}
	digest.Write(suffix)
	if cap(suffix) > len(suffix) {
		// The bytes are kept, with the messages decoded from them, as
		// long as the state: without a read's spare room.
		suffix = bytes.Clone(suffix)
	}
	added, err := decodeRecords(ctx, readOp, s.path, suffix, len(c.msgs)+2, nil, true)
	if err != nil {
		return nil, nil, err
	}
	// Appending may write into the spare capacity of c.msgs and c.held,
	// beyond their lengths: c itself, and every copy made from it, is
	// unaffected.
	msgs := c.msgs
	for i := range added {
		msgs = append(msgs, c.x.hold(&added[i]))
	}
	next := &cached{
		header:   c.header,
		x:        c.x,
		size:     c.size + int64(len(suffix)),
		revision: hex.EncodeToString(digest.Sum(nil)),
		msgs:     msgs,
		held:     c.held.extended(keep(suffix)),
		digest:   digest,
	}
	return next, suffix, nil
}

// readFrom reads f from offset base+len(have) to its end, at most one byte
// past the byte bound, appending to have.
func (s *store) readFrom(ctx context.Context, f *os.File, base int64, have int) ([]byte, error) {
	off := base + int64(have)
	more, err := io.ReadAll(ctxReader{ctx, io.NewSectionReader(f, off, max(0, s.limits.maxBytes-off+1))})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, parseError(readOp, s.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	return more, nil
}

// settle makes sure that tail, the bytes of f from offset base to its end
// as read without a lock, does not end in a record half written. A tail
// that is empty or ends in '\n' is returned as it is. Otherwise its last
// line was being written, or is torn: while a writer holds the file's
// lock, its last line is read again, until it ends in '\n' (the writer
// finished it, or took it back after a failed write) or ctx ends (then
// ErrLocked, "another writer holds the lock"). When no writer holds the
// lock, the line read again is returned as it is: a torn record, which the
// caller refuses as an unterminated final record. Reading again costs one
// record, never the file, and takes no lock: a reader never holds up a
// writer.
func (s *store) settle(ctx context.Context, f *os.File, base int64, tail []byte) ([]byte, error) {
	delay := lockPollMin
	var timer *time.Timer
	for {
		if len(tail) == 0 || tail[len(tail)-1] == '\n' {
			return tail, nil
		}
		cut := bytes.LastIndexByte(tail, '\n') + 1
		active, err := writerActive(f)
		if err != nil {
			return nil, parseError(readOp, s.path, 0, ErrLocked, "lock cannot be tested", err)
		}
		more, err := s.readFrom(ctx, f, base, cut)
		if err != nil {
			return nil, err
		}
		tail = append(tail[:cut], more...)
		if len(tail) == 0 || tail[len(tail)-1] == '\n' {
			return tail, nil
		}
		if !active {
			// A writer that opened the file after the test may be the
			// one writing now.
			if active, err = writerActive(f); err != nil || !active {
				return tail, nil
			}
		}
		if s.waiting != nil {
			s.waiting()
		}
		if timer == nil {
			timer = time.NewTimer(delay)
			defer timer.Stop()
		} else {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			return nil, lockError(readOp, s.path, ctx.Err())
		case <-timer.C:
		}
		delay = min(2*delay, lockPollMax)
	}
}

// validateAppended validates next, which is prev plus the messages from
// index old on; prev is a valid state (or an empty one, for a cold read).
// Only the new messages can bring issues, and only of the kinds that
// concern single messages and tool call identities (validation's message,
// tool call identity and orphaned result checks, its steps 4 to 6): the tool
// atomic groups are derived from the messages, so the group checks (steps 7
// to 9) cannot fail while steps 1 to 6 pass. Steps 4 to 6 run
// against prev's index of message and tool call ids; when they find
// nothing and a new message holds a tool block, only the groups it touches
// are derived again (extendGroups).
// When they find anything, the whole history is validated again, so that
// the issue list is exactly the full validator's.
func (next *cached) validateAppended(prev *cached, old int, root string) error {
	added := next.msgs[old:]
	prev.buildIndex()
	if ids, calls, ok := next.appendedValid(prev, len(added), func(i int) contract.Message { return next.x.message(&added[i]) }); ok {
		next.ids, next.calls = merge(prev.ids, ids), merge(prev.calls, calls)
		prev.ids, prev.calls = nil, nil
		switch {
		case prev.groups == nil:
			// The groups of a history are those of its tool messages.
			n := 0
			for i := range next.msgs {
				if isTool(next.msgs[i].blocks) {
					n++
				}
			}
			tools := make([]contract.Message, 0, n)
			for i := range next.msgs {
				if isTool(next.msgs[i].blocks) {
					tools = append(tools, next.x.message(&next.msgs[i]))
				}
			}
			next.groups = contract.BuildToolAtomicGroups(tools)
		case calls.len() > 0 || hasToolBlocks(added):
			next.groups = next.extendGroups(prev, old)
		default:
			next.groups = prev.groups
			next.callGroup, prev.callGroup = prev.callGroup, nil
		}
		return nil
	}
	snap := snapshotOf(&next.header, root, next.revision, next.x.expand(next.msgs), nil)
	if issues := contract.ValidateHistorySnapshot(&snap); len(issues) > 0 {
		return &ValidationError{Issues: issues}
	}
	next.groups = snap.ToolAtomicGroups
	next.ids, next.calls = nil, nil
	return nil
}

// buildIndex builds the message and tool call id sets of a valid state.
func (c *cached) buildIndex() {
	if c.ids == nil {
		c.ids, c.calls = indexOf(len(c.msgs), func(i int) (string, []contract.Block) { return c.msgs[i].id, c.msgs[i].blocks })
		c.callGroup = nil
	}
}

// appendedValid reports whether next's identity and the n added messages
// (added(i) is the i-th) pass validation steps 1 to 6 on top of prev, and
// returns the added messages' ids and tool call ids.
func (next *cached) appendedValid(prev *cached, n int, added func(int) contract.Message) (ids, calls *idSet, ok bool) {
	h := &next.header
	if contract.IsBlank(h.RuntimeID) || contract.IsBlank(h.SessionID) || contract.IsBlank(next.revision) {
		return nil, nil, false
	}
	ids, calls = newIDSet(n), newIDSet(0)
	var results []string
	for i := range n {
		msg := added(i)
		m := &msg
		if contract.IsBlank(m.ID) {
			return nil, nil, false
		}
		if prev.ids.has(m.ID) || !ids.add(m.ID) {
			return nil, nil, false
		}
		p := &m.Provenance
		if p.SessionID != h.SessionID || contract.IsBlank(p.EntryID) || m.SourceEntryID != p.EntryID ||
			(p.Source == contract.SourceRuntimeSession && (p.RuntimeID == nil || *p.RuntimeID != h.RuntimeID)) {
			return nil, nil, false
		}
		for _, b := range m.Blocks {
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				if contract.IsBlank(b.ID) {
					return nil, nil, false
				}
				if prev.calls.has(b.ID) || !calls.add(b.ID) {
					return nil, nil, false
				}
			case *contract.ToolResultBlock:
				results = append(results, b.ToolCallID)
			}
		}
	}
	for _, id := range results {
		if contract.IsBlank(id) || !prev.calls.has(id) && !calls.has(id) {
			return nil, nil, false
		}
	}
	return ids, calls, true
}

func hasToolBlocks(msgs []heldMessage) bool {
	for i := range msgs {
		if isTool(msgs[i].blocks) {
			return true
		}
	}
	return false
}

// isTool reports whether blocks hold a tool call or a tool result.
func isTool(blocks []contract.Block) bool {
	for _, b := range blocks {
		if t := b.Type(); t == contract.BlockToolCall || t == contract.BlockToolResult {
			return true
		}
	}
	return false
}

// errorCode maps a load error to the diagnostic it records ("" for none:
// a cancelled context is the caller's doing, not the history's).
func errorCode(err error) string {
	var ve *ValidationError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ""
	case errors.As(err, &ve):
		return CodeHistoryInvalid
	case errors.Is(err, ErrIdentityMismatch):
		return CodeHistoryIdentityMismatch
	}
	return CodeHistoryReadFailed
}

// pendingCopy is a caller's deep copy of a cached state, made on another
// goroutine while the file is read again.
type pendingCopy struct {
	from   *cached
	done   chan struct{}
	msgs   []contract.Message
	groups []contract.ToolAtomicGroup
}

// startCopy starts copying c (nil for none).
func startCopy(c *cached) *pendingCopy {
	if c == nil {
		return nil
	}
	p := &pendingCopy{from: c, done: make(chan struct{})}
	go func() {
		// Room for the messages a runtime appends between two snapshots,
		// so that adding their copies does not move this one.
		room := make([]contract.Message, 0, len(c.msgs)+max(64, len(c.msgs)/64))
		p.msgs, p.groups = c.x.appendCopies(room, c.msgs), contract.CloneGroups(c.groups)
		close(p.done)
	}()
	return p
}

// result returns a deep copy of next's messages and groups, reusing the
// copy of p.from when next extends it.
func (p *pendingCopy) result(next *cached, extended bool) ([]contract.Message, []contract.ToolAtomicGroup) {
	if p == nil || !extended {
		return next.x.appendCopies(make([]contract.Message, 0, len(next.msgs)), next.msgs), contract.CloneGroups(next.groups)
	}
	<-p.done
	if p.from == next {
		return p.msgs, p.groups
	}
	msgs := next.x.appendCopies(p.msgs, next.msgs[len(p.from.msgs):])
	groups := p.groups
	if len(next.groups) != len(p.from.groups) || len(next.groups) > 0 && &next.groups[0] != &p.from.groups[0] {
		groups = regroupCopies(next.groups, p.from.groups, p.groups)
	}
	return msgs, groups
}

// regroupCopies returns a deep copy of groups, taking from copies (a deep
// copy of from) the copy of every group that is one of from's: the same
// id and completeness, and member lists in the same memory, which no state
// ever writes to. Both lists are in group order (first message id,
// bytewise), so one walk pairs them; an appended message changes only the
// groups it touches, and only those are copied again.
func regroupCopies(groups, from, copies []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
	out := make([]contract.ToolAtomicGroup, len(groups))
	j := 0
	for i := range groups {
		g := &groups[i]
		for j < len(from) && from[j].MessageIDs[0] < g.MessageIDs[0] {
			j++
		}
		if j < len(from) && sameGroup(g, &from[j]) {
			out[i] = copies[j]
		} else {
			out[i] = contract.CloneGroups(groups[i : i+1])[0]
		}
	}
	return out
}

// sameGroup reports whether a and b are one group: equal ids and
// completeness, and lists of the same length in the same memory.
func sameGroup(a, b *contract.ToolAtomicGroup) bool {
	return a.ID == b.ID && a.Complete == b.Complete && sameList(a.MessageIDs, b.MessageIDs) && sameList(a.ToolCallIDs, b.ToolCallIDs)
}

func sameList(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// extendGroups returns the tool atomic groups of next, which is prev (a
// valid state with groups) plus the valid messages from index old on,
// without deriving every group again. In a valid history an appended
// message joins only the groups of the calls its results answer (its own
// calls are new), and a group's members, ids, completeness and id depend
// on its messages alone: so the groups the appended messages touch are
// derived again from their members and the appended tool messages, by
// BuildToolAtomicGroups on that sub-history, and put in place of the
// touched ones, in group order (first message id, bytewise; ids are
// unique, so there are no ties).
func (next *cached) extendGroups(prev *cached, old int) []contract.ToolAtomicGroup {
	// next.calls is prev's calls followed by the new ones (merge), so
	// prev's callGroup is the start of next's; the new calls' groups are
	// set below, with the groups derived again.
	cg := prev.callGroup
	if cg == nil {
		cg = make([]string, next.calls.len())
		for _, g := range prev.groups {
			for _, id := range g.ToolCallIDs {
				if x := next.calls.find(id); x >= 0 {
					cg[x] = g.MessageIDs[0]
				}
			}
		}
	}
	next.callGroup = append(cg, make([]string, next.calls.len()-len(cg))...)
	prev.callGroup = nil

	firstOf := func(g *contract.ToolAtomicGroup) string { return g.MessageIDs[0] }
	groups := prev.groups
	find := func(first string) int {
		i, _ := slices.BinarySearchFunc(groups, first, func(g contract.ToolAtomicGroup, t string) int {
			return strings.Compare(firstOf(&g), t)
		})
		return i
	}
	touched := map[string]bool{} // first message ids of the touched groups
	var members []int32
	for i := old; i < len(next.msgs); i++ {
		isTool := false
		for _, b := range next.msgs[i].blocks {
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				isTool = true
			case *contract.ToolResultBlock:
				isTool = true
				if x := next.calls.find(b.ToolCallID); x >= 0 && next.callGroup[x] != "" {
					touched[next.callGroup[x]] = true
				}
			}
		}
		if isTool {
			members = append(members, int32(i))
		}
	}
	keep := make([]contract.ToolAtomicGroup, 0, len(groups)+len(members))
	for first := range touched {
		g := &groups[find(first)]
		for _, id := range g.MessageIDs {
			members = append(members, next.ids.find(id))
		}
	}
	for i := range groups {
		if !touched[firstOf(&groups[i])] {
			keep = append(keep, groups[i])
		}
	}
	slices.Sort(members)
	sub := make([]contract.Message, len(members))
	for k, i := range members {
		sub[k] = next.x.message(&next.msgs[i])
	}
	for _, g := range contract.BuildToolAtomicGroups(sub) {
		for _, id := range g.ToolCallIDs {
			if x := next.calls.find(id); x >= 0 {
				next.callGroup[x] = g.MessageIDs[0]
			}
		}
		i, _ := slices.BinarySearchFunc(keep, g.MessageIDs[0], func(k contract.ToolAtomicGroup, t string) int {
			return strings.Compare(firstOf(&k), t)
		})
		keep = slices.Insert(keep, i, g)
	}
	return keep
}
