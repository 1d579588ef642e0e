//go:build unix

package conformance_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// conformCPUBudget is what a default run of the whole catalogue on the
// reference adapter may take of CPU (README's first command).
const conformCPUBudget = 2 * time.Second

// BenchmarkConformReference runs the whole catalogue with its defaults on
// the reference adapter, seeds 1 to 10 in turn (run it -benchtime=10x for
// each once), and reports the process's CPU (user and system, the
// adapter's own goroutines and the collector included) per run, failing
// when it is over conformCPUBudget.
func BenchmarkConformReference(b *testing.B) {
	f := reference.NewConformanceFactory()
	seed := uint64(0)
	start := processCPU(b)
	for b.Loop() {
		seed = seed%10 + 1
		if rep := conformance.RunChecks(ctx, f, conformance.WithSeed(seed)); !rep.Passed {
			b.Fatalf("seed %d: the reference adapter failed: %+v", seed, rep.Checks)
		}
	}
	per := (processCPU(b) - start) / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "cpu-s/run")
	if per > conformCPUBudget {
		b.Errorf("a default run takes %.2f s of CPU, over its %v budget", per.Seconds(), conformCPUBudget)
	}
}

// processCPU is the CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
