//go:build !unix

package reference

import "os"

// openNoWait opens path. Outside Unix there are no FIFOs or device nodes a
// history path could name.
func openNoWait(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// openNoFollow opens path, refusing a symbolic link.
func openNoFollow(path string, flag int) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrInvalid}
	}
	return os.OpenFile(path, flag, 0)
}

// tryFlock reports errLocksUnsupported: this package takes advisory locks
// with flock(2), which exists only on Unix.
func tryFlock(*os.File, bool) (bool, error) { return false, errLocksUnsupported }

// funlock does nothing: no lock was taken.
func funlock(*os.File) error { return nil }

// syncDir does nothing: folders cannot be synced outside Unix.
func syncDir(string) error { return nil }

// fileKey is a file's identity; outside Unix no History opens, and no
// file has one.
type fileKey struct{}

// keyOf reports that fi has no identity here.
func keyOf(os.FileInfo) (fileKey, bool) { return fileKey{}, false }
