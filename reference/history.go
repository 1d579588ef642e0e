package reference

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// HeaderType is the "type" of a history file's header line.
const HeaderType = "ds4-runtime-session-v1"

// DefaultRuntimeID is the runtime id used when none is given.
const DefaultRuntimeID = "jsonl-reference"

// Default bounds of a history file.
//
// Every bound in this package follows one convention, whether it is set
// with Options.MaxBytes and Options.MaxMessages or with WithMaxBytes and
// WithMaxMessages: 0 means the default and a negative bound is refused
// with ErrInvalidOptions.
const (
	DefaultMaxBytes    int64 = 64 << 20
	DefaultMaxMessages int   = 100_000
)

// Header is the first line of a history file: the runtime and session the
// history belongs to and the canonical project root it was recorded under.
type Header struct {
	RuntimeID   string
	SessionID   string
	ProjectRoot string
}

// HistoryOption changes the bounds CreateHistory, CreateAndOpenHistory,
// OpenHistory and AppendMessage enforce.
type HistoryOption func(*limits)

// WithMaxBytes sets the byte bound: 0 means DefaultMaxBytes, and a
// negative bound makes the call fail with ErrInvalidOptions.
func WithMaxBytes(n int64) HistoryOption { return func(l *limits) { l.maxBytes = n } }

// WithMaxMessages sets the message bound: 0 means DefaultMaxMessages, and a
// negative bound makes the call fail with ErrInvalidOptions.
func WithMaxMessages(n int) HistoryOption { return func(l *limits) { l.maxMessages = n } }

type limits struct {
	maxBytes    int64
	maxMessages int
}

// resolve applies the bounds convention: 0 is the default, a negative
// bound is an error.
func (l limits) resolve() (limits, error) {
	if l.maxBytes < 0 || l.maxMessages < 0 {
		return l, optionsError("bounds must not be negative")
	}
	if l.maxBytes == 0 {
		l.maxBytes = DefaultMaxBytes
	}
	if l.maxMessages == 0 {
		l.maxMessages = DefaultMaxMessages
	}
	return l, nil
}

func newLimits(opts []HistoryOption) (limits, error) {
	var l limits
	for _, o := range opts {
		o(&l)
	}
	return l.resolve()
}

// resolveRoot returns the canonical (absolute, symlink-free) form of root.
func resolveRoot(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

var recordPrefix = []byte(`{"type":"message","message":`)

func appendHeader(dst []byte, h *Header) []byte {
	dst = append(dst, `{"type":`...)
	dst = jsonw.AppendString(dst, HeaderType)
	dst = append(dst, `,"runtimeId":`...)
	dst = jsonw.AppendString(dst, h.RuntimeID)
	dst = append(dst, `,"sessionId":`...)
	dst = jsonw.AppendString(dst, h.SessionID)
	dst = append(dst, `,"projectRoot":`...)
	dst = jsonw.AppendString(dst, h.ProjectRoot)
	return append(dst, "}\n"...)
}

func appendRecord(dst []byte, m *contract.Message) ([]byte, error) {
	if err := contract.ValidateMessage(m); err != nil {
		return dst, err
	}
	out, err := contract.AppendMessageJSON(append(dst, recordPrefix...), m)
	if err != nil {
		return dst, err
	}
	return append(out, "}\n"...), nil
}

// history is a parsed history file.
type history struct {
	header   Header
	root     string // the header's project root, resolved
	messages []contract.Message
}

// parseError builds a read error about a line (0 for the file).
func parseError(op, path string, line int, kind error, reason string, cause error) error {
	return &HistoryError{Op: op, Path: path, Line: line, Reason: reason, Kind: kind, Cause: cause}
}

// checkBytes applies the whole-file checks: size, termination, encoding.
func checkBytes(op, path string, data []byte, l limits) error {
	switch {
	case len(data) == 0:
		return parseError(op, path, 0, ErrHistoryCorrupt, "file is empty", nil)
	case int64(len(data)) > l.maxBytes:
		return parseError(op, path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
	case data[len(data)-1] != '\n':
		return parseError(op, path, 0, ErrHistoryCorrupt, "unterminated final record", nil)
	case !utf8.Valid(data):
		return parseError(op, path, 0, ErrHistoryCorrupt, "file is not valid UTF-8", nil)
	}
	return nil
}

// parseHistory parses a whole file's bytes. Any failure rejects the file.
func parseHistory(op, path string, data []byte, l limits) (*history, error) {
	return parseHistoryCtx(context.Background(), op, path, data, l)
}

// parseHistoryCtx is parseHistory, stopping with ctx's error when ctx
// ends.
func parseHistoryCtx(ctx context.Context, op, path string, data []byte, l limits) (*history, error) {
	if err := checkBytes(op, path, data, l); err != nil {
		return nil, err
	}
	nl := bytes.IndexByte(data, '\n')
	h, err := decodeHeader(data[:nl])
	if err != nil {
		return nil, parseError(op, path, 1, ErrHistoryCorrupt, err.Error(), nil)
	}
	if contract.IsBlank(h.ProjectRoot) {
		return nil, parseError(op, path, 1, ErrHistoryCorrupt, "header project root does not resolve", nil)
	}
	root, err := resolveRoot(h.ProjectRoot)
	if err != nil {
		return nil, rootError(op, path, err)
	}
	body := data[nl+1:]
	if bytes.Count(body, []byte{'\n'}) > l.maxMessages {
		return nil, parseError(op, path, 0, ErrHistoryTooLarge, "file exceeds the message bound", nil)
	}
	msgs, err := decodeRecords(ctx, op, path, body, 2, nil, false)
	if err != nil {
		return nil, err
	}
	return &history{header: h, root: root, messages: msgs}, nil
}

// parallelChunk is the smallest body worth splitting across goroutines.
const parallelChunk = 1 << 20

// decodeRecords decodes the message lines of body (which ends in '\n'),
// appending to msgs; firstLine is the file line number of body's first line.
// A large body is split at line ends into one chunk per processor, decoded
// concurrently; the reported error is the one of the earliest bad line, as
// in a sequential decode. Decoding stops with ctx's error when ctx ends.
// When shares is set, body is given up (nothing writes to it again) and the
// messages' strings are parts of it (contract.DecodeMessageString);
// otherwise they are copies.
func decodeRecords(ctx context.Context, op, path string, body []byte, firstLine int, msgs []contract.Message, shares bool) ([]contract.Message, error) {
	n := bytes.Count(body, []byte{'\n'})
	base := len(msgs)
	msgs = slices.Grow(msgs, n)[:base+n]
	workers := min(runtime.GOMAXPROCS(0), len(body)/parallelChunk+1)
	if workers <= 1 {
		if err := decodeChunk(ctx, op, path, body, firstLine, msgs[base:], shares); err != nil {
			return nil, err
		}
		return msgs, nil
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	rest, index := body, 0
	for w := range workers {
		chunk := rest
		if w < workers-1 && len(rest) > 0 {
			cut := min(len(body)/workers, len(rest))         // at least 1
			end := bytes.IndexByte(rest[cut-1:], '\n') + cut // rest ends in '\n'
			chunk = rest[:end]
		}
		lines := bytes.Count(chunk, []byte{'\n'})
		out := msgs[base+index : base+index+lines]
		line := firstLine + index
		wg.Go(func() { errs[w] = decodeChunk(ctx, op, path, chunk, line, out, shares) })
		rest, index = rest[len(chunk):], index+lines
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// ctxCheckBytes is how many bytes a decode reads between two looks at its
// context.
const ctxCheckBytes = 256 << 10

// decodeChunk decodes len(out) lines of body into out, until ctx ends,
// sharing body's bytes as decodeRecords does.
func decodeChunk(ctx context.Context, op, path string, body []byte, line int, out []contract.Message, shares bool) error {
	unchecked := 0
	for i := range out {
		if unchecked >= ctxCheckBytes {
			if err := ctx.Err(); err != nil {
				return err
			}
			unchecked = 0
		}
		nl := bytes.IndexByte(body, '\n')
		unchecked += nl + 1
		m, reason, cause := decodeRecord(body[:nl], shares)
		if reason != "" {
			return parseError(op, path, line+i, ErrHistoryCorrupt, reason, cause)
		}
		out[i] = m
		body = body[nl+1:]
	}
	return nil
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// decodeRecord decodes one message line, sharing its bytes as
// decodeRecords does. On failure it returns a fixed reason and the
// underlying cause.
func decodeRecord(line []byte, shares bool) (contract.Message, string, error) {
	decode := contract.DecodeMessage
	if shares {
		decode = func(b []byte) (contract.Message, error) { return contract.DecodeMessageString(keep(b)) }
	}
	t := line
	for len(t) > 0 && isJSONSpace(t[len(t)-1]) {
		t = t[:len(t)-1]
	}
	if len(t) == 0 {
		return contract.Message{}, "blank line", nil
	}
	// Fast path: the exact shape this package writes. When the inner
	// message decodes, the line is that record and nothing else, which the
	// general path below would accept with the same result.
	if bytes.HasPrefix(t, recordPrefix) && t[len(t)-1] == '}' {
		if m, err := decode(t[len(recordPrefix) : len(t)-1]); err == nil {
			return m, "", nil
		}
	}
	var (
		typ, msg       []byte
		hasTyp, hasMsg bool
	)
	s := jsonw.NewScanner(line)
	err := s.Object(func(name string) error {
		var err error
		switch string(name) {
		case "type":
			typ, err = s.Raw()
			hasTyp = true
		case "message":
			msg, err = s.Raw()
			hasMsg = true
		default:
			err = s.Skip()
		}
		return err
	})
	if err == nil {
		err = s.End()
	}
	if err != nil {
		return contract.Message{}, "malformed JSON record", nil
	}
	if !hasTyp || string(typ) != `"message"` {
		return contract.Message{}, "record is not a message record", nil
	}
	if !hasMsg {
		return contract.Message{}, "message record has no message", nil
	}
	m, err := decode(msg)
	if err != nil {
		return contract.Message{}, "message is not structurally valid", err
	}
	return m, "", nil
}

type headerError string

func (e headerError) Error() string { return string(e) }

func decodeHeader(line []byte) (Header, error) {
	var (
		h    Header
		typ  string
		seen [4]bool
	)
	s := jsonw.NewScanner(line)
	err := s.Object(func(name string) error {
		var err error
		switch string(name) {
		case "type":
			seen[0] = true
			typ, err = s.String()
		case "runtimeId":
			seen[1] = true
			h.RuntimeID, err = s.String()
		case "sessionId":
			seen[2] = true
			h.SessionID, err = s.String()
		case "projectRoot":
			seen[3] = true
			h.ProjectRoot, err = s.String()
		default:
			err = s.Skip()
		}
		return err
	})
	if err == nil {
		err = s.End()
	}
	switch {
	case err != nil:
		return h, headerError("malformed header")
	case !seen[0] || typ != HeaderType:
		return h, headerError("header has the wrong record type")
	case !seen[1] || !seen[2] || !seen[3]:
		return h, headerError("header is missing a member")
	}
	return h, nil
}

// openError classifies a failure to open a history file with flag: a file
// that the operating system will not let this process open as asked (the
// file's or a folder's permissions, or a read-only file system for a
// writer) is ErrReadOnly.
func openError(op, path string, flag int, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return parseError(op, path, 0, ErrHistoryMissing, "file does not exist", err)
	case flag&(os.O_WRONLY|os.O_RDWR) != 0:
		return fsError(op, path, "file cannot be opened for writing", ErrHistoryCorrupt, err)
	case errors.Is(err, fs.ErrPermission):
		return parseError(op, path, 0, ErrReadOnly, "file may not be read", err)
	}
	return parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be opened", err)
}

// openRegular opens the history file at path without waiting (see
// openNoWait) and refuses anything but a regular file before a byte is
// read: a FIFO, a device or a folder in its place is an error, not a wait.
func openRegular(op, path string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := openNoWait(path, flag, 0)
	if err != nil {
		return nil, nil, openError(op, path, flag, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, parseError(op, path, 0, ErrHistoryCorrupt, "not a regular file", nil)
	}
	return f, fi, nil
}

// readChunk is how much a read asks for at a time; the context is checked
// between reads.
const readChunk = 4 << 20

// readOpen reads an open regular history file from its current offset to
// EOF, within the byte bound; fi is the file's status. It stops with
// ctx's error when ctx ends.
func readOpen(ctx context.Context, op, path string, f *os.File, fi fs.FileInfo, l limits) ([]byte, error) {
	if fi.Size() > l.maxBytes {
		return nil, parseError(op, path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
	}
	// Read to EOF (the file may have grown since the stat), at most one
	// byte past the bound.
	buf := make([]byte, 0, fi.Size()+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), len(buf)+readChunk)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > l.maxBytes {
			return nil, parseError(op, path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
		}
	}
}

// copyDigest returns an independent copy of d, a SHA-256 state, so that
// hashing more bytes into the copy leaves d as it was.
func copyDigest(d hash.Hash) (hash.Hash, error) {
	state, err := d.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, err
	}
	next := sha256.New()
	if err := next.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return nil, err
	}
	return next, nil
}

func revisionOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// snapshotOf builds the snapshot of a history; nil groups are derived from
// the messages.
func snapshotOf(h *Header, root, revision string, msgs []contract.Message, groups []contract.ToolAtomicGroup) contract.HistorySnapshot {
	if groups == nil {
		groups = contract.BuildToolAtomicGroups(msgs)
	}
	return contract.HistorySnapshot{
		SchemaVersion:    contract.HistorySchemaVersion,
		RuntimeID:        h.RuntimeID,
		SessionID:        h.SessionID,
		Revision:         revision,
		ProjectRoot:      root,
		Messages:         msgs,
		ToolAtomicGroups: groups,
	}
}

// CreateHistory writes a new history file at path holding the header h and
// messages, one record per line.
//
// h.RuntimeID is trimmed and defaults to DefaultRuntimeID; h.SessionID is
// trimmed and must not be blank; h.ProjectRoot is resolved to its canonical
// real path (it must exist). Every message must be structurally valid
// (contract.ValidateMessage) and the whole history must validate as a
// snapshot; a *ValidationError says which codes failed. A history that
// would exceed the bounds is refused with ErrHistoryTooLarge.
//
// Missing parent folders are created with mode 0700. The history is
// written to a temporary file (mode 0600) in the same folder and synced,
// then linked to path, which fails if path exists: an existing file is
// never overwritten (ErrExists). The temporary name is then removed and
// the folder synced. A process killed at any moment leaves either no file
// at path or the complete history.
func CreateHistory(ctx context.Context, path string, h Header, messages []contract.Message, opts ...HistoryOption) error {
	data, _, _, err := prepareNew(ctx, path, h, messages, opts)
	if err != nil {
		return err
	}
	f, err := writeNew(ctx, createOp, path, data)
	if err != nil {
		return err
	}
	f.Close()
	return nil
}

// createOp names the creation of a history in errors.
const createOp = "create"

// prepareNew checks a new history and returns its file bytes, its
// resolved project root and its limits, with the folders of path created
// (mode 0700): what every creation of a history does before writing it.
func prepareNew(ctx context.Context, path string, h Header, messages []contract.Message, opts []HistoryOption) ([]byte, string, limits, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", limits{}, err
	}
	l, err := newLimits(opts)
	if err != nil {
		return nil, "", limits{}, err
	}
	data, root, err := encodeHistory(createOp, path, &h, messages, l)
	if err != nil {
		return nil, "", limits{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, "", limits{}, fsError(createOp, path, "parent folder cannot be created", ErrInvalidHeader, err)
	}
	return data, root, l, nil
}

// encodeHistory checks a new history and returns its file bytes and its
// resolved project root; h is updated to the header written.
func encodeHistory(op, path string, h *Header, messages []contract.Message, l limits) ([]byte, string, error) {
	h.RuntimeID = jsstring.Trim(h.RuntimeID)
	if h.RuntimeID == "" {
		h.RuntimeID = DefaultRuntimeID
	}
	h.SessionID = jsstring.Trim(h.SessionID)
	if h.SessionID == "" {
		return nil, "", parseError(op, path, 0, ErrInvalidHeader, "session id is blank", nil)
	}
	if contract.IsBlank(h.ProjectRoot) {
		return nil, "", parseError(op, path, 0, ErrInvalidHeader, "project root is blank", nil)
	}
	root, err := resolveRoot(h.ProjectRoot)
	if err != nil {
		return nil, "", fsError(op, path, "project root does not resolve", ErrInvalidHeader, err)
	}
	h.ProjectRoot = root
	data := appendHeader(nil, h)
	for i := range messages {
		if data, err = appendRecord(data, &messages[i]); err != nil {
			return nil, "", parseError(op, path, 0, ErrInvalidMessage, "message is not structurally valid", err)
		}
	}
	if int64(len(data)) > l.maxBytes {
		return nil, "", parseError(op, path, 0, ErrHistoryTooLarge, "history exceeds the byte bound", nil)
	}
	if len(messages) > l.maxMessages {
		return nil, "", parseError(op, path, 0, ErrHistoryTooLarge, "history exceeds the message bound", nil)
	}
	snap := snapshotOf(h, root, revisionOf(data), messages, nil)
	if issues := contract.ValidateHistorySnapshot(&snap); len(issues) > 0 {
		return nil, "", &ValidationError{Issues: issues}
	}
	return data, root, nil
}

// createSuffix is the middle of the temporary name a history is written
// under before it is linked to its path: ".<name>.create-<random>" in the
// same folder. The creator holds the temporary file's exclusive lock until
// it is done; a later create of the same name removes the temporary files
// whose lock nobody holds (their creator is gone).
const createSuffix = ".create-"

// writeNew writes data to a new file at path without ever exposing a
// partial file there (see CreateHistory). It returns the new file, open
// for reading and writing, holding its writer lock.
func writeNew(ctx context.Context, op, path string, data []byte) (*os.File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	removeStaleTemps(dir, base)
	tmp, err := lockedTemp(ctx, op, path, dir, "."+base+createSuffix+"*")
	if err != nil {
		return nil, err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if err != nil {
		os.Remove(tmp.Name())
		tmp.Close()
		return nil, writeError(op, path, "file cannot be written", err)
	}
	err = os.Link(tmp.Name(), path)
	os.Remove(tmp.Name())
	if err != nil {
		tmp.Close()
		if errors.Is(err, fs.ErrExist) {
			return nil, parseError(op, path, 0, ErrExists, "file already exists", err)
		}
		return nil, writeError(op, path, "file cannot be created", err)
	}
	if err := syncDir(dir); err != nil {
		tmp.Close()
		return nil, writeError(op, path, "folder cannot be synced", err)
	}
	return tmp, nil
}

// lockedTemp creates a new temporary file in dir named after pattern
// (createTemp) and takes its exclusive lock, so that removeStaleTemps
// leaves it alone. A name removed by removeStaleTemps before the lock was
// taken is given up for a new one.
func lockedTemp(ctx context.Context, op, path, dir, pattern string) (*os.File, error) {
	for {
		tmp, err := createTemp(dir, pattern)
		if err != nil {
			return nil, writeError(op, path, "file cannot be created", err)
		}
		if err := waitFlock(ctx, tmp, true); err != nil && !errors.Is(err, errLocksUnsupported) {
			os.Remove(tmp.Name())
			tmp.Close()
			return nil, lockError(op, path, err)
		}
		fi, err := tmp.Stat()
		if err != nil {
			os.Remove(tmp.Name())
			tmp.Close()
			return nil, writeError(op, path, "file cannot be created", err)
		}
		if now, err := os.Lstat(tmp.Name()); err == nil && os.SameFile(fi, now) {
			return tmp, nil
		}
		tmp.Close()
	}
}

// createTemp is os.CreateTemp (mode 0600, the last "*" of pattern
// replaced by a random string) with the file opened for appending
// (O_APPEND), as a History needs it.
func createTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// removeStaleTemps removes the temporary files ".<base>.create-*" in dir
// whose creator is gone: files nobody holds a lock on. Each is opened
// without following a symbolic link and without waiting, and removed only
// while this process holds its exclusive lock and the name still leads to
// it. A creator still at work holds its file's lock and keeps it. Failures
// are ignored: a stale file left behind is harmless.
func removeStaleTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + createSuffix
	for _, d := range entries {
		if !strings.HasPrefix(d.Name(), prefix) || !d.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, d.Name())
		f, err := openNoFollow(name, os.O_RDONLY)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if ok, err := tryFlock(f, true); ok && err == nil {
				if now, err := os.Lstat(name); err == nil && os.SameFile(fi, now) {
					os.Remove(name)
				}
			}
		}
		f.Close()
	}
}

// AppendMessage appends msg to the history at path as one new line.
//
// When this process holds a History open on that file (through any name
// or link), the message is appended through it: History.Append, in
// constant time, with the bounds of both. Otherwise it is OpenHistory,
// History.Append and Close in one call: it reads and validates the whole
// file first, so it costs about a cold read, and waits for the writer lock
// as OpenHistory does (bounded by ctx, then ErrLocked). A runtime that
// appends many messages keeps a History open and calls Append; the
// one-shot call is for a process that appends now and then.
//
// The checks and errors are History.Append's.
func AppendMessage(ctx context.Context, path string, msg contract.Message, opts ...HistoryOption) error {
	const op = "append"
	if err := ctx.Err(); err != nil {
		return err
	}
	l, err := newLimits(opts)
	if err != nil {
		return err
	}
	if _, err := appendRecord(nil, &msg); err != nil {
		return parseError(op, path, 0, ErrInvalidMessage, "message is not structurally valid", err)
	}
	if h := openHandle(path); h != nil {
		// A History this process holds open on the file: append through
		// it, in constant time. One closed meanwhile is passed over.
		if err := h.append(ctx, op, &msg, l); !errors.Is(err, ErrClosed) {
			return err
		}
	}
	h, err := openHistory(ctx, op, path, l)
	if err != nil {
		return err
	}
	err = h.append(ctx, op, &msg, l)
	// A record appended is synced already: closing cannot undo it, so a
	// failure to close does not turn the append into an error.
	h.Close()
	return err
}
