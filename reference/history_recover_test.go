package reference

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestRecoverMovesTornTailAside(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	clean := string(e.read(t))
	torn := recordLine(t, nextMessage("torn"))
	torn = torn[:len(torn)/2]
	e.write(t, clean+torn)
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
	if _, err := OpenHistory(context.Background(), e.path); !errors.Is(err, ErrHistoryCorrupt) {
		t.Fatalf("OpenHistory of a torn file: %v", err)
	}

	r, err := RecoverHistory(context.Background(), e.path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Offset != int64(len(clean)) || r.Bytes != int64(len(torn)) || !strings.HasPrefix(r.SideFile, e.path+sideSuffix) {
		t.Fatalf("recovery %+v", r)
	}
	if string(e.read(t)) != clean {
		t.Fatal("the file is not its complete lines")
	}
	side, err := os.ReadFile(r.SideFile)
	if err != nil || string(side) != torn {
		t.Fatalf("side file holds %d bytes, want the %d torn ones (%v)", len(side), len(torn), err)
	}
	if fi, err := os.Stat(r.SideFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("side file mode: %v %v", fi.Mode(), err)
	}

	// Round trip: the recovered history opens and takes appends again.
	h := openHistoryT(t, e.path)
	if err := h.Append(context.Background(), nextMessage("torn")); err != nil {
		t.Fatal(err)
	}
	h.Close()
	s, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
	if err != nil || len(s.Messages) != len(fx.Messages)+1 {
		t.Fatalf("snapshot after recovery: %v", err)
	}
}

func TestRecoverLeavesCompleteFilesAlone(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	invalid := e.fixtureText(t, append(fixture().Messages, fixture().Messages[0])) // a duplicate id, complete lines
	for _, text := range []string{string(e.read(t)), invalid, ""} {
		e.write(t, text)
		expectUnchanged(t, e, func() {
			r, err := RecoverHistory(context.Background(), e.path)
			if err != nil || r != (Recovery{}) {
				t.Fatalf("recovery of a complete file: %+v, %v", r, err)
			}
		})
	}
	assertOnlyHistory(t, e)
}

func TestRecoverRefusesFileWithoutCompleteLine(t *testing.T) {
	e := newEnv(t)
	e.write(t, `{"type":"ds4-runtime-session-v1","runtimeId":"x"`)
	expectUnchanged(t, e, func() {
		if _, err := RecoverHistory(context.Background(), e.path); !errors.Is(err, ErrHistoryCorrupt) {
			t.Fatalf("error %v, want ErrHistoryCorrupt", err)
		}
	})
	if _, err := RecoverHistory(context.Background(), e.path+".missing"); !errors.Is(err, ErrHistoryMissing) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestRecoverWaitsForTheWriter(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	e.write(t, string(e.read(t))+`{"type":"mess`)
	lock, err := os.Open(e.path)
	mustNil(t, err)
	defer lock.Close()
	mustNil(t, lockWriter(context.Background(), "test", e.path, lock))
	ctx, cancel := untilAwaited()
	defer cancel()
	expectUnchanged(t, e, func() {
		if _, err := RecoverHistory(ctx, e.path); !errors.Is(err, ErrLocked) {
			t.Fatalf("error %v, want ErrLocked", err)
		}
	})
}

// assertOnlyHistory fails when the history's folder holds anything but
// the history.
func assertOnlyHistory(t *testing.T, e env) {
	t.Helper()
	entries, err := os.ReadDir(e.dir + "/history")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if n := d.Name(); n != "session.jsonl" {
			t.Fatalf("unexpected file %q", n)
		}
	}
}
