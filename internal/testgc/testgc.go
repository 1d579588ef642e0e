// Package testgc sets the garbage collector for the test binaries of
// packages whose tests allocate heavily — property runs drawing thousands
// of values, the catalogue and the model over long histories — and spend
// much of their CPU collecting: it keeps go test ./... within its CPU
// budget on a busy machine. GOGC or GOMEMLIMIT set in the environment win.
package testgc

import (
	"os"
	"runtime/debug"
)

// Percent and Limit are the collector's target and soft memory limit the
// test binaries run with.
const (
	Percent = 400
	Limit   = 512 << 20
)

// Run sets the collector (unless the environment does) and runs m's
// tests, returning their exit code: TestMain calls os.Exit(testgc.Run(m)).
func Run(m interface{ Run() int }) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(Limit)
	}
	return m.Run()
}
