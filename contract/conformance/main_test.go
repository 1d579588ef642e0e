package conformance_test

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain lets the collector run less often than by default: the tests
// run the catalogue and the model many times over histories of thousands
// of messages, and spent a quarter of their CPU collecting them (about
// 28 s of CPU with the default, 22 s so). The soft memory limit keeps the
// heap within 512 MiB; GOGC or GOMEMLIMIT set in the environment win.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
	os.Exit(m.Run())
}
