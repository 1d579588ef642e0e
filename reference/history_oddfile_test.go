//go:build unix

package reference

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// returns runs fn and fails the test when it has not returned within a
// generous bound: the calls tested here must never wait.
func returns(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

func TestOddFilesAreRefusedWithoutWaiting(t *testing.T) {
	cases := map[string]func(t *testing.T, path string){
		"fifo":      func(t *testing.T, path string) { mustNil(t, syscall.Mkfifo(path, 0o600)) },
		"directory": func(t *testing.T, path string) { mustNil(t, os.Mkdir(path, 0o700)) },
		"null device": func(t *testing.T, path string) {
			mustNil(t, os.Symlink("/dev/null", path))
		},
		"zero device": func(t *testing.T, path string) {
			mustNil(t, os.Symlink("/dev/zero", path))
		},
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			mustNil(t, os.MkdirAll(filepath.Dir(e.path), 0o700))
			make(t, e.path)
			if _, err := os.Stat("/dev/zero"); err != nil && name == "zero device" {
				t.Skip("no /dev/zero")
			}
			ctx := context.Background()
			a := newAdapter(t, e.options(nil))
			returns(t, "SnapshotHistory", func() {
				if _, err := a.SnapshotHistory(ctx); !errors.Is(err, ErrHistoryCorrupt) {
					t.Errorf("snapshot: %v, want ErrHistoryCorrupt", err)
				}
			})
			if !hasDiagnostic(a, CodeHistoryReadFailed) {
				t.Error("no read-failed diagnostic")
			}
			returns(t, "OpenHistory", func() {
				if _, err := OpenHistory(ctx, e.path); !errors.Is(err, ErrHistoryCorrupt) {
					t.Errorf("open: %v, want ErrHistoryCorrupt", err)
				}
			})
			returns(t, "AppendMessage", func() {
				if err := AppendMessage(ctx, e.path, nextMessage("n")); !errors.Is(err, ErrHistoryCorrupt) {
					t.Errorf("append: %v, want ErrHistoryCorrupt", err)
				}
			})
			returns(t, "RecoverHistory", func() {
				if _, err := RecoverHistory(ctx, e.path); !errors.Is(err, ErrHistoryCorrupt) {
					t.Errorf("recover: %v, want ErrHistoryCorrupt", err)
				}
			})
			returns(t, "Shutdown", func() { mustNil(t, a.Shutdown(ctx)) })
		})
	}
}

// TestPlantedSymlinksAreNotFollowed plants symbolic links where older
// versions kept a lock file and where a stale temporary file of a create
// would be: writers lock the history itself and never open, create or
// remove what the links lead to.
func TestPlantedSymlinksAreNotFollowed(t *testing.T) {
	e := newEnv(t)
	target := filepath.Join(e.dir, "target")
	mustNil(t, os.MkdirAll(filepath.Dir(e.path), 0o700))
	temp := filepath.Join(filepath.Dir(e.path), "."+filepath.Base(e.path)+createSuffix+"planted")
	kept := filepath.Join(e.dir, "kept")
	mustNil(t, os.WriteFile(kept, []byte("not a history"), 0o600))
	mustNil(t, os.Symlink(kept, temp))
	e.create(t)
	mustNil(t, os.Symlink(target, e.path+".lock"))
	h := openHistoryT(t, e.path)
	mustNil(t, h.Append(context.Background(), nextMessage("n")))
	mustNil(t, h.Close())
	mustNil(t, AppendMessage(context.Background(), e.path, nextMessage("m")))
	if _, err := RecoverHistory(context.Background(), e.path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock symlink's target was created: %v", err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "not a history" {
		t.Fatalf("the file a planted temporary name leads to was touched: %q %v", b, err)
	}
	if _, err := os.Lstat(temp); err != nil {
		t.Fatalf("a planted symlink was removed: %v", err)
	}
}

// TestCreateRemovesStaleTemporaryFiles plants the temporary file a killed
// creator leaves behind and the one of a creator at work (which holds its
// lock): a create of the same name removes the first and keeps the second.
func TestCreateRemovesStaleTemporaryFiles(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Dir(e.path)
	mustNil(t, os.MkdirAll(dir, 0o700))
	prefix := filepath.Join(dir, "."+filepath.Base(e.path)+createSuffix)
	mustNil(t, os.WriteFile(prefix+"dead", []byte(`{"type":"ds4-runt`), 0o600))
	live, err := os.OpenFile(prefix+"live", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	mustNil(t, err)
	defer live.Close()
	if ok, err := tryFlock(live, true); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	other := filepath.Join(dir, ".other.jsonl"+createSuffix+"dead")
	mustNil(t, os.WriteFile(other, nil, 0o600))
	e.create(t)
	if _, err := os.Lstat(prefix + "dead"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead creator's temporary file is still there: %v", err)
	}
	for _, kept := range []string{prefix + "live", other} {
		if _, err := os.Lstat(kept); err != nil {
			t.Fatalf("%s was removed: %v", kept, err)
		}
	}
}

// TestSnapshotWaitsForAWriterOnlyAsLongAsItsContext holds the writer lock
// over a half-written record, as a writer in the middle of a write does:
// snapshots wait for the record to end instead of reading it half, for as
// long as their context allows ("another writer holds the lock"), and
// Shutdown does not wait for them. Without a writer the same bytes are a
// torn record, refused at once.
func TestSnapshotWaitsForAWriterOnlyAsLongAsItsContext(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	whole := string(e.read(t))
	line := recordLine(t, nextMessage("next"))
	w, err := os.OpenFile(e.path, os.O_WRONLY|os.O_APPEND, 0)
	mustNil(t, err)
	defer w.Close()
	if ok, err := tryFlock(w, true); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	_, err = w.WriteString(line[:10])
	mustNil(t, err)

	a := newAdapter(t, e.options(nil))
	// The context ends once the snapshot waits for the writer, however
	// long reaching that took: a deadline could end before it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.store.waiting = cancel
	if _, err := a.SnapshotHistory(ctx); !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) ||
		!strings.HasSuffix(err.Error(), ": another writer holds the lock") {
		t.Fatalf("snapshot under a writer's lock: %v, want ErrLocked and the context's end", err)
	}
	a.store.waiting = nil
	if len(a.Diagnostics()) != 0 {
		t.Fatalf("a context that ended recorded %+v", a.Diagnostics())
	}
	// One snapshot waits with no deadline; another waits for its turn and
	// gives up with its context; Shutdown returns meanwhile.
	waiting := make(chan error, 1)
	go func() { _, err := a.SnapshotHistory(context.Background()); waiting <- err }()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	returns(t, "a second snapshot", func() {
		if _, err := a.SnapshotHistory(ctx2); err == nil {
			t.Error("a second snapshot succeeded under a writer's lock")
		}
	})
	returns(t, "Shutdown", func() { mustNil(t, a.Shutdown(context.Background())) })
	_, err = w.WriteString(line[10:])
	mustNil(t, err)
	mustNil(t, funlock(w))
	returns(t, "the waiting snapshot", func() {
		if err := <-waiting; err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("waiting snapshot: %v", err)
		}
	})
	// A fresh adapter sees the whole record.
	defer func() {
		// The same half record with no writer is torn.
		e.write(t, whole+line[:10])
		returns(t, "a snapshot of a torn file", func() {
			_, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
			var he *HistoryError
			if !errors.As(err, &he) || he.Reason != "unterminated final record" {
				t.Errorf("torn file: %v", err)
			}
		})
	}()
	s, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
	if err != nil || len(e.read(t)) != len(whole)+len(line) || len(s.Messages) != len(fixture().Messages)+1 {
		t.Fatalf("after the write: %v", err)
	}
}
