//go:build !linux

package bridge

// Only Linux has child subreapers: elsewhere the harness ends the child's
// process group (on Unix) or the child itself, and the descendants that
// left it are not tracked.

func acquireSubreaper()                         {}
func releaseSubreaper()                         {}
func killDescendants(int, []byte, map[int]bool) {}
func reapDescendants(map[int]bool) error        { return nil }
