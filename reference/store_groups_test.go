package reference

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// TestPropertyAppendedGroupsEqualDerivedGroups appends the rest of a
// generated history to a file in random batches and checks that the
// groups a cached adapter reports after each batch, which it derives again
// only for the groups the batch touches, are exactly BuildToolAtomicGroups
// of the whole history, and that the caller may write to them.
func TestPropertyAppendedGroupsEqualDerivedGroups(t *testing.T) {
	const rid, sid = "groups-runtime", "groups-session"
	base := t.TempDir()
	root, err := resolveRoot(base)
	mustNil(t, err)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		path := filepath.Join(base, strconv.Itoa(n), "history.jsonl")
		msgs := gen.HistoryOf(gen.HistoryOptions{RuntimeID: rid, SessionID: sid, MaxMessages: 40}).Draw(rt, "history")
		k := rapid.IntRange(0, len(msgs)).Draw(rt, "prefix")
		if err := CreateHistory(context.Background(), path, Header{RuntimeID: rid, SessionID: sid, ProjectRoot: root}, msgs[:k]); err != nil {
			rt.Fatal(err)
		}
		a, err := New(Options{HistoryPath: path, RuntimeID: rid, ProjectRoot: root, Transport: &recorder{}})
		if err != nil {
			rt.Fatal(err)
		}
		check := func(upTo int) {
			s, err := a.SnapshotHistory(context.Background())
			if err != nil {
				rt.Fatal(err)
			}
			want := contract.BuildToolAtomicGroups(msgs[:upTo])
			if len(want) == 0 && len(s.ToolAtomicGroups) == 0 {
				return
			}
			if !reflect.DeepEqual(s.ToolAtomicGroups, want) {
				rt.Fatalf("after %d messages: groups\n%+v\nwant\n%+v", upTo, s.ToolAtomicGroups, want)
			}
			// The groups are the caller's: writing to them changes no
			// later snapshot.
			for i := range s.ToolAtomicGroups {
				g := &s.ToolAtomicGroups[i]
				g.Complete = !g.Complete
				for k := range g.MessageIDs {
					g.MessageIDs[k] += "x"
				}
				for k := range g.ToolCallIDs {
					g.ToolCallIDs[k] += "x"
				}
			}
		}
		check(k)
		for k < len(msgs) {
			batch := rapid.IntRange(1, min(3, len(msgs)-k)).Draw(rt, "batch")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				rt.Fatal(err)
			}
			var line []byte
			for _, m := range msgs[k : k+batch] {
				if line, err = appendRecord(line, &m); err != nil {
					rt.Fatal(err)
				}
			}
			f.Write(line)
			f.Close()
			k += batch
			check(k)
		}
	})
}
