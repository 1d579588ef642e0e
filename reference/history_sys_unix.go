//go:build unix

package reference

import (
	"errors"
	"os"
	"syscall"
)

// openNoWait opens path without waiting: O_NONBLOCK makes opening a FIFO
// or a device return at once, so that the caller can fstat what it opened
// and refuse anything but a regular file before reading. On a regular file
// O_NONBLOCK has no effect.
func openNoWait(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
}

// openNoFollow opens path like openNoWait, and fails when path is a
// symbolic link instead of following it.
func openNoFollow(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}

// tryFlock tries once to take f's advisory lock (flock(2)), shared or
// exclusive, without waiting. It reports false when another open file
// holds a conflicting lock, and errLocksUnsupported when the file system
// has no locks.
func tryFlock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	switch {
	case ferr == nil:
		return true, nil
	case errors.Is(ferr, syscall.EWOULDBLOCK):
		return false, nil
	case errors.Is(ferr, syscall.ENOLCK), errors.Is(ferr, syscall.EOPNOTSUPP),
		errors.Is(ferr, syscall.ENOTSUP), errors.Is(ferr, syscall.EINVAL), errors.Is(ferr, syscall.ENOSYS):
		return false, errors.Join(errLocksUnsupported, ferr)
	}
	return false, ferr
}

// funlock releases f's advisory lock.
func funlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = syscall.Flock(int(fd), syscall.LOCK_UN) }); err != nil {
		return err
	}
	return ferr
}

// syncDir makes the entries of the folder dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// fileKey is a file's identity: its device and inode numbers.
type fileKey struct{ dev, ino uint64 }

// keyOf returns the identity of the file fi describes.
func keyOf(fi os.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}
