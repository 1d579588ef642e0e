package bridge

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// shortTimeout is the call timeout of a call a test expects to time out:
// the child hangs for good, so the timeout needs no room for a slow machine.
const shortTimeout = 300 * time.Millisecond

// shortenTimeouts makes the calls to inst after this one time out after
// shortTimeout; inst was created with a generous timeout, so its hello and
// create could not time out on a slow machine. Call it between calls.
func shortenTimeouts(inst conformance.Instance) {
	c := inst.Adapter.(*remoteAdapter).c
	c.timeout = shortTimeout
	c.p.writeTimeout = shortTimeout
}

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
