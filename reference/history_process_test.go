//go:build unix

package reference

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// The tests in this file run the test binary again as child processes that
// write histories (see runChild), so that two writers really are two
// processes, and so that a writer can be killed with SIGKILL at any moment.
// A child reports each step on its stdout; the parent waits for those
// reports, never for time to pass.

const childEnv = "ADAPTERKIT_HISTORY_CHILD"

// moreChildren holds the child modes of platform-specific test files.
var moreChildren = map[string]func(report func(string, ...any)) error{}

// runChild runs the child named by childEnv and reports whether there was
// one; TestMain exits after it.
func runChild() bool {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return false
	}
	var err error
	out := bufio.NewWriter(os.Stdout)
	report := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	switch mode {
	case "append-ids":
		err = childAppendIDs(report)
	case "create-loop":
		err = childCreateLoop(report)
	case "append-loop":
		err = childAppendLoop(report)
	case "append-on-demand":
		err = childAppendOnDemand(report)
	case "snapshot-loop":
		err = childSnapshotLoop(report)
	default:
		if fn, ok := moreChildren[mode]; ok {
			err = fn(report)
		} else {
			err = errors.New("unknown child mode")
		}
	}
	if err != nil {
		report("error %v", err)
		os.Exit(2)
	}
	return true
}

// childAppendIDs waits for a line on stdin, then appends one message per
// entry of ADAPTERKIT_ENTRIES (comma-separated) with AppendMessage and
// reports "ok <entry>", or "dup <entry>" for a refused duplicate.
func childAppendIDs(report func(string, ...any)) error {
	path := os.Getenv("ADAPTERKIT_PATH")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	for _, entry := range strings.Split(os.Getenv("ADAPTERKIT_ENTRIES"), ",") {
		err := AppendMessage(context.Background(), path, nextMessage(entry))
		var ve *ValidationError
		switch {
		case err == nil:
			report("ok %s", entry)
		case errors.As(err, &ve) && ve.Error() == "Reference history is invalid: history-message-id-duplicate":
			report("dup %s", entry)
		default:
			return err
		}
	}
	return nil
}

// createLoopHistory is the i-th history a create-loop child writes: 10 to
// 40 messages of about 100 KB each, so that writing and syncing the file
// take a good part of each create.
func createLoopHistory(i int) []contract.Message {
	fx := fixture()
	return gen.SyntheticHistory{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, TextBytes: 100_000}.Messages(10 + 10*(i%4))
}

// childCreateLoop creates h-0.jsonl, h-1.jsonl, … in ADAPTERKIT_DIR,
// reporting "start <i>" and "done <i>" around each, until it is killed.
func childCreateLoop(report func(string, ...any)) error {
	dir, root := os.Getenv("ADAPTERKIT_DIR"), os.Getenv("ADAPTERKIT_ROOT")
	fx := fixture()
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
	for i := 0; ; i++ {
		msgs := createLoopHistory(i)
		report("start %d", i)
		if err := CreateHistory(context.Background(), filepath.Join(dir, "h-"+strconv.Itoa(i)+".jsonl"), h, msgs); err != nil {
			return err
		}
		report("done %d", i)
	}
}

// appendLoopMessage is a message with entry k: every fourth one carries
// 128 KiB of text, so that some kills land inside its write.
func appendLoopMessage(k int) contract.Message {
	m := nextMessage("k-" + strconv.Itoa(k))
	if k%4 == 3 {
		m.Blocks = []contract.Block{&contract.TextBlock{Text: strings.Repeat("x", 128<<10)}}
	}
	return m
}

// childAppendLoop opens the history at ADAPTERKIT_PATH, reports
// "ready <len>", and appends messages k-<len>, k-<len+1>, … reporting
// "acked <k>" after each, until it is killed.
func childAppendLoop(report func(string, ...any)) error {
	h, err := OpenHistory(context.Background(), os.Getenv("ADAPTERKIT_PATH"))
	if err != nil {
		return err
	}
	report("ready %d", h.Len())
	for k := h.Len(); ; k++ {
		if err := h.Append(context.Background(), appendLoopMessage(k)); err != nil {
			return err
		}
		report("acked %d", k)
	}
}

// child is a running child process and its reports.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startChild(t *testing.T, mode string, env ...string) *child {
	t.Helper()
	return startChildVia(t, nil, mode, env...)
}

// startChildVia starts a child through a wrapper command (for example
// unshare), which runs the test binary it is given as its last arguments.
func startChildVia(t *testing.T, wrapper []string, mode string, env ...string) *child {
	t.Helper()
	return startChildOf(t, wrapper, os.Args[0], mode, env...)
}

// startChildOf starts the test binary at bin (a copy of this one) as a
// child, through wrapper.
func startChildOf(t *testing.T, wrapper []string, bin, mode string, env ...string) *child {
	t.Helper()
	argv := append(slices.Clone(wrapper), bin, "-test.run=^$")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+mode)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	mustNil(t, err)
	stdout, err := cmd.StdoutPipe()
	mustNil(t, err)
	mustNil(t, cmd.Start())
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		defer close(c.lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			c.lines <- s.Text()
		}
	}()
	return c
}

// next returns the child's next report; ok is false when it has exited.
func (c *child) next(t *testing.T) (string, bool) {
	t.Helper()
	line, ok := <-c.lines
	if strings.HasPrefix(line, "error ") {
		t.Fatalf("child: %s", line)
	}
	return line, ok
}

// killSoon lets a random part of the next few milliseconds pass before a
// kill. It waits for nothing: a kill sent at once after a report would
// always land at the start of the child's next step (building a message),
// and the delay spreads the kills over the whole step, its write and its
// fsync included. What the test checks does not depend on the delay.
func killSoon(rng *rand.Rand) {
	time.Sleep(time.Duration(rng.Int64N(int64(15 * time.Millisecond))))
}

// kill kills the child with SIGKILL and reaps it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	mustNil(t, c.cmd.Process.Signal(syscall.SIGKILL))
	for range c.lines {
	}
	c.cmd.Wait()
}

// historyIDs parses the history at path and returns its message ids.
func historyIDs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	mustNil(t, err)
	h, err := parseHistory(readOp, path, data, limits{maxBytes: 1 << 30, maxMessages: 1 << 20})
	mustNil(t, err)
	ids := make([]string, len(h.messages))
	for i := range h.messages {
		ids[i] = h.messages[i].ID
	}
	return ids
}

// TestTwoProcessesAppend runs two processes appending to one history at the
// same moment, first the same ids, then distinct ones: no id is ever
// written twice, and every acknowledged append is in the file.
func TestTwoProcessesAppend(t *testing.T) {
	const n = 40
	entries := func(prefix string) string {
		var b []string
		for i := range n {
			b = append(b, prefix+strconv.Itoa(i))
		}
		return strings.Join(b, ",")
	}
	run := func(t *testing.T, a, b string) (acked map[string]int, dups int, ids []string) {
		e := newEnv(t)
		e.create(t)
		var kids []*child
		for _, list := range []string{a, b} {
			kids = append(kids, startChild(t, "append-ids", "ADAPTERKIT_PATH="+e.path, "ADAPTERKIT_ENTRIES="+list))
		}
		for _, c := range kids { // start both at once
			_, err := io.WriteString(c.stdin, "go\n")
			mustNil(t, err)
		}
		acked = map[string]int{}
		for _, c := range kids {
			for {
				line, ok := c.next(t)
				if !ok {
					break
				}
				verb, entry, _ := strings.Cut(line, " ")
				switch verb {
				case "ok":
					acked[entry]++
				case "dup":
					dups++
				}
			}
			if err := c.cmd.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
		}
		return acked, dups, historyIDs(t, e.path)
	}
	check := func(t *testing.T, acked map[string]int, ids []string) {
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %s written twice", id)
			}
			seen[id] = true
		}
		for entry, count := range acked {
			if count != 1 {
				t.Fatalf("entry %s acknowledged %d times", entry, count)
			}
			if !seen[fixture().SessionID+":"+entry] {
				t.Fatalf("acknowledged entry %s is not in the file", entry)
			}
		}
		if len(ids) != len(fixture().Messages)+len(acked) {
			t.Fatalf("%d messages in the file, %d acknowledged appends", len(ids), len(acked))
		}
	}
	t.Run("same ids", func(t *testing.T) {
		acked, dups, ids := run(t, entries("s-"), entries("s-"))
		check(t, acked, ids)
		if len(acked) != n || dups != n {
			t.Fatalf("%d appends acknowledged and %d refused as duplicates, want %d and %d", len(acked), dups, n, n)
		}
	})
	t.Run("distinct ids", func(t *testing.T) {
		acked, dups, ids := run(t, entries("a-"), entries("b-"))
		check(t, acked, ids)
		if len(acked) != 2*n || dups != 0 {
			t.Fatalf("%d appends acknowledged, %d refused, want %d and none", len(acked), dups, 2*n)
		}
	})
}

// killRounds is how many children each kill test kills: together, 100 in
// the long form (ADAPTERKIT_STRESS=1), 30 by default. Under the race
// detector a child takes several times as long to start, and the tests
// kill fewer (raceEnabled).
var killRounds = map[bool]int{false: map[bool]int{false: 15, true: 50}[stressDeep()], true: 15}[raceEnabled]

// TestKillDuringCreate kills children that create histories at random
// moments: every history is then missing or complete, and every one
// reported created is complete.
func TestKillDuringCreate(t *testing.T) {
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(1, 2))
	dir := filepath.Join(e.dir, "h")
	mustNil(t, os.Mkdir(dir, 0o700))
	complete, missing, stale := 0, 0, 0
	for round := range killRounds {
		round := filepath.Join(dir, strconv.Itoa(round))
		mustNil(t, os.Mkdir(round, 0o700))
		c := startChild(t, "create-loop", "ADAPTERKIT_DIR="+round, "ADAPTERKIT_ROOT="+e.root)
		done := -1
		for range 1 + rng.IntN(6) {
			line, ok := c.next(t)
			if !ok {
				t.Fatal("child exited")
			}
			if v, ok := strings.CutPrefix(line, "done "); ok {
				done, _ = strconv.Atoi(v)
			}
		}
		killSoon(rng)
		c.kill(t)
		for i := 0; ; i++ {
			path := filepath.Join(round, "h-"+strconv.Itoa(i)+".jsonl")
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				if i <= done {
					t.Fatalf("history %d was reported created and is missing", i)
				}
				if i > done+1 {
					break
				}
				missing++
				continue
			}
			if got, want := len(historyIDs(t, path)), len(createLoopHistory(i)); got != want {
				t.Fatalf("history %d holds %d messages, want %d", i, got, want)
			}
			complete++
		}
		// The killed creator's temporary file, if it left one, is
		// removed by the next create of that name.
		next := filepath.Join(round, "h-"+strconv.Itoa(done+1)+".jsonl")
		err := CreateHistory(context.Background(), next, Header{RuntimeID: fixture().RuntimeID, SessionID: fixture().SessionID, ProjectRoot: e.root}, nil)
		if err != nil && !errors.Is(err, ErrExists) {
			t.Fatal(err)
		}
		left, err := filepath.Glob(filepath.Join(round, ".h-*"+createSuffix+"*"))
		mustNil(t, err)
		for _, name := range left {
			if strings.HasPrefix(filepath.Base(name), "."+filepath.Base(next)+createSuffix) {
				t.Fatalf("a dead creator's %s was not removed", name)
			}
			stale++
		}
	}
	t.Logf("%d kills: %d complete histories, %d kills before the file appeared, %d temporary files of other names left",
		killRounds, complete, missing, stale)
}

// TestKillDuringAppend kills children that append to one history at random
// moments. After each kill RecoverHistory moves a torn record aside (if
// there is one), the history opens, and every acknowledged append is in it.
func TestKillDuringAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var e env
	var acked []string
	torn := 0
	for round := range killRounds {
		if round%15 == 0 { // keep the history small: start a new one
			e = newEnv(t)
			e.create(t)
			acked = nil
		}
		c := startChild(t, "append-loop", "ADAPTERKIT_PATH="+e.path)
		for range 1 + rng.IntN(5) {
			line, ok := c.next(t)
			if !ok {
				t.Fatal("child exited")
			}
			if v, ok := strings.CutPrefix(line, "acked "); ok {
				k, _ := strconv.Atoi(v)
				acked = append(acked, appendLoopMessage(k).ID)
			}
		}
		killSoon(rng)
		c.kill(t)
		r, err := RecoverHistory(context.Background(), e.path)
		mustNil(t, err)
		if r.SideFile != "" {
			torn++
		}
		ids := map[string]bool{}
		for _, id := range historyIDs(t, e.path) {
			if ids[id] {
				t.Fatalf("id %s written twice", id)
			}
			ids[id] = true
		}
		for _, id := range acked {
			if !ids[id] {
				t.Fatalf("acknowledged append %s was lost", id)
			}
		}
		if _, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background()); err != nil {
			t.Fatalf("snapshot after kill %d: %v", round, err)
		}
	}
	t.Logf("%d kills, %d left a torn record that recovery moved aside", killRounds, torn)
}
