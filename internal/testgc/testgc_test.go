package testgc

import (
	"runtime/debug"
	"testing"
)

type fakeM struct{ percent int64 }

func (m *fakeM) Run() int {
	m.percent = int64(debug.SetGCPercent(100))
	return 3
}

// Run sets the collector before the tests run and returns their code; an
// environment that names GOGC keeps its own.
func TestRunSetsTheCollectorUnlessTheEnvironmentDoes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	m := &fakeM{}
	if code := Run(m); code != 3 || m.percent != Percent {
		t.Fatalf("code %d, collector at %d%% during the tests; want 3 and %d%%", code, m.percent, Percent)
	}
	if got := debug.SetMemoryLimit(-1); got != Limit {
		t.Fatalf("memory limit %d, want %d", got, Limit)
	}
	debug.SetGCPercent(150)
	t.Setenv("GOGC", "150")
	m = &fakeM{}
	if Run(m); m.percent != 150 {
		t.Fatalf("with GOGC=150 the collector ran at %d%%", m.percent)
	}
}
