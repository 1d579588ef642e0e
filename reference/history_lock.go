package reference

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrLocked is wrapped by the error of a writer that could not take a
// history's writer lock: another writer held it until the context ended
// (the context's error is wrapped too), or the lock cannot be taken at all
// (the file system has no advisory locks, or the lock file cannot be
// opened). A reader whose context ends while a writer holds the file gets
// it as well. Nothing was written.
var ErrLocked = errors.New("reference: history is locked")

// errLocksUnsupported is the cause of an ErrLocked error on a file system
// without advisory locks.
var errLocksUnsupported = errors.New("file system does not support advisory locks")

// Lock waits poll: flock(2) cannot be interrupted by a context. The delay
// between tries doubles from lockPollMin up to lockPollMax.
const (
	lockPollMin = 50 * time.Microsecond
	lockPollMax = 5 * time.Millisecond
)

// waitFlock takes f's advisory lock, waiting while another open file holds
// a conflicting one, until ctx ends.
func waitFlock(ctx context.Context, f *os.File, exclusive bool) error {
	delay := lockPollMin
	var timer *time.Timer
	for {
		ok, err := tryFlock(f, exclusive)
		if ok || err != nil {
			return err
		}
		if timer == nil {
			timer = time.NewTimer(delay)
			defer timer.Stop()
		} else {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, lockPollMax)
	}
}

// lockError classifies a failure to take a lock.
func lockError(op, path string, err error) error {
	switch {
	case errors.Is(err, errLocksUnsupported):
		return parseError(op, path, 0, ErrLocked, "file system does not support locks", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return parseError(op, path, 0, ErrLocked, "another writer holds the lock", err)
	}
	return parseError(op, path, 0, ErrLocked, "lock cannot be taken", err)
}

// realPath returns the path a history at path really has: path with its
// symbolic links resolved when it exists, else its resolved folder joined
// with its name. Lock files and side files are named after it, so that
// writers reaching one file through different symbolic links share a lock.
func realPath(path string) (string, error) {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return filepath.Abs(p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(path)), nil
}

// lockFileSuffix names a history's lock file: "<history>.lock", next to the
// history. It is created on first use and never removed: removing a lock
// file that another writer may be about to lock would let two writers in.
const lockFileSuffix = ".lock"

// writerLock takes the exclusive writer lock of the history at path,
// waiting until ctx ends while another writer holds it. The lock is held
// until the returned file is closed.
func writerLock(ctx context.Context, op, path string) (*os.File, error) {
	real, err := realPath(path)
	if err != nil {
		return nil, parseError(op, path, 0, ErrLocked, "lock file cannot be named", err)
	}
	name := real + lockFileSuffix
	for {
		f, err := openNoWait(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, parseError(op, path, 0, ErrLocked, "lock file cannot be opened", err)
		}
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			f.Close()
			return nil, parseError(op, path, 0, ErrLocked, "lock file is not a regular file", nil)
		}
		if err == nil {
			err = waitFlock(ctx, f, true)
		}
		if err != nil {
			f.Close()
			return nil, lockError(op, path, err)
		}
		// The lock is on the file opened, which must still be the one
		// the name leads to (a lock file removed by hand and made again
		// would otherwise be locked by two writers at once).
		if now, err := os.Stat(name); err == nil && os.SameFile(fi, now) {
			return f, nil
		}
		f.Close()
		if err := ctx.Err(); err != nil {
			return nil, lockError(op, path, err)
		}
	}
}
