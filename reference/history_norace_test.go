//go:build !race

package reference

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
