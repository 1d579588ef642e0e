//go:build !race

package mutants_test

// raceDetector reports whether the test binary runs under the race detector.
const raceDetector = false
