package reference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

// History is a history file open for appending. While it is open it holds
// the file's writer lock, so it is the file's only writer among the
// processes that use this package; readers (adapters) may read the file at
// any time. It reads and validates the file once, when it is opened, and
// keeps what appends need: the header, the message and tool call ids, the
// message count, the file size and the SHA-256 state of the file's bytes.
// An append then costs the same whatever the history's length.
//
// A History is safe for concurrent use. Close releases the lock.
type History struct {
	mu     sync.Mutex
	path   string
	limits limits
	f      *os.File // the history, holding the writer lock until Close

	state  cached // header, size, revision, ids and calls; no messages
	root   string // the header's project root, resolved when opened
	count  int
	digest hash.Hash // SHA-256 of the file's first state.size bytes
	stamp  fileStamp // the file's status after this handle's last write
	err    error     // once set, every append fails with it
	torn   bool      // a failed record's bytes could not be taken back
	closed bool
	key    fileKey // the file's identity in handles, when keyed
	keyed  bool
}

// fileStamp is what a file's status says about its content: which file it
// is, its size, and its modification and status change times.
type fileStamp struct {
	fi    fs.FileInfo
	size  int64
	mtime time.Time
	ctime int64
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{fi: fi, size: fi.Size(), mtime: fi.ModTime(), ctime: changeTime(fi)}
}

func (s fileStamp) equal(o fileStamp) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi) &&
		s.size == o.size && s.mtime.Equal(o.mtime) && s.ctime == o.ctime
}

// OpenHistory opens the history file at path for appending.
//
// It opens the file without waiting (a FIFO, device or folder at path is
// refused with ErrHistoryCorrupt), then takes the file's writer lock,
// waiting while another writer holds it until ctx ends (then ErrLocked).
// Then it reads the file under the reading rules of SnapshotHistory and
// validates it as a snapshot (a *ValidationError when it does not). The
// bounds apply to the file as read and to every append.
func OpenHistory(ctx context.Context, path string, opts ...HistoryOption) (*History, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := newLimits(opts)
	if err != nil {
		return nil, err
	}
	return openHistory(ctx, "open", path, l)
}

func openHistory(ctx context.Context, op, path string, l limits) (*History, error) {
	f, fi, err := openRegular(op, path, os.O_RDWR)
	if err != nil {
		return nil, err
	}
	h, err := lockAndRead(ctx, op, path, l, f, fi)
	if err != nil {
		f.Close()
		return nil, err
	}
	return h, nil
}

func lockAndRead(ctx context.Context, op, path string, l limits, f *os.File, fi fs.FileInfo) (*History, error) {
	if err := lockWriter(ctx, op, path, f); err != nil {
		return nil, err
	}
	h, err := readLocked(ctx, op, path, l, f, fi)
	if err == nil {
		h.register(fi)
	}
	return h, err
}

// handles are the Histories open in this process, by the identity of
// their file, so that AppendMessage appends through one instead of
// reading the whole file (and waiting for the lock this process holds).
var handles = struct {
	sync.Mutex
	m map[fileKey]*History
}{m: map[fileKey]*History{}}

func (h *History) register(fi fs.FileInfo) {
	if k, ok := keyOf(fi); ok {
		handles.Lock()
		handles.m[k] = h
		handles.Unlock()
		h.key, h.keyed = k, true
	}
}

func (h *History) unregister() {
	if h.keyed {
		handles.Lock()
		if handles.m[h.key] == h {
			delete(handles.m, h.key)
		}
		handles.Unlock()
	}
}

// openHandle returns the History open in this process on the file at
// path, or nil.
func openHandle(path string) *History {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	k, ok := keyOf(fi)
	if !ok {
		return nil
	}
	handles.Lock()
	defer handles.Unlock()
	return handles.m[k]
}

// readLocked reads and validates the history open as f while the caller
// holds its writer lock.
func readLocked(ctx context.Context, op, path string, l limits, f *os.File, opened fs.FileInfo) (*History, error) {
	// The name may have been given to another file while this one waited
	// for the lock.
	if now, err := os.Stat(path); err != nil || !os.SameFile(opened, now) {
		return nil, parseError(op, path, 0, ErrConcurrentWrite, "file was replaced while waiting for the lock", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	data, err := readOpen(ctx, op, path, f, fi, l)
	if err != nil {
		return nil, err
	}
	digest := sha256.New()
	hashed := make(chan struct{})
	go func() { digest.Write(data); close(hashed) }()
	hist, err := parseHistoryCtx(ctx, op, path, data, l)
	<-hashed
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !stampOf(fi).equal(stampOf(after)) || after.Size() != int64(len(data)) {
		return nil, parseError(op, path, 0, ErrConcurrentWrite, "file changed while it was read", err)
	}
	h := &History{path: path, limits: l, f: f, root: hist.root, count: len(hist.messages), digest: digest, stamp: stampOf(fi)}
	h.state = cached{header: hist.header, size: int64(len(data)), revision: hex.EncodeToString(digest.Sum(nil))}
	// The quick checks of an append, from an empty history, as a cold read
	// in the adapter does; the full validator decides when they find
	// anything, so that the verdict and the issues are exactly its own.
	ids, calls, ok := h.state.appendedValid(&cached{}, len(hist.messages), func(i int) contract.Message { return hist.messages[i] })
	if !ok {
		snap := snapshotOf(&hist.header, hist.root, h.state.revision, hist.messages, nil)
		if issues := contract.ValidateHistorySnapshot(&snap); len(issues) > 0 {
			return nil, &ValidationError{Issues: issues}
		}
		ids, calls = indexOfMessages(hist.messages)
	}
	h.state.ids, h.state.calls = ids, calls
	return h, nil
}

// CreateAndOpenHistory is CreateHistory followed by OpenHistory, without
// reading the file back and without a moment in which another writer
// could append in between: it takes the writer lock (waiting as
// OpenHistory does) before the file is created.
func CreateAndOpenHistory(ctx context.Context, path string, header Header, messages []contract.Message, opts ...HistoryOption) (*History, error) {
	const op = "create"
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := newLimits(opts)
	if err != nil {
		return nil, err
	}
	data, root, err := encodeHistory(op, path, &header, messages, l)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fsError(op, path, "parent folder cannot be created", ErrInvalidHeader, err)
	}
	// An existing file is refused at once rather than after a wait for
	// its writer; the link in writeNew is what guarantees it.
	if _, err := os.Lstat(path); err == nil {
		return nil, parseError(op, path, 0, ErrExists, "file already exists", nil)
	}
	// The new file holds its writer lock from before it is linked.
	f, err := writeNew(ctx, op, path, data)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		var named fs.FileInfo
		if named, err = os.Stat(path); err == nil && !os.SameFile(fi, named) {
			err = parseError(op, path, 0, ErrConcurrentWrite, "file was replaced after it was created", nil)
		}
	}
	if err != nil {
		f.Close()
		if _, ok := err.(*HistoryError); !ok {
			err = parseError(op, path, 0, ErrConcurrentWrite, "file cannot be found after it was created", err)
		}
		return nil, err
	}
	digest := sha256.New()
	digest.Write(data)
	h := &History{path: path, limits: l, f: f, root: root, count: len(messages), digest: digest, stamp: stampOf(fi)}
	h.state = cached{header: header, size: int64(len(data)), revision: hex.EncodeToString(digest.Sum(nil))}
	h.state.ids, h.state.calls = indexOfMessages(messages)
	h.register(fi)
	return h, nil
}

// Len returns the number of messages in the history.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// Revision returns the SHA-256, in lowercase hex, of the file's bytes as
// this handle last read or wrote them: the revision a snapshot of the file
// reports.
func (h *History) Revision() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.revision
}

// Close releases the writer lock and closes the file. Later appends fail
// with ErrClosed; later calls to Close do nothing.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	h.unregister()
	if h.torn && h.f.Truncate(h.state.size) == nil && h.f.Sync() == nil {
		h.torn = false
	}
	return h.f.Close()
}

// Append appends msg to the history as one new line, made durable (fsync)
// before Append returns.
//
// msg must be structurally valid (else ErrInvalidMessage); its provenance
// session id and runtime id must equal the header's (else
// ErrIdentityMismatch); the file after the append must stay within the
// byte and message bounds (else ErrHistoryTooLarge); and the history plus
// msg must validate as a snapshot, with the same verdict and the same
// issues as ValidateHistorySnapshot on the whole history (else a
// *ValidationError, for example for a duplicate id). A refused message
// leaves the file as it was, and the handle usable.
//
// Before writing, Append compares the file's status (which file the path
// names, its size, its modification and status change times) with the one
// this handle's last write left. When anything differs, the file is hashed
// again: a file whose bytes are still the ones this handle knows is
// accepted, anything else (bytes rewritten, appended or removed by another
// program) fails with ErrConcurrentWrite, and makes every later append
// fail the same way: Close the handle and open the file again. Then the
// record is written with one write at the end of the file and synced. A
// write or sync that fails is taken back (the file is truncated to the
// acknowledged bytes and synced) before Append returns an error wrapping
// ErrWriteFailed or ErrReadOnly and the operating system's error; the
// handle stays usable. When the bytes cannot be taken back, that error
// sticks, and RecoverHistory repairs the file after Close.
func (h *History) Append(ctx context.Context, msg contract.Message) error {
	return h.append(ctx, "append", &msg, h.limits)
}

// append appends m within both h's bounds and l.
func (h *History) append(ctx context.Context, op string, m *contract.Message, l limits) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return parseError(op, h.path, 0, ErrClosed, "history is closed", nil)
	case h.err != nil:
		return h.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	line, err := appendRecord(nil, m)
	if err != nil {
		return parseError(op, h.path, 0, ErrInvalidMessage, "message is not structurally valid", err)
	}
	hd := &h.state.header
	p := &m.Provenance
	if p.SessionID != hd.SessionID || p.RuntimeID == nil || *p.RuntimeID != hd.RuntimeID {
		return parseError(op, h.path, 0, ErrIdentityMismatch, "message belongs to another session or runtime", nil)
	}
	if h.state.size+int64(len(line)) > min(h.limits.maxBytes, l.maxBytes) {
		return parseError(op, h.path, 0, ErrHistoryTooLarge, "append would exceed the byte bound", nil)
	}
	if h.count+1 > min(h.limits.maxMessages, l.maxMessages) {
		return parseError(op, h.path, 0, ErrHistoryTooLarge, "append would exceed the message bound", nil)
	}
	if err := h.checkUnchanged(ctx, op); err != nil {
		return err
	}
	added := []contract.Message{*m}
	ids, calls, ok := h.state.appendedValid(&h.state, len(added), func(i int) contract.Message { return added[i] })
	if !ok {
		if err := h.validateWhole(ctx, op, m, line); err != nil {
			return err
		}
		ids, calls = indexOfMessages(added)
	}
	// The handle holds the file's writer lock, so the file ends at
	// state.size (checkUnchanged): the line is written there.
	n, err := h.f.WriteAt(line, h.state.size)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = h.f.Sync()
	}
	if err != nil {
		return h.takeBack(op, err)
	}
	h.digest.Write(line)
	h.state.size += int64(len(line))
	h.state.revision = hex.EncodeToString(h.digest.Sum(nil))
	h.count++
	h.state.ids = merge(h.state.ids, ids)
	h.state.calls = merge(h.state.calls, calls)
	h.restamp()
	return nil
}

// restamp records the file's status after this handle changed it. When it
// cannot be read, the next append proves the file by its hash instead.
func (h *History) restamp() {
	if fi, err := h.f.Stat(); err == nil {
		h.stamp = stampOf(fi)
	} else {
		h.stamp = fileStamp{}
	}
}

// takeBack handles a record that could not be written or synced (cause):
// it truncates the file back to the bytes acknowledged so far and syncs
// it, so that the file is as it was before the append, and returns the
// error, which names what the operating system said. The handle stays
// usable. When the bytes cannot be taken back, the error says so and
// sticks: every later append fails with it, and RecoverHistory repairs
// the file once the handle is closed (Close tries once more).
func (h *History) takeBack(op string, cause error) error {
	err := h.f.Truncate(h.state.size)
	if err == nil {
		err = h.f.Sync()
	}
	if err != nil {
		h.torn = true
		h.err = writeError(op, h.path, "record cannot be written, and its bytes cannot be taken back", errors.Join(cause, err))
		return h.err
	}
	h.restamp()
	return writeError(op, h.path, "record cannot be written; the file is as it was", cause)
}

// checkUnchanged fails with ErrConcurrentWrite, for this and every later
// append, when the file is no longer the one this handle knows.
func (h *History) checkUnchanged(ctx context.Context, op string) error {
	fi, err := h.f.Stat()
	if err != nil {
		return parseError(op, h.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	named, err := os.Stat(h.path)
	if err != nil || !os.SameFile(fi, named) {
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was replaced", err)
		return h.err
	}
	if h.stamp.equal(stampOf(fi)) {
		return nil
	}
	if fi.Size() == h.state.size {
		d := sha256.New()
		if _, err := io.Copy(d, ctxReader{ctx, io.NewSectionReader(h.f, 0, h.state.size)}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return parseError(op, h.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
		}
		if hex.EncodeToString(d.Sum(nil)) == h.state.revision {
			h.stamp = stampOf(fi)
			return nil
		}
	}
	h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file changed outside this handle", nil)
	return h.err
}

// validateWhole validates the history plus m the way
// ValidateHistorySnapshot does, reading the file again: the quick checks
// found something, and only the whole history gives the full validator's
// issue list. It returns nil when the full validator finds nothing.
func (h *History) validateWhole(ctx context.Context, op string, m *contract.Message, line []byte) error {
	r := ctxReader{ctx, io.NewSectionReader(h.f, 0, h.state.size)}
	data := make([]byte, h.state.size)
	if _, err := io.ReadFull(r, data); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return parseError(op, h.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	hist, err := parseHistoryCtx(ctx, op, h.path, data, h.limits)
	if err != nil {
		return err
	}
	// The revision the file would have: the saved SHA-256 state resumed
	// with the new line.
	next, err := copyDigest(h.digest)
	if err != nil {
		return err
	}
	next.Write(line)
	msgs := append(hist.messages, *m)
	snap := snapshotOf(&h.state.header, h.root, hex.EncodeToString(next.Sum(nil)), msgs, nil)
	if issues := contract.ValidateHistorySnapshot(&snap); len(issues) > 0 {
		return &ValidationError{Issues: issues}
	}
	return nil
}

// ctxReader reads from r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p[:min(len(p), readChunk)])
}
