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
// (the file system has no advisory locks). A reader whose context ends
// while it waits for a writer to finish the record it is writing gets it
// as well. Nothing was written.
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
// with its name. Side files are named after it.
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

// lockWriter takes the writer lock of the history open as f: an exclusive
// flock on the file itself, so on its identity (device and inode) whatever
// name, symbolic link or hard link it was opened through. It waits while
// another writer holds it, until ctx ends. The lock is held until f is
// closed. Readers take no lock while they read (see store.read).
func lockWriter(ctx context.Context, op, path string, f *os.File) error {
	if err := waitFlock(ctx, f, true); err != nil {
		return lockError(op, path, err)
	}
	return nil
}

// writerActive reports whether a writer holds the lock of the file open as
// f: whether f's shared lock cannot be taken at once. The shared lock, when
// taken, is released at once. On a file system without locks it reports
// false: no writer of this package writes there.
func writerActive(f *os.File) (bool, error) {
	ok, err := tryFlock(f, false)
	switch {
	case errors.Is(err, errLocksUnsupported):
		return false, nil
	case err != nil:
		return false, err
	case ok:
		return false, funlock(f)
	}
	return true, nil
}
