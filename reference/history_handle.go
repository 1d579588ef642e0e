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
	stamp  fileStamp // the file's status at this handle's last check
	err    error     // once set, every append fails with it
	// torn is set when the bytes of a record that was not acknowledged
	// could not be taken back: they begin at tornAt, tornLen long.
	torn            bool
	tornAt, tornLen int64
	closed          bool
	key             fileKey // the file's identity in handles, when keyed
	keyed           bool
	// checking, when set, is called after a record is synced, just
	// before the file is checked again (tests change the file there).
	checking func()
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
	// O_APPEND: a record lands at the file's end, whatever another
	// program did to the file since the handle last looked (see append).
	f, fi, err := openRegular(op, path, os.O_RDWR|os.O_APPEND)
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
	if err := stillNamed(op, path, opened, "file was replaced while waiting for the lock"); err != nil {
		return nil, err
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
	const op = createOp
	data, root, l, err := prepareNew(ctx, path, header, messages, opts)
	if err != nil {
		return nil, err
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
	if err != nil {
		err = parseError(op, path, 0, ErrConcurrentWrite, "file cannot be found after it was created", err)
	} else {
		err = stillNamed(op, path, fi, "file was replaced after it was created")
	}
	if err != nil {
		f.Close()
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
	if h.torn {
		if _, err := h.unwrite(h.tornAt, h.tornLen); err == nil {
			h.torn = false
		}
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
// this handle's last check saw. When anything differs, the file is hashed
// again: a file whose bytes are still the ones this handle knows is
// accepted, anything else (bytes rewritten, appended or removed by another
// program, the file removed, renamed or replaced) fails with
// ErrConcurrentWrite, and makes every later append fail the same way:
// Close the handle and open the file again (RecoverHistory first, to learn
// what a truncation took). Then the record is written with one write at
// the end of the file (O_APPEND: never beyond it, so never after a hole)
// and synced, and the file is checked again: the record must have landed
// at the end of the acknowledged bytes, the file must end with it, and the
// path must still name the file. When not, the record is taken back and
// the append fails with ErrConcurrentWrite, as above. Only a change after
// that last check, in the moment before Append returns, goes unseen by
// this append; the next one notices it.
//
// A write or sync that fails is taken back (the file is truncated to the
// acknowledged bytes and synced) before Append returns an error wrapping
// ErrWriteFailed or ErrReadOnly and the operating system's error; the
// handle stays usable. When the bytes cannot be taken back, that error
// sticks, and RecoverHistory repairs the file after Close. When a folder
// on the path may not be searched, the append fails with ErrReadOnly
// (wrapping EACCES), and the handle appends again once it may, if the
// file is still the one it knows.
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
	// The file was opened with O_APPEND: the record lands at the file's
	// end, never beyond it, so a file another program truncated since
	// checkUnchanged gets no hole; where it landed is where the file
	// offset is after the write, less what was written.
	n, err := h.f.Write(line)
	end, serr := h.f.Seek(0, io.SeekCurrent)
	if serr != nil {
		// Where the bytes went is unknown: none can be taken back.
		h.err = writeError(op, h.path, "record was written where it cannot be found", errors.Join(err, serr))
		return h.err
	}
	at := end - int64(n)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = h.f.Sync()
	}
	if err != nil {
		return h.takeBack(op, at, int64(n), err)
	}
	if h.checking != nil {
		h.checking()
	}
	if err := h.checkWritten(op, at, int64(len(line))); err != nil {
		return err
	}
	h.digest.Write(line)
	h.state.size += int64(len(line))
	h.state.revision = hex.EncodeToString(h.digest.Sum(nil))
	h.count++
	h.state.ids = merge(h.state.ids, ids)
	h.state.calls = merge(h.state.calls, calls)
	return nil
}

// checkWritten checks the file after a record of n bytes was written at
// offset at and synced, before the append is acknowledged: the record
// must have landed at the end of the acknowledged bytes, the file must
// end with it, and the path must still name the file. Otherwise another
// program truncated, wrote or replaced the file while the record was
// written: the record is taken back (unwrite) and the error, which sticks,
// says what happened. When a folder on the path may no longer be searched,
// the record is taken back too and the error is ErrReadOnly; the handle
// stays usable. On success the file's status is the handle's new stamp.
//
// What no check can see is a change after it: from here to the moment
// Append returns.
func (h *History) checkWritten(op string, at, n int64) error {
	fi, ferr := h.f.Stat()
	var named fs.FileInfo
	var nerr error
	if ferr == nil {
		named, nerr = os.Stat(h.path)
	}
	var err error
	switch size := h.state.size; {
	case ferr != nil:
		err = parseError(op, h.path, 0, ErrHistoryCorrupt, "file cannot be read", ferr)
	case at < size || (at == size && fi.Size() < at+n):
		err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was truncated by another program", nil)
	case at > size || fi.Size() > at+n:
		err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was written by another program", nil)
	default:
		err = h.pathError(op, named, nerr, fi)
	}
	if err == nil {
		h.stamp = stampOf(fi)
		return nil
	}
	kept, uerr := h.unwrite(at, n)
	switch {
	case uerr != nil:
		h.torn, h.tornAt, h.tornLen = true, at, n
		h.err = writeError(op, h.path, "record cannot be checked, and its bytes cannot be taken back", errors.Join(err, uerr))
		return h.err
	case kept:
		// Another program wrote after the record: it stays, not
		// acknowledged.
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was written by another program; the record stays in it, not acknowledged", nil)
		return h.err
	case errors.Is(err, ErrConcurrentWrite):
		h.err = err
	default:
		h.restamp()
	}
	return err
}

// pathError returns nil when named (the status of the path, or nerr) is
// the file open as fi, else the error: ErrReadOnly when a folder on the
// path may not be searched (the file may still be the one this handle
// knows, so nothing sticks), else ErrConcurrentWrite, which sticks (h.err).
func (h *History) pathError(op string, named fs.FileInfo, nerr error, fi fs.FileInfo) error {
	switch {
	case nerr == nil && os.SameFile(fi, named):
		return nil
	case nerr == nil:
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was replaced", nil)
	case errors.Is(nerr, fs.ErrPermission):
		return parseError(op, h.path, 0, ErrReadOnly, "a folder on the path may not be searched", nerr)
	case errors.Is(nerr, fs.ErrNotExist):
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was removed or renamed", nerr)
	default:
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file cannot be found at its path", nerr)
	}
	return h.err
}

// stillNamed returns nil when the path still names the file opened as
// opened, else the error: ErrReadOnly when a folder on the path may not
// be searched, else ErrConcurrentWrite with reason.
func stillNamed(op, path string, opened fs.FileInfo, reason string) error {
	now, err := os.Stat(path)
	switch {
	case err == nil && os.SameFile(opened, now):
		return nil
	case errors.Is(err, fs.ErrPermission):
		return parseError(op, path, 0, ErrReadOnly, "a folder on the path may not be searched", err)
	}
	return parseError(op, path, 0, ErrConcurrentWrite, reason, err)
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

// takeBack handles a record that could not be written or synced (cause),
// whose n bytes written so far begin at offset at: it takes them back
// (unwrite), so that the file is as it was before the append, and returns
// the error, which names what the operating system said. The handle stays
// usable. When the bytes cannot be taken back, the error says so and
// sticks: every later append fails with it, and RecoverHistory repairs
// the file once the handle is closed (Close tries once more). When the
// record did not land at the end of the acknowledged bytes, another
// program truncated or wrote the file: that error sticks instead.
func (h *History) takeBack(op string, at, n int64, cause error) error {
	kept, err := h.unwrite(at, n)
	switch {
	case err != nil:
		h.torn, h.tornAt, h.tornLen = true, at, n
		h.err = writeError(op, h.path, "record cannot be written, and its bytes cannot be taken back", errors.Join(cause, err))
		return h.err
	case at < h.state.size:
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "record cannot be written, and the file was truncated by another program", cause)
		return h.err
	case at > h.state.size || kept:
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "record cannot be written, and the file was written by another program", cause)
		return h.err
	}
	h.restamp()
	return writeError(op, h.path, "record cannot be written; the file is as it was", cause)
}

// unwrite takes back the n bytes this handle wrote at offset at, for a
// record it does not acknowledge: when the file ends within them or just
// after them, it is truncated to at and synced. When it is no longer
// than at, nothing of them is left to take back; when it goes on after
// them, another program wrote there, and they stay (kept). It never
// makes the file longer: when another program truncated the file below at
// between the look at its size and the truncation, the NUL bytes the
// truncation added are removed again (no record holds a NUL byte).
func (h *History) unwrite(at, n int64) (kept bool, err error) {
	fi, err := h.f.Stat()
	switch {
	case err != nil:
		return false, err
	case n == 0 || fi.Size() <= at:
		return false, nil
	case fi.Size() > at+n:
		return true, nil
	}
	if err := h.f.Truncate(at); err != nil {
		return false, err
	}
	if err := trimNUL(h.f, at); err != nil {
		return false, err
	}
	return false, h.f.Sync()
}

// trimNUL truncates f, which is size bytes long, to just after its last
// byte that is not NUL, when its last byte is NUL.
func trimNUL(f *os.File, size int64) error {
	buf := make([]byte, 64<<10)
	end := size
	for end > 0 {
		chunk := buf[:min(int64(len(buf)), end)]
		if _, err := f.ReadAt(chunk, end-int64(len(chunk))); err != nil {
			return err
		}
		i := len(chunk) - 1
		for i >= 0 && chunk[i] == 0 {
			i--
		}
		end -= int64(len(chunk) - 1 - i)
		if i >= 0 {
			break
		}
	}
	if end == size {
		return nil
	}
	return f.Truncate(end)
}

// checkUnchanged fails when the file is no longer the one this handle
// knows: with ErrConcurrentWrite, for this and every later append, when
// the path names another file or none, or the file was truncated, written
// or rewritten by another program; with ErrReadOnly, for this append
// only, when a folder on the path may not be searched. A file whose status
// changed but whose bytes still hash to the handle's revision (only its
// times or permissions changed) is accepted.
func (h *History) checkUnchanged(ctx context.Context, op string) error {
	fi, err := h.f.Stat()
	if err != nil {
		return parseError(op, h.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	named, err := os.Stat(h.path)
	if err := h.pathError(op, named, err, fi); err != nil {
		return err
	}
	size := h.state.size
	switch {
	case fi.Size() == size && h.stamp.equal(stampOf(fi)):
		return nil
	case fi.Size() < size:
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was truncated by another program", nil)
		return h.err
	case fi.Size() > size:
		h.err = parseError(op, h.path, 0, ErrConcurrentWrite, "file was written by another program", nil)
		return h.err
	}
	d := sha256.New()
	if _, err := io.Copy(d, ctxReader{ctx, io.NewSectionReader(h.f, 0, size)}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return parseError(op, h.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	if hex.EncodeToString(d.Sum(nil)) == h.state.revision {
		h.stamp = stampOf(fi)
		return nil
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
