package conformance_test

import (
	"os"
	"testing"
)

// longEnv, set to 1, runs the long forms of the tests that repeat a run
// over several seeds (.ci/run sets it); by default they run fewer, so that
// go test ./... stays within its CPU budget.
const longEnv = "ADAPTERKIT_STRESS"

// longSteps returns how many model steps a run takes: short by default,
// long under longEnv=1.
func longSteps(short, long int) int {
	if os.Getenv(longEnv) == "1" {
		return long
	}
	return short
}

// longSeeds returns how many seeds a repeated run takes: short by
// default, long under longEnv=1.
func longSeeds(short, long uint64) uint64 {
	if os.Getenv(longEnv) == "1" {
		return long
	}
	return short
}

// longOnly skips t unless longEnv=1: one test of a family whose default run
// takes a sample (sample says which tests stand for the family).
func longOnly(t *testing.T, sample string) {
	t.Helper()
	if os.Getenv(longEnv) != "1" {
		t.Skipf("%s=1 runs it; by default %s", longEnv, sample)
	}
}
