//go:build !race

package reference

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/ds4context/adapterkit/contract/gen"
)

// snapshotMemoryMessages is the length of TestSnapshotMemory's history.
const snapshotMemoryMessages = 24_000

// TestSnapshotMemory measures a cold snapshot of a 16 MB history: the
// heap at its peak grows by at most 3 times the file, and what the adapter
// keeps once the caller has dropped its snapshot is at most 1.6 times the
// file (the decoded history, not the file's bytes a second time). The
// benchmarks measure the same on the 60 MB history.
func TestSnapshotMemory(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	msgs := gen.SyntheticHistory{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, TextBytes: 360}.Messages(snapshotMemoryMessages)
	mustNil(t, CreateHistory(context.Background(), e.path, Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}, msgs))
	msgs = nil
	fi, err := os.Stat(e.path)
	mustNil(t, err)
	var a *Adapter
	peak := peakHeap(func() {
		a = newAdapter(t, e.options(nil))
		snap, err := a.SnapshotHistory(context.Background())
		if err != nil || len(snap.Messages) != snapshotMemoryMessages {
			t.Fatalf("snapshot: %v", err)
		}
	})
	resident := liveHeap() - heapBase
	runtime.KeepAlive(a)
	size := float64(fi.Size())
	t.Logf("file %.1f MB: peak heap %.2f times the file, resident %.2f times", size/1e6, float64(peak)/size, float64(resident)/size)
	if float64(peak) > 3*size {
		t.Errorf("peak heap %.2f times the file, want at most 3", float64(peak)/size)
	}
	if float64(resident) > 1.6*size {
		t.Errorf("resident cache %.2f times the file, want at most 1.6", float64(resident)/size)
	}

	// Appends bring the indexes a tool append needs, and grow the cache
	// past the room it was made with: it stays within the bound.
	// (The History appending is the runtime's, not the adapter's: it is
	// gone before the heap is measured.)
	func() {
		h, err := OpenHistory(context.Background(), e.path)
		mustNil(t, err)
		defer h.Close()
		for i := 1; i <= snapshotMemoryMessages/20; i++ {
			mustNil(t, h.Append(context.Background(), benchAppendedTool(i, fx.RuntimeID, fx.SessionID)))
			if i%50 == 0 {
				if _, err := a.SnapshotHistory(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}()
	fi, err = os.Stat(e.path)
	mustNil(t, err)
	resident = liveHeap() - heapBase
	runtime.KeepAlive(a)
	size = float64(fi.Size())
	t.Logf("after %d tool appends: resident %.2f times the file", snapshotMemoryMessages/20, float64(resident)/size)
	if float64(resident) > 1.6*size {
		t.Errorf("resident cache after appends %.2f times the file, want at most 1.6", float64(resident)/size)
	}
}
