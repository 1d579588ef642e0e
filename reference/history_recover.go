package reference

import (
	"bytes"
	"context"
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
}

// sideSuffix is the middle of a side file's name:
// "<history>.torn-<random>", next to the history.
const sideSuffix = ".torn-"

// RecoverHistory is for the runtime that owns the history file at path,
// after a writer was killed half way through a record. When, and only
// when, the file's last record is unterminated (its last byte is not
// '\n'), it copies the bytes after the last '\n' to a new side file next to
// the history (mode 0600, synced), truncates the file to its last complete
// line and syncs it, and reports what it moved. A file that is empty or
// whose last line is complete is not touched (a zero Recovery, nil error);
// nothing is ever deleted. A file with no complete line at all (a torn
// header) is refused with ErrHistoryCorrupt and left as it is.
//
// It takes the writer lock, waiting as OpenHistory does, and keeps readers
// out while it truncates. Recovery only moves the torn tail: whether the
// rest is a valid history is for the next read to say. A process killed
// during recovery leaves the file torn, or recovered; a side file it had
// begun stays behind, and recovering again writes a new one.
func RecoverHistory(ctx context.Context, path string) (Recovery, error) {
	const op = "recover"
	if err := ctx.Err(); err != nil {
		return Recovery{}, err
	}
	f, opened, err := openRegular(op, path, os.O_RDWR)
	if err != nil {
		return Recovery{}, err
	}
	defer f.Close()
	if err := lockWriter(ctx, op, path, f); err != nil {
		return Recovery{}, err
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(opened, now) {
		return Recovery{}, parseError(op, path, 0, ErrConcurrentWrite, "file was replaced while waiting for the lock", err)
	}
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
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "side file cannot be named", err)
	}
	side, err := saveTail(ctx, real, f, cut, fi.Size())
	if err != nil {
		if ctx.Err() != nil {
			return Recovery{}, ctx.Err()
		}
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "side file cannot be written", err)
	}
	err = f.Truncate(cut)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return Recovery{}, parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be truncated", err)
	}
	return Recovery{SideFile: side, Offset: cut, Bytes: fi.Size() - cut}, nil
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
// history at real, syncs it and its folder, and returns its name.
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
