package conformance

import (
	"fmt"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/internal/runscope"
)

func init() {
	runscope.New = func() any { return withHangWatch(&hangWatch{}) }
}

// withHangWatch makes every check run with the option share w.
func withHangWatch(w *hangWatch) Option { return func(o *options) { o.hangs = w } }

// hangWatch is what the checks of one run know of an adapter that hung:
// the first call that did not return within its bound. A call that returns
// late — a slow adapter, not a hung one — is forgotten. One that has still
// not returned when a later check starts, after one more bound, marks the
// adapter hung: from then on the run's checks still run, so that whatever
// the adapter answers is judged, but every call is bounded by the short
// suspectBound, and a call that misses it names the first hang. An adapter
// that hangs every time then fails the catalogue in about two bounds, not
// one bound per check.
type hangWatch struct {
	mu    sync.Mutex
	first *callTimeout // the call that did not return, if any
	check string       // the check it hung in
	stuck bool         // it did not return within one more bound
}

// suspectBound is the bound of every call once the run's adapter has hung:
// a fiftieth of the call bound, and at least 100 ms (200 ms for the
// default 10 s bound).
func suspectBound(bound time.Duration) time.Duration {
	return max(bound/50, 100*time.Millisecond)
}

// saw records a call that did not return within its bound, in check.
func (w *hangWatch) saw(check string, to *callTimeout) {
	if w == nil || to == nil || to.finished == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first == nil {
		w.first, w.check = to, check
	}
}

// hung returns, when the run's adapter is hung, the bound its later calls
// get and what to say of the first hang; 0 and "" otherwise. The first
// time after a hang it waits one more bound for the hung call to return.
func (w *hangWatch) hung() (time.Duration, string) {
	if w == nil {
		return 0, ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first == nil {
		return 0, ""
	}
	if !w.stuck {
		t := time.NewTimer(w.first.bound)
		defer t.Stop()
		select {
		case <-w.first.finished:
			// Slow, not hung: the run goes on as before.
			w.first, w.check = nil, ""
			return 0, ""
		case <-t.C:
			w.stuck = true
		}
	}
	short := suspectBound(w.first.bound)
	return short, fmt.Sprintf("the adapter hung earlier, in check %s (%s did not return within %s, nor within %s more), so this run bounds every later call at %s",
		w.check, w.first.method, w.first.bound, w.first.bound, short)
}
