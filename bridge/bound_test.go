package bridge

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// bound scales d, a bound on something the test waits for, to the machine:
// the race detector slows the code several times over, and a loaded
// machine (more runnable threads than cores) slows it further. A bound is
// how long a test waits before it gives up on an event, never how long it
// sleeps: a generous one costs nothing when the event comes.
func bound(d time.Duration) time.Duration {
	scale := 1.0
	if raceEnabled {
		scale *= 4
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if load, err := strconv.ParseFloat(f[0], 64); err == nil {
				scale *= max(1, load/float64(runtime.NumCPU()))
			}
		}
	}
	return time.Duration(float64(d) * scale)
}
