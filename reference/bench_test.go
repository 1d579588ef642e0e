package reference

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// The benchmarks share one 100,000-message history of about 60 MB (TextBytes 360), written
// once with CreateHistory into a temporary folder that TestMain removes.

const (
	benchMessages = 100_000
	benchRuntime  = "bench-runtime"
	benchSession  = "bench-session"
)

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func TestMain(m *testing.M) {
	if runChild() {
		os.Exit(0)
	}
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

type benchEnv struct{ root, path string }

func benchHistory(b *testing.B) benchEnv {
	b.Helper()
	benchOnce.Do(func() {
		if benchDir, benchErr = os.MkdirTemp("", "ds4-reference-bench-"); benchErr != nil {
			return
		}
		root := filepath.Join(benchDir, "project")
		if benchErr = os.Mkdir(root, 0o700); benchErr != nil {
			return
		}
		msgs := gen.SyntheticHistory{RuntimeID: benchRuntime, SessionID: benchSession, TextBytes: 360}.Messages(benchMessages)
		benchErr = CreateHistory(context.Background(), filepath.Join(benchDir, "history.jsonl"),
			Header{RuntimeID: benchRuntime, SessionID: benchSession, ProjectRoot: root}, msgs)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	root, err := resolveRoot(filepath.Join(benchDir, "project"))
	if err != nil {
		b.Fatal(err)
	}
	return benchEnv{root: root, path: filepath.Join(benchDir, "history.jsonl")}
}

// copyHistory gives a benchmark that appends its own copy of the history.
func (e benchEnv) copyHistory(b *testing.B) benchEnv {
	data, err := os.ReadFile(e.path)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return benchEnv{root: e.root, path: path}
}

func (e benchEnv) adapter(b *testing.B) *Adapter {
	a, err := New(Options{
		HistoryPath: e.path, RuntimeID: benchRuntime, ProjectRoot: e.root,
		Transport: &recorder{},
		MaxBytes:  1 << 30, MaxMessages: 10 * benchMessages,
	})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkFloorReadHashDecode is the floor a cold snapshot is measured
// against: read the file, hash it, decode every message with
// contract.DecodeMessage. No validation, no grouping, no copy.
func BenchmarkFloorReadHashDecode(b *testing.B) {
	e := benchHistory(b)
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	for b.Loop() {
		data, err := os.ReadFile(e.path)
		if err != nil {
			b.Fatal(err)
		}
		sha256.Sum256(data)
		body := data[bytes.IndexByte(data, '\n')+1:]
		msgs := make([]contract.Message, 0, benchMessages)
		for len(body) > 0 {
			nl := bytes.IndexByte(body, '\n')
			m, err := contract.DecodeMessage(body[len(recordPrefix) : nl-1])
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, m)
			body = body[nl+1:]
		}
		if len(msgs) != benchMessages {
			b.Fatal(len(msgs))
		}
	}
}

// BenchmarkFloorReadCompare is the floor of the cache's own work after an
// append (and of a snapshot of an unchanged file, less the caller's copy):
// read the whole file, a MiB at a time into a buffer allocated once (as the
// cache reads it), and compare it with a copy of its bytes held in memory.
func BenchmarkFloorReadCompare(b *testing.B) { benchFloorReadCompare(b, false) }

// BenchmarkFloorReadCompareCopy is the floor of a whole snapshot after an
// append: BenchmarkFloorReadCompare's read and compare while a second
// goroutine makes the copy the contract gives every caller
// (contract.CloneMessages and CloneGroups of the history's plain decoded
// messages, the least a cache holding them must do), as the adapter
// overlaps its copy with the read.
func BenchmarkFloorReadCompareCopy(b *testing.B) { benchFloorReadCompare(b, true) }

func benchFloorReadCompare(b *testing.B, withCopy bool) {
	e := benchHistory(b)
	held, err := os.ReadFile(e.path)
	if err != nil {
		b.Fatal(err)
	}
	var snap contract.HistorySnapshot
	if withCopy {
		if snap, err = e.adapter(b).SnapshotHistory(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]byte, compareChunk)
	b.SetBytes(int64(len(held)))
	b.ReportAllocs()
	for b.Loop() {
		if !withCopy {
			readCompare(b, e.path, held, buf)
			continue
		}
		done := make(chan []contract.Message, 1) // never blocks the copy if the read fails
		go func() {
			contract.CloneGroups(snap.ToolAtomicGroups)
			done <- contract.CloneMessages(snap.Messages)
		}()
		readCompare(b, e.path, held, buf)
		if len(<-done) != benchMessages {
			b.Fatal("short copy")
		}
	}
}

// readCompare reads path through buf and fails b unless it holds exactly
// held.
func readCompare(b *testing.B, path string, held, buf []byte) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rest := held
	for {
		n, err := io.ReadFull(f, buf)
		if n > len(rest) || !bytes.Equal(buf[:n], rest[:n]) {
			b.Fatal("file changed")
		}
		rest = rest[n:]
		if err != nil {
			break
		}
	}
	if len(rest) != 0 {
		b.Fatal("file shrank")
	}
}

// BenchmarkFloorReadHash reads the whole file and hashes it (SHA-256): what
// a snapshot would cost if it hashed every byte again.
func BenchmarkFloorReadHash(b *testing.B) {
	e := benchHistory(b)
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	for b.Loop() {
		data, err := os.ReadFile(e.path)
		if err != nil {
			b.Fatal(err)
		}
		sha256.Sum256(data)
	}
}

// heapBase is the live heap peakHeap measured before its function ran.
var heapBase uint64

// liveHeap collects garbage and returns the heap's live objects' size.
func liveHeap() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// peakHeap samples the live heap while fn runs and returns the highest
// value above the heap in use before it started (heapBase).
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := liveHeap()
	heapBase = base
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	fn()
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	close(done)
	wg.Wait()
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// BenchmarkSnapshotCold is a snapshot by a fresh adapter: read, hash,
// check, decode, group, validate and copy for the caller. It reports the
// peak heap growth during the snapshot as a multiple of the file size.
func BenchmarkSnapshotCold(b *testing.B) {
	e := benchHistory(b)
	size := fileSize(b, e.path)
	// The peak is measured on one untimed snapshot: measuring it forces a
	// collection first, which must not count as snapshot time.
	var snap contract.HistorySnapshot
	var a *Adapter
	peak := peakHeap(func() {
		var err error
		a = e.adapter(b)
		if snap, err = a.SnapshotHistory(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	if len(snap.Messages) != benchMessages {
		b.Fatal(len(snap.Messages))
	}
	snap = contract.HistorySnapshot{}
	// What the adapter keeps once the caller has dropped its snapshot.
	resident := liveHeap() - heapBase
	runtime.KeepAlive(a)
	a = nil
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.adapter(b).SnapshotHistory(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak)/float64(size), "peak-heap/file")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(resident)/float64(size), "resident/file")
	b.ReportMetric(float64(resident)/(1<<20), "resident-MiB")
}

// BenchmarkSnapshotUnchanged is a snapshot of an unchanged file by an
// adapter that has read it before: the file is read and compared with the
// cached bytes, nothing is hashed or decoded, and the caller gets a fresh
// copy. Its floor is BenchmarkFloorReadCompareCopy.
func BenchmarkSnapshotUnchanged(b *testing.B) {
	e := benchHistory(b)
	a := e.adapter(b)
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		b.Fatal(err)
	}
	cached := a.store.c
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.SnapshotHistory(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	if a.store.c != cached {
		b.Fatal("an unchanged file was decoded again")
	}
}

// BenchmarkSnapshotAfterAppend appends one message through a History
// (untimed) and then snapshots: the prefix is read and compared with the
// cached bytes, and only the new line is hashed (resuming the cached
// SHA-256 state), decoded and validated against the id index.
// After a text message ("text") the groups are the cached ones; after a
// tool call or result ("tool") the groups it touches are derived again.
// Its floor is BenchmarkFloorReadCompareCopy.
func BenchmarkSnapshotAfterAppend(b *testing.B) {
	b.Run("text", func(b *testing.B) { benchAfterAppend(b, benchAppended) })
	b.Run("tool", func(b *testing.B) { benchAfterAppend(b, benchAppendedToolMessage) })
}

// BenchmarkLoadAfterAppend is BenchmarkSnapshotAfterAppend without the
// caller's copy: what the cache itself costs after an append (prefix
// check, hashing, decoding and validating the new line), to compare with
// BenchmarkFloorReadCompare.
func BenchmarkLoadAfterAppend(b *testing.B) {
	b.Run("text", func(b *testing.B) { benchLoadAfterAppend(b, benchAppended) })
	b.Run("tool", func(b *testing.B) { benchLoadAfterAppend(b, benchAppendedToolMessage) })
}

func benchLoadAfterAppend(b *testing.B, next func(int) contract.Message) {
	e := benchHistory(b).copyHistory(b)
	a := e.adapter(b)
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		b.Fatal(err)
	}
	h, err := OpenHistory(context.Background(), e.path, WithMaxMessages(10*benchMessages))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := h.Append(context.Background(), next(i)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c, extended, err := a.store.load(context.Background(), a.store.c, a.runtimeID, a.root)
		if err != nil || !extended {
			b.Fatal(err, extended)
		}
		a.store.c = c
	}
}

func benchAfterAppend(b *testing.B, next func(int) contract.Message) {
	e := benchHistory(b).copyHistory(b)
	a := e.adapter(b)
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		b.Fatal(err)
	}
	first := a.store.c.msgs[0].blocks[0]
	h, err := OpenHistory(context.Background(), e.path, WithMaxMessages(10*benchMessages))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := h.Append(context.Background(), next(i)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := a.SnapshotHistory(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	if a.store.c.msgs[0].blocks[0] != first {
		b.Fatal("the prefix was decoded again")
	}
}

func benchAppended(i int) contract.Message { return appendedText(i, benchRuntime, benchSession) }

// appendedText is the i-th appended text message of a history of runtime
// rt and session.
func appendedText(i int, rt, session string) contract.Message {
	entry := "appended-" + strconv.Itoa(i)
	return contract.Message{
		ID: session + ":" + entry, SourceEntryID: entry, Role: contract.RoleUser,
		Blocks: []contract.Block{&contract.TextBlock{Text: "one more request"}},
		Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: session,
			EntryID: entry, RuntimeID: new(rt)},
	}
}

func benchAppendedToolMessage(i int) contract.Message {
	return benchAppendedTool(i, benchRuntime, benchSession)
}

// benchAppendedTool alternates a tool call and its result.
func benchAppendedTool(i int, rt, session string) contract.Message {
	m := appendedText(i, rt, session)
	call := "bench-call-" + strconv.Itoa((i+1)/2)
	if i%2 == 1 {
		m.Role = contract.RoleAssistant
		m.Blocks = []contract.Block{&contract.ToolCallBlock{ID: call, Name: "read"}}
	} else {
		m.Role = contract.RoleTool
		m.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: call, ToolName: "read", Content: "ok"}}
	}
	m.Flags.Atomic = new(true)
	return m
}

// BenchmarkCopySnapshot is the cost of the deep copy every snapshot hands
// its caller.
func BenchmarkCopySnapshot(b *testing.B) {
	e := benchHistory(b)
	a := e.adapter(b)
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		b.Fatal(err)
	}
	c := a.store.c
	b.ReportAllocs()
	for b.Loop() {
		c.x.appendCopies(make([]contract.Message, 0, len(c.msgs)), c.msgs)
		contract.CloneGroups(c.groups)
	}
}

// BenchmarkAppendMessage is one AppendMessage on the large history, with no
// History open in the process: like the TypeScript kit, it parses and
// validates the whole file before writing one line, so it costs about a
// cold read.
func BenchmarkAppendMessage(b *testing.B) {
	e := benchHistory(b).copyHistory(b)
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := AppendMessage(context.Background(), e.path, benchAppended(i), WithMaxMessages(10*benchMessages)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendMessageThroughHistory is AppendMessage on the large
// history while this process holds a History open on it: it appends
// through the History, in constant time.
func BenchmarkAppendMessageThroughHistory(b *testing.B) {
	e := benchHistory(b).copyHistory(b)
	h, err := OpenHistory(context.Background(), e.path, WithMaxMessages(10*benchMessages))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := AppendMessage(context.Background(), e.path, benchAppended(i), WithMaxMessages(10*benchMessages)); err != nil {
			b.Fatal(err)
		}
	}
	if h.Len() != benchMessages+i {
		b.Fatal("the appends did not go through the History")
	}
}

// BenchmarkOpenHistory opens the large history for appending: read, hash,
// decode, validate and index it. Compare with BenchmarkSnapshotCold.
func BenchmarkOpenHistory(b *testing.B) {
	e := benchHistory(b)
	b.SetBytes(fileSize(b, e.path))
	b.ReportAllocs()
	for b.Loop() {
		h, err := OpenHistory(context.Background(), e.path)
		if err != nil {
			b.Fatal(err)
		}
		if h.Len() != benchMessages {
			b.Fatal(h.Len())
		}
		h.Close()
	}
}

// BenchmarkHistoryAppend is one History.Append (one line, synced) on
// histories of 1,000, 100,000 and 1,000,000 messages, and its floor
// ("floor-fsync"): the same line appended to a plain file with one write
// and one fsync. The histories are written line by line into the
// benchmark's temporary folder (the 1M one, about 250 MB, in a few
// seconds) and opened untimed.
func BenchmarkHistoryAppend(b *testing.B) {
	line, err := appendRecord(nil, new(benchAppended(0)))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor-fsync", func(b *testing.B) {
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "plain"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Write(line); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run("messages="+strconv.Itoa(n), func(b *testing.B) {
			path := writeLongHistory(b, n)
			h, err := OpenHistory(context.Background(), path, WithMaxBytes(1<<30), WithMaxMessages(1<<30))
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := h.Append(context.Background(), benchAppended(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// writeLongHistory writes a valid history of n messages (repeated
// exchanges: a request, a tool call, its result, an answer) straight to a
// file, one line at a time, and returns its path.
func writeLongHistory(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	root, err := resolveRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "history.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	buf := appendHeader(nil, &Header{RuntimeID: benchRuntime, SessionID: benchSession, ProjectRoot: root})
	for i := 0; i < n; i++ {
		x := strconv.Itoa(i / 4)
		call := "long-call-" + x
		var m contract.Message
		switch entry := "long-" + strconv.Itoa(i); i % 4 {
		case 0:
			m = contract.NewRuntimeMessage(benchRuntime, benchSession, entry, contract.RoleUser, &contract.TextBlock{Text: "Request " + x})
		case 1:
			m = contract.NewRuntimeMessage(benchRuntime, benchSession, entry, contract.RoleAssistant, &contract.ToolCallBlock{ID: call, Name: "read"})
		case 2:
			m = contract.NewRuntimeMessage(benchRuntime, benchSession, entry, contract.RoleTool, &contract.ToolResultBlock{ToolCallID: call, ToolName: "read", Content: "package main"})
		default:
			m = contract.NewRuntimeMessage(benchRuntime, benchSession, entry, contract.RoleAssistant, &contract.TextBlock{Text: "Answer " + x})
		}
		if buf, err = appendRecord(buf, &m); err != nil {
			b.Fatal(err)
		}
		if len(buf) > 1<<20 {
			if _, err := w.Write(buf); err != nil {
				b.Fatal(err)
			}
			buf = buf[:0]
		}
	}
	if _, err := w.Write(buf); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	// Sync now: the first timed fsync would otherwise write the whole file.
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
