package race

import (
	"runtime/debug"
	"testing"
)

// Enabled says whether -race built the binary, as the go command stamps it
// in the binary's build settings.
func TestEnabledMatchesTheBuild(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("the test binary carries no build information")
	}
	stamped := false
	for _, s := range info.Settings {
		if s.Key == "-race" {
			stamped = s.Value == "true"
		}
	}
	if stamped != Enabled {
		t.Fatalf("Enabled is %v in a binary built with -race=%v", Enabled, stamped)
	}
}

// SkipSequential skips under the race detector and runs the test otherwise.
func TestSkipSequential(t *testing.T) {
	ran := false
	t.Run("sequential", func(t *testing.T) {
		SkipSequential(t)
		ran = true
	})
	if ran == Enabled {
		t.Fatalf("built with -race=%v, the sequential test ran=%v", Enabled, ran)
	}
}
