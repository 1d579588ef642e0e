//go:build !unix

package reference

// runChild reports that there is no child to run: the tests that start
// child processes need Unix signals and run only there.
func runChild() bool { return false }
