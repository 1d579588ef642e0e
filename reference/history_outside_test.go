//go:build unix

package reference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests in this file change a history from outside while a History
// appends to it, as a careless operator or another program would:
// truncating it (what logrotate's copytruncate does) or renaming another
// file over it. Whatever happens, an append is acknowledged only into the
// file the path names, at the end of what the History acknowledged before;
// the file never holds a hole, nor a record that was not acknowledged.

// outsideChange is a change an outside program makes to the history at
// path, whose bytes are data (what the History acknowledged so far, and
// perhaps part of a record being written). It returns the cut, the size
// the file was truncated to, or -1 when it did not truncate it.
type outsideChange struct {
	name   string
	change func(t *testing.T, rng *rand.Rand, path string, data []byte) int64
}

// headerLen is the length of the history's header line in data.
func headerLen(data []byte) int64 { return int64(bytes.IndexByte(data, '\n') + 1) }

// truncations cut the file at the points that matter: to nothing (as
// copytruncate does), inside the header, at its end, anywhere in the
// records, and inside the last record.
var truncations = []outsideChange{
	{"to nothing", func(t *testing.T, _ *rand.Rand, path string, _ []byte) int64 {
		mustNil(t, os.Truncate(path, 0))
		return 0
	}},
	{"inside the header", func(t *testing.T, rng *rand.Rand, path string, data []byte) int64 {
		cut := 1 + rng.Int64N(headerLen(data)-1)
		mustNil(t, os.Truncate(path, cut))
		return cut
	}},
	{"at the header's end", func(t *testing.T, _ *rand.Rand, path string, data []byte) int64 {
		cut := headerLen(data)
		mustNil(t, os.Truncate(path, cut))
		return cut
	}},
	{"inside the records", func(t *testing.T, rng *rand.Rand, path string, data []byte) int64 {
		hl := headerLen(data)
		cut := hl + 1 + rng.Int64N(int64(len(data))-hl-1)
		mustNil(t, os.Truncate(path, cut))
		return cut
	}},
	{"inside the last record", func(t *testing.T, rng *rand.Rand, path string, data []byte) int64 {
		last := int64(bytes.LastIndexByte(data[:len(data)-1], '\n') + 1)
		cut := last + 1 + rng.Int64N(int64(len(data))-last-1)
		mustNil(t, os.Truncate(path, cut))
		return cut
	}},
}

// renameOver writes a copy of the history's complete lines to a new file
// and renames it over the history, as an editor saving it would.
var renameOver = outsideChange{"renamed over", func(t *testing.T, _ *rand.Rand, path string, data []byte) int64 {
	tmp := path + ".new"
	mustNil(t, os.WriteFile(tmp, data[:bytes.LastIndexByte(data, '\n')+1], 0o600))
	mustNil(t, os.Rename(tmp, path))
	return -1
}}

// readAll reads what the file at path holds now; a file that is not
// there holds nothing.
func readAll(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	mustNil(t, err)
	return data
}

// openBytes reads what the file h has open holds, whatever name it has.
func openBytes(t *testing.T, h *History) []byte {
	t.Helper()
	data, err := io.ReadAll(io.NewSectionReader(h.f, 0, 1<<30))
	mustNil(t, err)
	return data
}

// recordsEnding counts the records (not the header) of data that end
// after offset cut.
func recordsEnding(data []byte, cut int64) int {
	n := 0
	for off := headerLen(data); off < int64(len(data)); {
		end := off + int64(bytes.IndexByte(data[off:], '\n')+1)
		if end > cut {
			n++
		}
		off = end
	}
	return n
}

// disturbingContext is a context that makes an outside change the n-th
// time the code under test asks it whether it has ended: it tries, one
// by one, every point of an append at which the append consults its
// context.
type disturbingContext struct {
	context.Context
	mu      sync.Mutex
	n, seen int
	disturb func()
	fired   bool
}

func (c *disturbingContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen++; c.seen == c.n {
		c.fired = true
		c.disturb()
	}
	return c.Context.Err()
}

func (c *disturbingContext) didFire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// TestAppendDisturbedAtEveryContextCheck makes each outside change at
// every point of an append where the append consults its context, after
// another program touched the file's times (so that the handle proves its
// bytes by hashing them, consulting the context between reads). An
// append during which the file was truncated or replaced fails with
// ErrConcurrentWrite, leaves no hole, no record it did not acknowledge,
// and sticks; the file holds what was acknowledged, cut where the other
// program cut it; and a rename leaves the old file holding exactly what
// was acknowledged.
func TestAppendDisturbedAtEveryContextCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range append(append([]outsideChange{}, truncations...), renameOver) {
		t.Run(c.name, func(t *testing.T) {
			for n := 1; ; n++ {
				e := newEnv(t)
				e.create(t)
				h := openHistoryT(t, e.path)
				mustNil(t, h.Append(context.Background(), nextMessage("first")))
				acked := e.read(t)
				later := time.Now().Add(time.Hour)
				mustNil(t, os.Chtimes(e.path, later, later))
				cut := int64(-2)
				ctx := &disturbingContext{Context: context.Background(), n: n, disturb: func() {
					cut = c.change(t, rng, e.path, acked)
				}}
				err := h.Append(ctx, nextMessage("second"))
				if !ctx.didFire() {
					mustNil(t, err)
					if n == 1 {
						t.Fatal("the append never consulted its context")
					}
					break
				}
				if !errors.Is(err, ErrConcurrentWrite) {
					t.Fatalf("change at context check %d: append error %v, want ErrConcurrentWrite", n, err)
				}
				if err := h.Append(context.Background(), nextMessage("third")); !errors.Is(err, ErrConcurrentWrite) {
					t.Fatalf("change at context check %d: the next append: %v, want ErrConcurrentWrite", n, err)
				}
				switch got := readAll(t, e.path); {
				case cut >= 0 && !bytes.Equal(got, acked[:cut]):
					t.Fatalf("change at context check %d: the file holds %d bytes (%d NUL), want the %d acknowledged ones up to the cut",
						n, len(got), bytes.Count(got, []byte{0}), cut)
				case cut < 0 && !bytes.Equal(openBytes(t, h), acked):
					t.Fatalf("change at context check %d: the replaced file does not hold exactly what was acknowledged", n)
				}
			}
		})
	}
}

// outsideRounds is how many rounds each race of an outside change with
// appends runs: a sample in go test, the full count under
// ADAPTERKIT_STRESS=1 (with or without the race detector).
func outsideRounds(full int) int {
	switch {
	case stressDeep():
		return full
	case raceEnabled:
		return 10
	}
	return 25
}

// TestTruncationRacesAppends truncates the history at the points that
// matter (to nothing, inside the header, at its end, inside the records,
// inside the last record) at a random moment while a History appends to
// it, in 200 rounds under ADAPTERKIT_STRESS=1.
func TestTruncationRacesAppends(t *testing.T) {
	raceOutsideChange(t, truncations, outsideRounds(200), 7)
}

// TestRenameRacesAppends renames a copy of the history over it at a
// random moment while a History appends to it, in 300 rounds under
// ADAPTERKIT_STRESS=1.
func TestRenameRacesAppends(t *testing.T) {
	raceOutsideChange(t, []outsideChange{renameOver}, outsideRounds(300), 8)
}

// ackedRecord is a record a History acknowledged: its line, and when its
// append started, when the append began to check the file after the
// record was synced (start when the check could not be observed) and
// when it returned, on the round's clock.
type ackedRecord struct {
	line             []byte
	start, check, at int64
}

// raceOutsideChange runs rounds of one History appending while another
// goroutine, after a random number of acknowledged appends and a random
// part of two milliseconds, makes one of the changes. The oracle is
// honest about what no program can prevent: an outside change that lands
// after the History's last check of an append (between that check and
// the moment Append returns) loses the acknowledged record. So each
// change is timed on the round's clock (a counter every event takes a
// tick of) from before it began to after it returned, and an
// acknowledged record may be missing only when the change had not
// returned before the History began its check. Beyond that the file must
// hold exactly the acknowledged bytes, cut where the truncation cut them:
// no hole, no record that was not acknowledged; every append that starts
// after the change fails with ErrConcurrentWrite; and RecoverHistory,
// through the History, says how many acknowledged bytes and messages are
// gone.
func raceOutsideChange(t *testing.T, changes []outsideChange, rounds int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	lostLater, lostInWindow, detectedBefore := 0, 0, 0
	for round := range rounds {
		c := changes[round%len(changes)]
		e := newEnv(t)
		e.create(t)
		h, err := OpenHistory(context.Background(), e.path)
		mustNil(t, err)
		base := e.read(t)

		var clock atomic.Int64
		var checked atomic.Int64
		h.checking = func() { checked.Store(clock.Add(1)) }
		acks := make(chan struct{}, 1000)
		var mu sync.Mutex
		var written []byte // what the History acknowledged, for the changer
		written = append(written, base...)
		var before, after atomic.Int64
		var cut atomic.Int64
		changed := make(chan struct{})
		wait, delay := 1+rng.IntN(4), time.Duration(rng.Int64N(int64(2*time.Millisecond)))
		rng2 := rand.New(rand.NewPCG(rng.Uint64(), 0))
		go func() {
			defer close(changed)
			for range wait {
				if _, ok := <-acks; !ok {
					break
				}
			}
			// The delay only spreads the change over the next append's
			// steps; the oracle does not depend on it.
			time.Sleep(delay)
			mu.Lock()
			data := bytes.Clone(written)
			mu.Unlock()
			// The file may hold more than the acknowledged bytes: part or
			// all of a record being written. Cut within what is known.
			before.Store(clock.Add(1))
			cut.Store(c.change(t, rng2, e.path, data))
			after.Store(clock.Add(1))
		}()

		var acked []ackedRecord
		var failure error
		var failedStart int64
		sawChange := false
		for k := 0; ; k++ {
			if k == 1000 {
				t.Fatal("the change never came")
			}
			select {
			case <-changed:
				sawChange = true
			default:
			}
			line := recordLine(t, nextMessage("r-"+strconv.Itoa(k)))
			checked.Store(0)
			start := clock.Add(1)
			err := h.Append(context.Background(), nextMessage("r-"+strconv.Itoa(k)))
			at := clock.Add(1)
			if err != nil {
				failure, failedStart = err, start
				break
			}
			check := checked.Load()
			if check == 0 {
				check = start
			}
			acked = append(acked, ackedRecord{line: []byte(line), start: start, check: check, at: at})
			mu.Lock()
			written = append(written, line...)
			mu.Unlock()
			acks <- struct{}{}
			if sawChange {
				break
			}
		}
		close(acks)
		<-changed
		if failure != nil && !errors.Is(failure, ErrConcurrentWrite) {
			t.Fatalf("round %d (%s): append failed with %v, want ErrConcurrentWrite", round, c.name, failure)
		}
		if failure == nil {
			t.Fatalf("round %d (%s): every append was acknowledged, one after the change", round, c.name)
		}
		if failedStart > after.Load() {
			detectedBefore++
		}

		// What the History acknowledged, in order.
		all := bytes.Clone(base)
		ends := make([]int64, len(acked))
		for i, r := range acked {
			all = append(all, r.line...)
			ends[i] = int64(len(all))
			if r.start > after.Load() {
				t.Fatalf("round %d (%s): an append that started after the change returned was acknowledged", round, c.name)
			}
		}
		now := readAll(t, e.path)
		cutAt := cut.Load()
		if cutAt >= 0 {
			want := all[:min(cutAt, int64(len(all)))]
			if !bytes.Equal(now, want) {
				t.Fatalf("round %d (%s, cut at %d): the file holds %d bytes (%d NUL), want the %d acknowledged bytes up to the cut",
					round, c.name, cutAt, len(now), bytes.Count(now, []byte{0}), len(want))
			}
		} else if !bytes.Equal(openBytes(t, h), all) {
			t.Fatalf("round %d (%s): the replaced file holds %d bytes, want exactly the %d acknowledged", round, c.name, len(openBytes(t, h)), len(all))
		}
		for i, r := range acked {
			kept := (cutAt >= 0 && ends[i] <= cutAt) || (cutAt < 0 && bytes.HasPrefix(now, all[:ends[i]]))
			if kept {
				continue
			}
			switch {
			case after.Load() < r.check:
				t.Fatalf("round %d (%s): acknowledged record %d is not in the file the path names, and the change was complete before the append checked the file",
					round, c.name, i)
			case r.at < before.Load():
				lostLater++
			default:
				lostInWindow++
			}
		}
		if err := h.Append(context.Background(), nextMessage("late")); !errors.Is(err, ErrConcurrentWrite) {
			t.Fatalf("round %d (%s): append after the failure: %v, want ErrConcurrentWrite", round, c.name, err)
		}
		if cutAt >= 0 {
			checkRecoveryReport(t, fmt.Sprintf("round %d (%s, cut at %d)", round, c.name, cutAt), e.path, all, cutAt)
		}
		mustNil(t, h.Close())
	}
	t.Logf("%d rounds, each failing an append (%d of them starting after the change); acknowledged records gone: %d changed after they were acknowledged, %d acknowledged while the change was under way, after their last check",
		rounds, detectedBefore, lostLater, lostInWindow)
}

// checkRecoveryReport recovers the history at path, truncated at cut
// while a History (still open) had acknowledged all: RecoverHistory,
// through that History, moves a torn record aside and reports how many
// acknowledged bytes and messages the file no longer holds; the file then
// holds the acknowledged complete lines up to the cut.
func checkRecoveryReport(t *testing.T, what, path string, all []byte, cut int64) {
	t.Helper()
	cut = min(cut, int64(len(all)))
	whole := int64(bytes.LastIndexByte(all[:cut], '\n') + 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := RecoverHistory(ctx, path)
	switch {
	case cut > 0 && whole == 0:
		if !errors.Is(err, ErrHistoryCorrupt) {
			t.Fatalf("%s: recovery of a file without a complete line: %v, want ErrHistoryCorrupt", what, err)
		}
		whole = cut // left as it is
	case err != nil:
		t.Fatalf("%s: recovery: %v", what, err)
	}
	if r.LostBytes != int64(len(all))-whole || r.LostMessages != recordsEnding(all, whole) {
		t.Fatalf("%s: recovery reports %d bytes and %d messages lost, want %d and %d",
			what, r.LostBytes, r.LostMessages, int64(len(all))-whole, recordsEnding(all, whole))
	}
	if got := readAll(t, path); !bytes.Equal(got, all[:whole]) {
		t.Fatalf("%s: after recovery the file holds %d bytes, want %d", what, len(got), whole)
	}
	if r.SideFile != "" {
		side, err := os.ReadFile(r.SideFile)
		mustNil(t, err)
		if !bytes.Equal(side, all[whole:cut]) {
			t.Fatalf("%s: the side file does not hold the torn record", what)
		}
		mustNil(t, os.Remove(r.SideFile))
	}
	if bytes.IndexByte(all[:whole], '\n') >= 0 {
		if _, err := parseHistory(readOp, path, all[:whole], limits{maxBytes: 1 << 30, maxMessages: 1 << 20}); err != nil {
			t.Fatalf("%s: the recovered history does not read: %v", what, err)
		}
	}
}

// TestAppendCheckedAfterItsSync makes each outside change after a record
// was written and synced, just before the History checks the file again:
// the append fails with ErrConcurrentWrite naming what happened, its
// record is taken back, and the file holds what was acknowledged, cut
// where the other program cut it.
func TestAppendCheckedAfterItsSync(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	appendOutside := outsideChange{"written by another program", func(t *testing.T, _ *rand.Rand, path string, _ []byte) int64 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		mustNil(t, err)
		defer f.Close()
		_, err = f.WriteString(recordLine(t, nextMessage("outside")))
		mustNil(t, err)
		return -2
	}}
	reasons := map[string]string{"renamed over": "file was replaced",
		"written by another program": "file was written by another program; the record stays in it, not acknowledged"}
	for _, c := range append(append([]outsideChange{}, truncations...), renameOver, appendOutside) {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			h := openHistoryT(t, e.path)
			mustNil(t, h.Append(context.Background(), nextMessage("first")))
			acked := e.read(t)
			cut := int64(-3)
			h.checking = func() { cut = c.change(t, rng, e.path, acked) }
			err := h.Append(context.Background(), nextMessage("second"))
			want := reasons[c.name]
			if want == "" {
				want = "file was truncated by another program"
			}
			var he *HistoryError
			if !errors.As(err, &he) || !errors.Is(err, ErrConcurrentWrite) || he.Reason != want {
				t.Fatalf("append: %v, want ErrConcurrentWrite, %q", err, want)
			}
			h.checking = nil
			if err := h.Append(context.Background(), nextMessage("third")); !errors.Is(err, ErrConcurrentWrite) {
				t.Fatalf("the next append: %v, want ErrConcurrentWrite", err)
			}
			switch got := e.read(t); {
			case cut >= 0 && !bytes.Equal(got, acked[:cut]):
				t.Fatalf("the file holds %d bytes (%d NUL), want the %d acknowledged ones up to the cut", len(got), bytes.Count(got, []byte{0}), cut)
			case cut == -1 && !bytes.Equal(openBytes(t, h), acked):
				t.Fatal("the replaced file does not hold exactly what was acknowledged")
			case cut == -2 && !bytes.Equal(got, []byte(string(acked)+recordLine(t, nextMessage("second"))+recordLine(t, nextMessage("outside")))):
				t.Fatal("the record written before another program's is not where it was written")
			}
		})
	}
}

// TestRecoverReportsWhatATruncationTook truncates a history between two
// appends of a History, the one moment no check can see: the next append
// fails, and RecoverHistory, through the History, moves a torn record
// aside and says how many acknowledged bytes and messages are gone.
func TestRecoverReportsWhatATruncationTook(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range truncations {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			h := openHistoryT(t, e.path)
			for i := range 3 {
				mustNil(t, h.Append(context.Background(), nextMessage("a-"+strconv.Itoa(i))))
			}
			acked := e.read(t)
			cut := c.change(t, rng, e.path, acked)
			var he *HistoryError
			if err := h.Append(context.Background(), nextMessage("next")); !errors.As(err, &he) || !errors.Is(err, ErrConcurrentWrite) ||
				he.Reason != "file was truncated by another program" {
				t.Fatalf("append after the cut: %v", err)
			}
			checkRecoveryReport(t, c.name, e.path, acked, cut)
			if err := h.Append(context.Background(), nextMessage("next")); !errors.Is(err, ErrConcurrentWrite) {
				t.Fatalf("append after recovery: %v, want ErrConcurrentWrite", err)
			}
		})
	}
	t.Run("noticed by the recovery", func(t *testing.T) {
		e := newEnv(t)
		e.create(t)
		h := openHistoryT(t, e.path)
		mustNil(t, h.Append(context.Background(), nextMessage("a")))
		acked := e.read(t)
		mustNil(t, os.Truncate(e.path, int64(len(acked))-3))
		checkRecoveryReport(t, "a cut the History had not noticed", e.path, acked, int64(len(acked))-3)
		if err := h.Append(context.Background(), nextMessage("b")); !errors.Is(err, ErrConcurrentWrite) {
			t.Fatalf("append after recovery: %v, want ErrConcurrentWrite", err)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		e := newEnv(t)
		e.create(t)
		h := openHistoryT(t, e.path)
		mustNil(t, h.Append(context.Background(), nextMessage("a")))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		expectUnchanged(t, e, func() {
			if r, err := RecoverHistory(ctx, e.path); err != nil || r != (Recovery{}) {
				t.Fatalf("recovery of an intact file through its History: %+v, %v", r, err)
			}
		})
		mustNil(t, h.Append(context.Background(), nextMessage("b")))
	})
	t.Run("rewritten shorter", func(t *testing.T) {
		e := newEnv(t)
		fx := e.create(t)
		h := openHistoryT(t, e.path)
		mustNil(t, h.Append(context.Background(), nextMessage("a")))
		e.write(t, e.fixtureText(t, fx.Messages[1:]))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var he *HistoryError
		if r, err := RecoverHistory(ctx, e.path); !errors.As(err, &he) || !errors.Is(err, ErrConcurrentWrite) ||
			he.Reason != "file was rewritten by another program" || r.LostBytes != 0 || r.LostMessages != 0 {
			t.Fatalf("recovery of a file rewritten shorter: %+v, %v", r, err)
		}
	})
	t.Run("without a History", func(t *testing.T) {
		e := newEnv(t)
		e.create(t)
		acked := e.read(t)
		mustNil(t, os.Truncate(e.path, int64(len(acked))-3))
		r, err := RecoverHistory(context.Background(), e.path)
		if err != nil || r.LostBytes != 0 || r.LostMessages != 0 || r.SideFile == "" {
			t.Fatalf("recovery without a History: %+v, %v", r, err)
		}
	})
}

func TestTrimNULRemovesATrailingHole(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"abc\n", "abc\n"},
		{"abc\n\x00\x00", "abc\n"},
		{"\x00\x00", ""},
		{"", ""},
		{"a\n" + string(make([]byte, 200<<10)), "a\n"},
	} {
		path := filepath.Join(t.TempDir(), "f")
		mustNil(t, os.WriteFile(path, []byte(c.data), 0o600))
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		mustNil(t, err)
		mustNil(t, trimNUL(f, int64(len(c.data))))
		f.Close()
		if got := readAll(t, path); string(got) != c.want {
			t.Fatalf("%q trimmed to %q, want %q", c.data[:min(len(c.data), 8)], got[:min(len(got), 8)], c.want)
		}
	}
}
