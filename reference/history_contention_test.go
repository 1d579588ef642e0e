//go:build unix

package reference

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/gen"
)

// stressDeep reports whether the long variants of the contention tests
// run (ADAPTERKIT_STRESS=1, as .ci/run sets it).
func stressDeep() bool { return os.Getenv("ADAPTERKIT_STRESS") == "1" }

// contentionMessages is the length of the contention tests' history.
const contentionMessages = 130

// contentionHistory writes a history of more than 20 MiB into e.
func contentionHistory(t *testing.T, e env) {
	t.Helper()
	fx := fixture()
	msgs := gen.SyntheticHistory{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, TextBytes: 200_000}.Messages(contentionMessages)
	hd := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	mustNil(t, CreateHistory(context.Background(), e.path, hd, msgs))
	if fi, err := os.Stat(e.path); err != nil || fi.Size() < 20<<20 {
		t.Fatalf("history of %v bytes: %v", fi.Size(), err)
	}
}

// childSnapshotLoop snapshots the history at ADAPTERKIT_PATH (project root
// ADAPTERKIT_ROOT) with one adapter in a loop, reporting "reading" before
// the first and "snap <n>" after the n-th, until it is killed.
func childSnapshotLoop(report func(string, ...any)) error {
	fx := fixture()
	a, err := New(Options{HistoryPath: os.Getenv("ADAPTERKIT_PATH"), RuntimeID: fx.RuntimeID,
		ProjectRoot: os.Getenv("ADAPTERKIT_ROOT"), Model: &fx.Model, Transport: &recorder{}})
	if err != nil {
		return err
	}
	report("reading")
	for n := 1; ; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		_, err := a.SnapshotHistory(ctx)
		cancel()
		if err != nil {
			return err
		}
		report("snap %d", n)
	}
}

// childAppendOnDemand opens the history at ADAPTERKIT_PATH and reports
// "ready". On a line "append <n>" on stdin it appends n messages, each
// with a 2 s context, and reports "acked <n> <slowest nanoseconds>".
func childAppendOnDemand(report func(string, ...any)) error {
	h, err := OpenHistory(context.Background(), os.Getenv("ADAPTERKIT_PATH"))
	if err != nil {
		return err
	}
	defer h.Close()
	report("ready")
	in := bufio.NewScanner(os.Stdin)
	for k := 0; in.Scan(); {
		var n int
		if _, err := fmt.Sscanf(in.Text(), "append %d", &n); err != nil {
			return err
		}
		var slowest time.Duration
		for range n {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			start := time.Now()
			err := h.Append(ctx, nextMessage("contended-"+strconv.Itoa(k)))
			cancel()
			if err != nil {
				return fmt.Errorf("append %d: %w", k, err)
			}
			slowest = max(slowest, time.Since(start))
			k++
		}
		report("acked %d %d", n, slowest)
	}
	return in.Err()
}

// TestAppendWhileReadersRead appends with a 2 s context while reader
// goroutines and reader processes snapshot a history of more than 20 MiB
// in a loop: readers never hold up the writer, and every snapshot they
// take is valid. By default 8 goroutines and 4 processes read (more
// readers than processors still, at half the CPU), 16 and 8 in the long
// form (ADAPTERKIT_STRESS=1). The writer is a process of its own, as a
// runtime is: the test's reader goroutines then compete with it for the
// processors only as other processes do, not for the Go scheduler.
func TestAppendWhileReadersRead(t *testing.T) {
	e := newEnv(t)
	contentionHistory(t, e)
	writer := startChild(t, "append-on-demand", "ADAPTERKIT_PATH="+e.path)
	defer writer.kill(t)
	if line, ok := writer.next(t); !ok || line != "ready" {
		t.Fatalf("writer reported %q", line)
	}

	var procs, goroutines int64 = 4, 8
	if stressDeep() {
		procs, goroutines = 8, 16
	}
	var kids []*child
	defer func() {
		for _, c := range kids {
			c.kill(t)
		}
	}()
	for range procs {
		kids = append(kids, startChild(t, "snapshot-loop", "ADAPTERKIT_PATH="+e.path, "ADAPTERKIT_ROOT="+e.root))
	}
	for _, c := range kids {
		if line, ok := c.next(t); !ok || line != "reading" {
			t.Fatalf("child reported %q", line)
		}
	}
	readCtx, stop := context.WithCancel(context.Background())
	defer stop()
	var snaps, reading atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	warm := make([]chan struct{}, goroutines)
	for i := range goroutines {
		a := newAdapter(t, e.options(nil))
		reading.Add(1)
		warm[i] = make(chan struct{})
		wg.Go(func() {
			defer reading.Add(-1)
			for first := true; readCtx.Err() == nil; {
				ctx, cancel := context.WithTimeout(readCtx, 5*time.Minute)
				_, err := a.SnapshotHistory(ctx)
				cancel()
				switch {
				case err == nil:
					snaps.Add(1)
					if first {
						close(warm[i])
						first = false
					}
				case readCtx.Err() == nil:
					errs <- err
					return
				}
			}
		})
	}
	appends := map[bool]int{false: 5, true: 40}[stressDeep()]
	var slowest time.Duration
	batch := func(phase string) {
		// The reader goroutines are reading (none has stopped), and so
		// are the processes (a process stops only by failing, which
		// ends its report stream).
		if n := reading.Load(); n != goroutines {
			t.Fatalf("%d reader goroutines left", n)
		}
		_, err := fmt.Fprintf(writer.stdin, "append %d\n", appends)
		mustNil(t, err)
		line, ok := writer.next(t)
		var n int
		var took time.Duration
		if _, err := fmt.Sscanf(line, "acked %d %d", &n, &took); !ok || err != nil || n != appends {
			t.Fatalf("%s: writer reported %q", phase, line)
		}
		slowest = max(slowest, took)
		if n := reading.Load(); n != goroutines {
			t.Fatalf("%d reader goroutines left", n)
		}
	}
	// First while every reader reads the file cold; in the long form
	// also once every reader goroutine has taken a snapshot, while they
	// read it again and again through their caches.
	batch("cold readers")
	warmFrom, batches := snaps.Load(), 1
	if stressDeep() {
		for _, w := range warm {
			select {
			case <-w:
			case err := <-errs:
				t.Fatalf("reader: %v", err)
			}
		}
		warmFrom = snaps.Load()
		batch("warm readers")
		batches++
	}
	appends *= batches
	for _, c := range kids {
		select {
		case line, ok := <-c.lines:
			if !ok || strings.HasPrefix(line, "error ") {
				t.Fatalf("reader process: %q", line)
			}
		default:
		}
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("reader: %v", err)
	}
	t.Logf("%d appends, slowest %v, while %d reader goroutines (%d snapshots, %d of them after the first batch) and %d reader processes read",
		appends, slowest, goroutines, snaps.Load(), snaps.Load()-warmFrom, procs)
	if got := historyIDs(t, e.path); len(got) != contentionMessages+appends {
		t.Fatalf("%d messages, want %d", len(got), contentionMessages+appends)
	}
}

// TestHardLinkedWritersNeverBothAcknowledge races two writers through two
// hard links to one history, each appending the same id: one writer
// holds the file at a time, so exactly one acknowledges it, and the
// other is refused it as a duplicate.
func TestHardLinkedWritersNeverBothAcknowledge(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	other := filepath.Join(e.dir, "elsewhere", "link.jsonl")
	mustNil(t, os.Mkdir(filepath.Dir(other), 0o700))
	mustNil(t, os.Link(e.path, other))
	rounds := 300
	if stressDeep() {
		rounds = 2_000
	} else if raceEnabled {
		rounds = 100 // the race detector makes each round ten times as slow
	}
	both := 0
	for round := range rounds {
		msg := nextMessage("race-" + strconv.Itoa(round))
		var acked atomic.Int32
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for _, path := range []string{e.path, other} {
			wg.Go(func() {
				<-gate
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				h, err := OpenHistory(ctx, path)
				if err != nil {
					t.Errorf("open %s: %v", path, err)
					return
				}
				defer h.Close()
				var ve *ValidationError
				switch err := h.Append(ctx, msg); {
				case err == nil:
					acked.Add(1)
				case errors.As(err, &ve):
				default:
					t.Errorf("append through %s: %v", path, err)
				}
			})
		}
		close(gate)
		wg.Wait()
		if acked.Load() != 1 {
			both++
		}
	}
	ids := historyIDs(t, e.path)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %s written twice", id)
		}
		seen[id] = true
	}
	if both != 0 || len(ids) != len(fixture().Messages)+rounds {
		t.Fatalf("%d of %d rounds did not have exactly one acknowledgement; %d messages", both, rounds, len(ids))
	}
	t.Logf("%d rounds, each acknowledged once", rounds)
}
