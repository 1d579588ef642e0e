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
// the first call that did not return within its bound. The run marks the
// adapter hung when that call has still not returned one more bound later,
// or when it gave up at its bound without an answer (an adapter that
// returns its context's error when the bound ends, or an adapter process
// the bridge stopped) and a call in another check gave up the same way. A
// call that returns late with an answer — a slow adapter, not a hung one —
// is forgotten. Once the adapter is marked hung the run's checks still
// run, so that whatever the adapter answers is judged, but every call is
// bounded by the short suspectBound, and a call that misses it names the
// first hang. An adapter that hangs every time then fails the catalogue in
// about two bounds, not one bound per check.
type hangWatch struct {
	mu    sync.Mutex
	first *callTimeout // the call that did not return, if any
	check string       // the check it hung in
	// next is a later call of another check that missed its bound while
	// first is remembered, and nextCheck that check.
	next      *callTimeout
	nextCheck string
	stuck     bool   // the adapter is marked hung
	again     string // the other check whose call gave up, if that marked it
}

// suspectBound is the bound of every call once the run's adapter has hung:
// a fiftieth of the call bound, and at least 100 ms (200 ms for the
// default 10 s bound).
func suspectBound(bound time.Duration) time.Duration {
	return max(bound/50, 100*time.Millisecond)
}

// saw records a call of check that did not return within its bound.
func (w *hangWatch) saw(check string, to *callTimeout) {
	if w == nil || to == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.stuck:
	case w.first == nil:
		w.first, w.check = to, check
	case check != w.check:
		w.next, w.nextCheck = to, check
	}
}

// returned waits at most one bound for the call to to return, and reports
// whether it did.
func returned(to *callTimeout) bool {
	t := time.NewTimer(to.bound)
	defer t.Stop()
	select {
	case <-to.finished:
		return true
	case <-t.C:
		return false
	}
}

// hung returns, when the run's adapter is hung, the bound its later calls
// get and what to say of the first hang; 0 and "" otherwise. After a call
// missed its bound it waits at most one more bound for that call to
// return.
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
		switch {
		case !returned(w.first):
			w.stuck = true
		case !w.first.gaveUpAtBound():
			// Slow, not hung: the run goes on as before.
			w.first, w.check, w.next = nil, "", nil
			return 0, ""
		case w.next == nil:
			// It gave up: remembered, in case another check's call
			// gives up too.
			return 0, ""
		case !returned(w.next):
			w.stuck = true
		case w.next.gaveUpAtBound():
			// Two checks' calls gave up at the bound without an answer:
			// the adapter is not slow, it answers nothing in time.
			w.stuck, w.again = true, w.nextCheck
		default:
			w.next = nil
			return 0, ""
		}
	}
	short := suspectBound(w.first.bound)
	why := fmt.Sprintf("%s did not return within %s, nor within %s more", w.first.method, w.first.bound, w.first.bound)
	if w.again != "" {
		why = fmt.Sprintf("%s gave up at its bound of %s without an answer, and so did a call in check %s", w.first.method, w.first.bound, w.again)
	}
	return short, fmt.Sprintf("the adapter hung earlier, in check %s (%s), so this run bounds every later call at %s", w.check, why, short)
}
