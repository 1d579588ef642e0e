package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// distinctFiles returns an error when the report and the JUnit file, both
// given, are one file: the same path once made absolute and clean, the
// same path once symbolic links are followed, or — when both exist — the
// same file under two names (a hard link).
func distinctFiles(report, junit string) error {
	if report == "" || junit == "" {
		return nil
	}
	same := fmt.Errorf("--report and --junit name one file (%q and %q): give each its own file", report, junit)
	a, errA := filepath.Abs(report)
	b, errB := filepath.Abs(junit)
	if errA != nil || errB != nil {
		return errors.Join(errA, errB)
	}
	if a == b || resolve(a) == resolve(b) {
		return same
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil && os.SameFile(sa, sb) {
		return same
	}
	return nil
}

// resolve returns the clean absolute path abs with every symbolic link it
// can follow followed: in its folder, and in its last element even when
// the link's target does not exist yet (writing through the link creates
// the target).
func resolve(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	dir, base := filepath.Split(abs)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	p := filepath.Join(dir, base)
	// A dangling link: follow it by hand, a bounded number of times.
	for range 40 {
		target, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		d, b := filepath.Split(filepath.Clean(target))
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		p = filepath.Join(d, b)
	}
	return p
}
