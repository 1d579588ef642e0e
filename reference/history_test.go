package reference

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

func TestCreateWritesHeaderAndRecords(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	if got, want := string(e.read(t)), e.fixtureText(t, fx.Messages); got != want {
		t.Fatalf("file text differs:\n got %q\nwant %q", got, want)
	}
	fi, err := os.Stat(e.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(filepath.Dir(e.path))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v, want 0700", di.Mode().Perm())
	}
}

func TestCreateDefaultsAndTrims(t *testing.T) {
	e := newEnv(t)
	link := filepath.Join(e.dir, "link")
	if err := os.Symlink(e.root, link); err != nil {
		t.Fatal(err)
	}
	if err := CreateHistory(context.Background(), e.path, Header{RuntimeID: "  ", SessionID: "\u00a0s1 ", ProjectRoot: link}, nil); err != nil {
		t.Fatal(err)
	}
	want := e.headerLine(DefaultRuntimeID, "s1", e.root)
	if got := string(e.read(t)); got != want {
		t.Fatalf("header %q, want %q", got, want)
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	fx := fixture()
	bad := fixture().Messages
	bad[1].Role = "robot"
	dup := append(fixture().Messages, fixture().Messages[0])
	cases := []struct {
		name     string
		h        Header
		msgs     []contract.Message
		sentinel error
	}{
		{"blank session", Header{SessionID: " \t"}, nil, ErrInvalidHeader},
		{"missing root", Header{SessionID: "s", ProjectRoot: "/does/not/exist/at/all"}, nil, ErrInvalidHeader},
		{"structurally invalid message", Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID}, bad, ErrInvalidMessage},
		{"history that does not validate", Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID}, dup, ErrHistoryInvalid},
		{"other session", Header{RuntimeID: fx.RuntimeID, SessionID: "other"}, fx.Messages, ErrHistoryInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if c.h.ProjectRoot == "" {
				c.h.ProjectRoot = e.root
			}
			err := CreateHistory(context.Background(), e.path, c.h, c.msgs)
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("error %v, want %v", err, c.sentinel)
			}
			if _, err := os.Stat(e.path); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a refused history left a file behind")
			}
		})
	}
}

func TestCreateOverExistingFileIsRefused(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	expectUnchanged(t, e, func() {
		err := CreateHistory(context.Background(), e.path, Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}, nil)
		if !errors.Is(err, ErrExists) {
			t.Fatalf("error %v, want ErrExists", err)
		}
	})
}

func TestCreateRefusesHistoryPastBounds(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	if err := CreateHistory(context.Background(), e.path, h, fx.Messages, WithMaxMessages(3)); !errors.Is(err, ErrHistoryTooLarge) {
		t.Fatalf("message bound: %v", err)
	}
	if err := CreateHistory(context.Background(), e.path, h, fx.Messages, WithMaxBytes(100)); !errors.Is(err, ErrHistoryTooLarge) {
		t.Fatalf("byte bound: %v", err)
	}
	for _, o := range []HistoryOption{WithMaxBytes(-1), WithMaxMessages(-1)} {
		if err := CreateHistory(context.Background(), e.path, h, fx.Messages, o); !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("negative bound: %v", err)
		}
	}
	// 0 means the default bound, as in Options.
	if err := CreateHistory(context.Background(), e.path, h, fx.Messages, WithMaxBytes(0), WithMaxMessages(0)); err != nil {
		t.Fatalf("zero bounds: %v", err)
	}
}

// nextMessage is a valid fifth message for the fixture history.
func nextMessage(entry string) contract.Message {
	fx := fixture()
	return contract.Message{
		ID:            fx.SessionID + ":" + entry,
		SourceEntryID: entry,
		Role:          contract.RoleUser,
		Blocks:        []contract.Block{&contract.TextBlock{Text: "and <then> & \u2028 more"}},
		Provenance: contract.Provenance{
			Source: contract.SourceRuntimeSession, SessionID: fx.SessionID, EntryID: entry, RuntimeID: new(fx.RuntimeID),
		},
	}
}

func TestAppendWritesOneLine(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	m := nextMessage("entry-next")
	if err := AppendMessage(context.Background(), e.path, m); err != nil {
		t.Fatal(err)
	}
	if got, want := string(e.read(t)), e.fixtureText(t, append(fx.Messages, m)); got != want {
		t.Fatalf("file text differs:\n got %q\nwant %q", got, want)
	}
	a := newAdapter(t, e.options(nil))
	s, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 5 || s.Messages[4].ID != m.ID {
		t.Fatalf("snapshot after append has %d messages", len(s.Messages))
	}
}

func TestAppendFromAnotherSessionIsRefused(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	m := nextMessage("entry-next")
	m.Provenance.SessionID = "another-session"
	expectUnchanged(t, e, func() {
		if err := AppendMessage(context.Background(), e.path, m); !errors.Is(err, ErrIdentityMismatch) {
			t.Fatalf("error %v, want ErrIdentityMismatch", err)
		}
	})
}

func TestAppendFromAnotherRuntimeIsRefused(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	for _, rid := range []*string{new("another-runtime"), nil} {
		m := nextMessage("entry-next")
		m.Provenance.RuntimeID = rid
		expectUnchanged(t, e, func() {
			if err := AppendMessage(context.Background(), e.path, m); !errors.Is(err, ErrIdentityMismatch) {
				t.Fatalf("error %v, want ErrIdentityMismatch", err)
			}
		})
	}
}

func TestAppendDuplicateIDIsRefused(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	m := fx.Messages[0]
	expectUnchanged(t, e, func() {
		err := AppendMessage(context.Background(), e.path, m)
		if !errors.Is(err, ErrHistoryInvalid) {
			t.Fatalf("error %v, want ErrHistoryInvalid", err)
		}
		if got, want := err.Error(), "Reference history is invalid: history-message-id-duplicate"; got != want {
			t.Fatalf("error text %q, want %q", got, want)
		}
	})
}

func TestAppendListsDistinctCodesInOrder(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	m := fx.Messages[2] // a second result for tool-call-1, and a duplicate id
	expectUnchanged(t, e, func() {
		err := AppendMessage(context.Background(), e.path, m)
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("error %v, want a *ValidationError", err)
		}
		if got := strings.Join(ve.Codes(), ","); got != "history-message-id-duplicate" && !strings.HasPrefix(got, "history-message-id-duplicate,") {
			t.Fatalf("codes %s", got)
		}
		if strings.Count(err.Error(), "history-message-id-duplicate") != 1 {
			t.Fatalf("codes repeated in %q", err.Error())
		}
	})
}

func TestAppendPastByteBoundIsRefused(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	size := int64(len(e.read(t)))
	m := nextMessage("entry-next")
	line := int64(len(recordLine(t, m)))
	expectUnchanged(t, e, func() {
		if err := AppendMessage(context.Background(), e.path, m, WithMaxBytes(size+line-1)); !errors.Is(err, ErrHistoryTooLarge) {
			t.Fatalf("error %v, want ErrHistoryTooLarge", err)
		}
	})
	if err := AppendMessage(context.Background(), e.path, m, WithMaxBytes(size+line)); err != nil {
		t.Fatalf("an append that exactly reaches the bound was refused: %v", err)
	}
}

func TestAppendPastMessageBoundIsRefused(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	m := nextMessage("entry-next")
	expectUnchanged(t, e, func() {
		if err := AppendMessage(context.Background(), e.path, m, WithMaxMessages(4)); !errors.Is(err, ErrHistoryTooLarge) {
			t.Fatalf("error %v, want ErrHistoryTooLarge", err)
		}
	})
	if err := AppendMessage(context.Background(), e.path, m, WithMaxMessages(5)); err != nil {
		t.Fatalf("an append that exactly reaches the bound was refused: %v", err)
	}
}

func TestAppendToCorruptOrMissingFileIsRefused(t *testing.T) {
	e := newEnv(t)
	m := nextMessage("entry-next")
	if err := AppendMessage(context.Background(), e.path, m); !errors.Is(err, ErrHistoryMissing) {
		t.Fatalf("missing: %v", err)
	}
	fx := fixture()
	e.write(t, e.fixtureText(t, fx.Messages)+`{"type":"message"`)
	expectUnchanged(t, e, func() {
		if err := AppendMessage(context.Background(), e.path, m); !errors.Is(err, ErrHistoryCorrupt) {
			t.Fatalf("corrupt: %v", err)
		}
	})
}

func TestAppendStructurallyInvalidMessageIsRefused(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	m := nextMessage("entry-next")
	m.Blocks = append(m.Blocks, nil)
	expectUnchanged(t, e, func() {
		if err := AppendMessage(context.Background(), e.path, m); !errors.Is(err, ErrInvalidMessage) {
			t.Fatalf("error %v, want ErrInvalidMessage", err)
		}
	})
}

// TestParallelDecodeReportsEarliestLine corrupts lines of a history large
// enough to be decoded in several chunks and checks that the error is the
// one a sequential decode reports.
func TestParallelDecodeReportsEarliestLine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := newEnv(t)
	fx := fixture()
	msgs := gen.SyntheticHistory{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, TextBytes: 200}.Messages(12_000)
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	if err := CreateHistory(context.Background(), e.path, h, msgs); err != nil {
		t.Fatal(err)
	}
	clean := e.read(t)
	if len(clean) < 3*parallelChunk {
		t.Fatalf("history of %d bytes is too small to be split", len(clean))
	}
	l, _ := newLimits(nil)
	got, err := parseHistory(readOp, e.path, clean, l)
	if err != nil || !reflect.DeepEqual(got.messages, msgs) {
		t.Fatalf("parallel decode differs from the messages written (%v)", err)
	}
	lines := bytes.SplitAfter(clean, []byte{'\n'})
	for _, bad := range [][]int{{11_999}, {9_000, 11_000}, {3_001, 10_000}, {2, 6_000}, {5_999, 6_000, 6_001}} {
		corrupt := slices.Clone(lines)
		for _, i := range bad {
			corrupt[i+1] = []byte("{\n") // +1: the header is line 1
		}
		data := bytes.Join(corrupt, nil)
		_, err := parseHistory(readOp, e.path, data, l)
		body := data[bytes.IndexByte(data, '\n')+1:]
		want := decodeChunk(context.Background(), readOp, e.path, body, 2, make([]contract.Message, bytes.Count(body, []byte{'\n'})), false)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Fatalf("lines %v: error %v, sequential %v", bad, err, want)
		}
	}
}
