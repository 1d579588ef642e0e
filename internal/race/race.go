// Package race tells a test binary whether it runs under the race
// detector, so that a long test which starts no goroutine — a sequential
// property or reach statistic — can step aside for it: the detector
// watches goroutines, and such a test has none for it to watch, while
// costing five to ten times its CPU. The default go test runs it whole.
package race

import "testing"

// SkipSequential skips t under the race detector. Call it only from a test
// whose code starts no goroutine (nor runs subtests in parallel): the
// detector can report nothing there.
func SkipSequential(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("sequential: the race detector has no goroutines to watch here; go test without -race runs it")
	}
}
