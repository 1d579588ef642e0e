package reference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

func openHistoryT(t *testing.T, path string, opts ...HistoryOption) *History {
	t.Helper()
	h, err := OpenHistory(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("OpenHistory: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func fileRevision(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// toolPair is a tool call message and its result, valid after the fixture.
func toolPair(entry string) (contract.Message, contract.Message) {
	call := nextMessage(entry + "-call")
	call.Role = contract.RoleAssistant
	call.Blocks = []contract.Block{&contract.ToolCallBlock{ID: "call-" + entry, Name: "read"}}
	result := nextMessage(entry + "-result")
	result.Role = contract.RoleTool
	result.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: "call-" + entry, ToolName: "read", Content: "ok"}}
	return call, result
}

func TestHistoryAppendWritesWhatAppendMessageWrites(t *testing.T) {
	e, other := newEnv(t), newEnv(t)
	fx := e.create(t)
	h := openHistoryT(t, e.path)
	if h.Len() != len(fx.Messages) || h.Revision() != fileRevision(t, e.path) {
		t.Fatalf("opened: len %d revision %s", h.Len(), h.Revision())
	}
	call, result := toolPair("x")
	msgs := []contract.Message{nextMessage("n1"), call, result, nextMessage("n2")}
	for i, m := range msgs {
		if err := h.Append(context.Background(), m); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if h.Len() != len(fx.Messages)+i+1 || h.Revision() != fileRevision(t, e.path) {
			t.Fatalf("after append %d: len %d, revision differs from the file's hash", i, h.Len())
		}
	}
	if got, want := string(e.read(t)), e.fixtureText(t, append(fx.Messages, msgs...)); got != want {
		t.Fatalf("file text differs:\n got %q\nwant %q", got, want)
	}
	// The one-shot convenience writes the same bytes.
	other.create(t)
	for _, m := range msgs {
		if err := AppendMessage(context.Background(), other.path, m); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := string(other.read(t)), other.fixtureText(t, append(fx.Messages, msgs...)); got != want {
		t.Fatal("History.Append and AppendMessage wrote different records")
	}
	s, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Revision != h.Revision() || len(s.Messages) != h.Len() {
		t.Fatalf("snapshot revision %s / %d messages, handle %s / %d", s.Revision, len(s.Messages), h.Revision(), h.Len())
	}
}

func TestHistoryRefusalsLeaveFileAndHandleUsable(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	h := openHistoryT(t, e.path)
	size := int64(len(e.read(t)))
	next := nextMessage("next")
	bad := nextMessage("bad")
	bad.Blocks = append(bad.Blocks, nil)
	otherSession := nextMessage("other")
	otherSession.Provenance.SessionID = "another-session"
	orphan := nextMessage("orphan")
	orphan.Role = contract.RoleTool
	orphan.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: "no-such-call", ToolName: "read"}}
	cases := []struct {
		name     string
		m        contract.Message
		opts     []HistoryOption
		sentinel error
		text     string
	}{
		{"duplicate id", fx.Messages[0], nil, ErrHistoryInvalid, "Reference history is invalid: history-message-id-duplicate"},
		{"orphaned result", orphan, nil, ErrHistoryInvalid, "Reference history is invalid: tool-result-orphaned"},
		{"structurally invalid", bad, nil, ErrInvalidMessage, ""},
		{"other session", otherSession, nil, ErrIdentityMismatch, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectUnchanged(t, e, func() {
				err := h.Append(context.Background(), c.m)
				if !errors.Is(err, c.sentinel) {
					t.Fatalf("error %v, want %v", err, c.sentinel)
				}
				if c.text != "" && err.Error() != c.text {
					t.Fatalf("error text %q, want %q", err.Error(), c.text)
				}
			})
		})
	}
	for _, c := range []struct {
		name string
		opts []HistoryOption
	}{
		{"byte bound", []HistoryOption{WithMaxBytes(size + int64(len(recordLine(t, next))) - 1)}},
		{"message bound", []HistoryOption{WithMaxMessages(len(fx.Messages))}},
	} {
		b := openBounded(t, h, e.path, c.opts...)
		expectUnchanged(t, e, func() {
			if err := b.Append(context.Background(), next); !errors.Is(err, ErrHistoryTooLarge) {
				t.Fatalf("%s: error %v, want ErrHistoryTooLarge", c.name, err)
			}
		})
		b.Close()
		h = openHistoryT(t, e.path)
	}
	if err := h.Append(context.Background(), next); err != nil {
		t.Fatalf("a valid append after refusals: %v", err)
	}
	if h.Len() != len(fx.Messages)+1 {
		t.Fatalf("len %d", h.Len())
	}
}

// openBounded closes h (the one writer) and opens the file with opts.
func openBounded(t *testing.T, h *History, path string, opts ...HistoryOption) *History {
	t.Helper()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := OpenHistory(context.Background(), path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHistoryBoundsConvention(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	for _, o := range []HistoryOption{WithMaxBytes(-1), WithMaxMessages(-1)} {
		if _, err := OpenHistory(context.Background(), e.path, o); !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("negative bound: %v", err)
		}
		if err := AppendMessage(context.Background(), e.path, nextMessage("n"), o); !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("negative bound: %v", err)
		}
	}
	h := openHistoryT(t, e.path, WithMaxBytes(0), WithMaxMessages(0))
	if h.limits.maxBytes != DefaultMaxBytes || h.limits.maxMessages != DefaultMaxMessages {
		t.Fatalf("zero bounds became %+v", h.limits)
	}
	h.Close()
	if _, err := OpenHistory(context.Background(), e.path, WithMaxMessages(3)); !errors.Is(err, ErrHistoryTooLarge) {
		t.Fatalf("a file past the bound opened: %v", err)
	}
}

func TestHistoryNoticesChangesByOthers(t *testing.T) {
	fresh := func(t *testing.T) (env, *History) {
		e := newEnv(t)
		e.create(t)
		h := openHistoryT(t, e.path)
		if err := h.Append(context.Background(), nextMessage("first")); err != nil {
			t.Fatal(err)
		}
		return e, h
	}
	refused := func(t *testing.T, h *History) {
		t.Helper()
		for range 2 { // the refusal sticks
			if err := h.Append(context.Background(), nextMessage("next")); !errors.Is(err, ErrConcurrentWrite) {
				t.Fatalf("error %v, want ErrConcurrentWrite", err)
			}
		}
	}
	t.Run("prefix rewritten, same size", func(t *testing.T) {
		e, h := fresh(t)
		data := e.read(t)
		i := len(e.headerLine(fixture().RuntimeID, fixture().SessionID, e.root)) + len(`{"type":"message","message":{"id":"`)
		data[i] ^= 1
		e.write(t, string(data))
		before := e.read(t)
		refused(t, h)
		if string(e.read(t)) != string(before) {
			t.Fatal("a refused append changed the file")
		}
	})
	t.Run("appended by another program", func(t *testing.T) {
		e, h := fresh(t)
		f, err := os.OpenFile(e.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(recordLine(t, nextMessage("outside")))
		f.Close()
		refused(t, h)
	})
	t.Run("replaced", func(t *testing.T) {
		e, h := fresh(t)
		data := e.read(t)
		tmp := e.path + ".new"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, e.path); err != nil {
			t.Fatal(err)
		}
		refused(t, h)
	})
	t.Run("times changed, bytes the same", func(t *testing.T) {
		e, h := fresh(t)
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(e.path, later, later); err != nil {
			t.Fatal(err)
		}
		if err := h.Append(context.Background(), nextMessage("next")); err != nil {
			t.Fatalf("an untouched file was refused: %v", err)
		}
		if h.Revision() != fileRevision(t, e.path) {
			t.Fatal("revision differs from the file's hash")
		}
	})
}

func TestHistoryOneWriterAtATime(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	h := openHistoryT(t, e.path)
	ctx, cancel := untilAwaited()
	defer cancel()
	if _, err := OpenHistory(ctx, e.path); !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
		t.Fatalf("second OpenHistory: %v, want ErrLocked and the context's end", err)
	}
	// AppendMessage in the process holding the History appends through
	// it, whatever name it is given.
	if err := AppendMessage(context.Background(), e.path, nextMessage("n")); err != nil {
		t.Fatalf("AppendMessage while this process holds a History: %v", err)
	}
	if h.Len() != len(fixture().Messages)+1 || h.Revision() != fileRevision(t, e.path) {
		t.Fatal("AppendMessage did not go through the open History")
	}
	// Through a symbolic link the lock is the same.
	link := filepath.Join(e.dir, "link.jsonl")
	if err := os.Symlink(e.path, link); err != nil {
		t.Fatal(err)
	}
	ctx3, cancel3 := untilAwaited()
	defer cancel3()
	if _, err := OpenHistory(ctx3, link); !errors.Is(err, ErrLocked) {
		t.Fatalf("OpenHistory through a link: %v, want ErrLocked", err)
	}
	// A reader is not kept out by a writer that is not writing.
	if _, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A waiting writer gets the lock once it is released.
	done := make(chan error, 1)
	go func() {
		w, err := OpenHistory(context.Background(), e.path)
		if err == nil {
			err = w.Append(context.Background(), nextMessage("waited"))
			w.Close()
		}
		done <- err
	}()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a writer waiting for Close: %v", err)
	}
	// With no History open, AppendMessage opens the file itself.
	if err := AppendMessage(context.Background(), link, nextMessage("alone")); err != nil {
		t.Fatalf("AppendMessage after Close: %v", err)
	}
	if got, err := parseHistory(readOp, e.path, e.read(t), limits{maxBytes: 1 << 20, maxMessages: 100}); err != nil || len(got.messages) != len(fixture().Messages)+3 {
		t.Fatalf("after the appends: %v", err)
	}
	if err := h.Append(context.Background(), nextMessage("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCreateAndOpenHistory(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	hd := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	h, err := CreateAndOpenHistory(context.Background(), e.path, hd, fx.Messages)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Len() != len(fx.Messages) || h.Revision() != fileRevision(t, e.path) {
		t.Fatal("the handle does not describe the file created")
	}
	if got, want := string(e.read(t)), e.fixtureText(t, fx.Messages); got != want {
		t.Fatalf("file text differs:\n got %q\nwant %q", got, want)
	}
	if err := h.Append(context.Background(), fx.Messages[1]); !errors.Is(err, ErrHistoryInvalid) {
		t.Fatalf("duplicate: %v", err)
	}
	for i := range 3 {
		if err := h.Append(context.Background(), nextMessage("n"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if h.Revision() != fileRevision(t, e.path) {
		t.Fatal("revision differs from the file's hash")
	}
	if _, err := CreateAndOpenHistory(context.Background(), e.path, hd, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("create over an open history: %v, want ErrExists", err)
	}
	h.Close()
	expectUnchanged(t, e, func() {
		if _, err := CreateAndOpenHistory(context.Background(), e.path, hd, nil); !errors.Is(err, ErrExists) {
			t.Fatalf("create over an existing history: %v, want ErrExists", err)
		}
	})
	entries, err := os.ReadDir(filepath.Dir(e.path))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if n := d.Name(); n != filepath.Base(e.path) {
			t.Fatalf("create left %q behind", n)
		}
	}
}

func mustNil(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
