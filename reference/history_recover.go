package reference

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Recovery says what RecoverHistory moved out of a history file.
type Recovery struct {
	// SideFile is the file next to the history that now holds the torn
	// record, or "" when nothing was moved.
	SideFile string
	// Offset is where the torn record began: the file's size after
	// recovery.
	Offset int64
	// Bytes is the length of the torn record.
	Bytes int64
	// Discarded reports that the torn record was removed without a side
	// file: there was no room to write one, and the record began as every
	// record this package writes begins (see RecoverHistory).
	Discarded bool
	// LostBytes and LostMessages say what another program took from the
	// history: how many of the bytes, and how many of the messages, that
	// the History this process holds open on the file had acknowledged
	// the file no longer holds after recovery (a torn record moved to
	// SideFile counts among them; the header is no message). They are
	// known only when RecoverHistory recovers through such a History, and
	// 0 otherwise.
	LostBytes    int64
	LostMessages int
}

// sideSuffix is the middle of a side file's name:
// "<history>.torn-<random>", next to the history.
const sideSuffix = ".torn-"

// RecoverHistory is for the runtime that owns the history file at path,
// after a writer was killed half way through a record (or a failed write
// could not be taken back). When, and only when, the file's last record
// is unterminated (its last byte is not '\n'), it copies the bytes after
// the last '\n' to a new side file next to the history (mode 0600,
// synced), truncates the file to its last complete line and syncs it, and
// reports what it moved. A file that is empty or whose last line is
// complete is not touched (a zero Recovery, nil error). A file with no
// complete line at all (a torn header) is refused with ErrHistoryCorrupt
// and left as it is.
//
// Nothing is deleted, with one exception: when there is no room for the
// side file (ENOSPC, EDQUOT or EFBIG) and the torn bytes begin as every
// record this package writes begins ({"type":"message","message":, or a
// part of it), they are the start of a record whose write never completed,
// so never acknowledged: the file is truncated without a side file, and
// the Recovery says Discarded. Any other tail without room for its side
// file is refused (ErrWriteFailed, naming the OS's error) and left as it
// is.
//
// It takes the writer lock, waiting as OpenHistory does; readers that read
// meanwhile wait for it as for a writer finishing a record. Recovery only
// moves the torn tail: whether the rest is a valid history is for the next
// read to say. A process killed during recovery leaves the file torn, or
// recovered; a side file it had begun stays behind, and recovering again
// writes a new one.
//
// When this process holds a History open on the file (through any name or
// link), RecoverHistory recovers through it, holding its lock, and
// compares the file with what that History acknowledged: after another
// program truncated the file (its appends then fail with
// ErrConcurrentWrite, "file was truncated by another program"), the
// Recovery's LostBytes and LostMessages say how many acknowledged bytes
// and messages are gone, also when the error says the file holds no
// complete line. The file's remaining records must be the first messages
// the History acknowledged, under its header; when they are not, another
// program rewrote the file, and the error wraps ErrConcurrentWrite
// ("file was rewritten by another program"). The History keeps failing
// with ErrConcurrentWrite: close it and open the file again. Without such
// a History, what was acknowledged is not known, and nothing is reported
// lost.
func RecoverHistory(ctx context.Context, path string) (Recovery, error) {
	const op = "recover"
	if err := ctx.Err(); err != nil {
		return Recovery{}, err
	}
	if h := openHandle(path); h != nil {
		// A History this process holds open on the file has its lock:
		// recover through it. One closed, or no longer named by path,
		// meanwhile is passed over.
		if r, err := h.recover(ctx, op, path); !errors.Is(err, errNotHeld) {
			return r, err
		}
	}
	f, opened, err := openRegular(op, path, os.O_RDWR)
	if err != nil {
		return Recovery{}, err
	}
	defer f.Close()
	if err := lockWriter(ctx, op, path, f); err != nil {
		return Recovery{}, err
	}
	if err := stillNamed(op, path, opened, "file was replaced while waiting for the lock"); err != nil {
		return Recovery{}, err
	}
	return recoverTail(ctx, op, path, f)
}

// errNotHeld: the History found for a path is closed, or the path names
// another file now.
var errNotHeld = errors.New("history is not held open")

// recover is RecoverHistory through h, for the file at path, which must
// be h's file (else errNotHeld); it reports what h acknowledged that the
// file no longer holds.
func (h *History) recover(ctx context.Context, op, path string) (Recovery, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return Recovery{}, errNotHeld
	}
	fi, err := h.f.Stat()
	if err != nil {
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	if named, err := os.Stat(path); err != nil || !os.SameFile(fi, named) {
		return Recovery{}, errNotHeld
	}
	r, err := recoverTail(ctx, op, path, h.f)
	if err != nil && !errors.Is(err, ErrHistoryCorrupt) {
		return r, err
	}
	lostBytes, lostMessages, lerr := h.lost(ctx, op, path)
	if lerr != nil {
		if err == nil || !errors.Is(lerr, ErrConcurrentWrite) {
			err = lerr
		}
		return r, err
	}
	r.LostBytes, r.LostMessages = lostBytes, lostMessages
	if lostBytes > 0 && h.err == nil {
		h.err = parseError("append", h.path, 0, ErrConcurrentWrite, "file was truncated by another program", nil)
	}
	return r, err
}

// lost compares the file with what h acknowledged and returns how many
// acknowledged bytes and messages it no longer holds: none when it is at
// least as long. A shorter file must hold h's header and then records of
// the first messages h acknowledged, in order, up to its last '\n' (a
// torn tail after it counts as lost); anything else was rewritten
// (ErrConcurrentWrite).
func (h *History) lost(ctx context.Context, op, path string) (int64, int, error) {
	fi, err := h.f.Stat()
	if err != nil {
		return 0, 0, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	size := fi.Size()
	if size >= h.state.size {
		return 0, 0, nil
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(ctxReader{ctx, io.NewSectionReader(h.f, 0, size)}, data); err != nil {
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		return 0, 0, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	rewritten := parseError(op, path, 0, ErrConcurrentWrite, "file was rewritten by another program", nil)
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	kept := 0
	for line := 1; len(data) > 0; line++ {
		nl := bytes.IndexByte(data, '\n')
		if line == 1 {
			if hd, err := decodeHeader(data[:nl]); err != nil || hd != h.state.header {
				return 0, 0, rewritten
			}
		} else {
			m, reason, _ := decodeRecord(data[:nl], false)
			if reason != "" || kept >= h.state.ids.len() || m.ID != h.state.ids.list[kept] {
				return 0, 0, rewritten
			}
			kept++
		}
		data = data[nl+1:]
	}
	return h.state.size - size, h.count - kept, nil
}

// recoverTail recovers the history open as f, whose writer lock the
// caller holds (see RecoverHistory).
func recoverTail(ctx context.Context, op, path string, f *os.File) (Recovery, error) {
	fi, err := f.Stat()
	if err != nil {
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	}
	cut, err := afterLastNewline(ctx, f, fi.Size())
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return Recovery{}, ctx.Err()
		}
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be read", err)
	case cut == fi.Size():
		return Recovery{}, nil
	case cut == 0:
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "file holds no complete line", nil)
	}
	real, err := realPath(path)
	if err != nil {
		return Recovery{}, fsError(op, path, "side file cannot be named", ErrHistoryCorrupt, err)
	}
	r := Recovery{Offset: cut, Bytes: fi.Size() - cut}
	side, err := saveTail(ctx, real, f, cut, fi.Size())
	switch {
	case err == nil:
		r.SideFile = side
	case ctx.Err() != nil:
		return Recovery{}, ctx.Err()
	case noRoom(err) && ownRecordStart(f, cut, r.Bytes):
		// No room for the side file, and the tail is the start of a
		// record written the way this package writes one: a write that
		// never completed, so never acknowledged. It is discarded.
		if side != "" {
			os.Remove(side)
		}
		r.Discarded = true
	default:
		return Recovery{}, writeError(op, path, "side file cannot be written", err)
	}
	err = f.Truncate(cut)
	if err == nil {
		// Another program that ignores the lock and truncated the file
		// below cut since it was read made that truncation lengthen it:
		// the NUL bytes it added go again.
		err = trimNUL(f, cut)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return Recovery{}, writeError(op, path, "file cannot be truncated", err)
	}
	return r, nil
}

// ownRecordStart reports whether the n bytes of f from offset off (a torn
// last line) begin as every record this package writes begins: with
// recordPrefix, or with a part of it when they are shorter.
func ownRecordStart(f *os.File, off, n int64) bool {
	head := make([]byte, min(n, int64(len(recordPrefix))))
	if _, err := f.ReadAt(head, off); err != nil {
		return false
	}
	return len(head) > 0 && bytes.HasPrefix(recordPrefix, head)
}

// afterLastNewline returns the offset just past the last '\n' in the first
// size bytes of f (size when the last byte is '\n', 0 when there is none),
// reading backwards.
func afterLastNewline(ctx context.Context, f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// saveTail copies bytes [from, to) of f to a new side file next to the
// history at real, syncs it and its folder, and returns its name (also
// with an error, when the side file was created).
func saveTail(ctx context.Context, real string, f *os.File, from, to int64) (string, error) {
	side, err := os.CreateTemp(filepath.Dir(real), filepath.Base(real)+sideSuffix+"*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(side, ctxReader{ctx, io.NewSectionReader(f, from, to-from)})
	if err == nil {
		err = side.Sync()
	}
	if cerr := side.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(real))
	}
	return side.Name(), err
}
