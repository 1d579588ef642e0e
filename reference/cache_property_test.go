package reference

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// TestCachedSnapshotEqualsFreshSnapshot drives one adapter through random
// edits of its history file — valid appends, tool exchanges, invalid and
// corrupt appends, rewrites of earlier bytes, truncations — and checks after
// every edit that its answer (snapshot or error) is exactly what a fresh
// adapter reading the same file answers.
func TestCachedSnapshotEqualsFreshSnapshot(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := newEnv(t)
		fx := e.create(t)
		ctx := context.Background()
		cachedAdapter := newAdapter(t, e.options(nil))
		n := 0
		pending := []string{}
		msg := func(role contract.Role, blocks ...contract.Block) contract.Message {
			n++
			m := nextMessage("p" + strconv.Itoa(n))
			m.Role, m.Blocks = role, blocks
			return m
		}
		appendText := func(s string) {
			f, err := os.OpenFile(e.path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				rt.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(s); err != nil {
				rt.Fatal(err)
			}
		}
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for i := range steps {
			data := e.read(t)
			switch op := rapid.IntRange(0, 10).Draw(rt, "op"); op {
			case 0:
				appendText(recordLine(t, msg(contract.RoleUser, &contract.TextBlock{Text: "more"})))
			case 1:
				id := "call-" + strconv.Itoa(n)
				pending = append(pending, id)
				appendText(recordLine(t, msg(contract.RoleAssistant, &contract.ToolCallBlock{ID: id, Name: "read"})))
			case 2:
				id := "unknown"
				if len(pending) > 0 {
					id = pending[0]
					pending = pending[1:]
				}
				appendText(recordLine(t, msg(contract.RoleTool, &contract.ToolResultBlock{ToolCallID: id, ToolName: "read"})))
			case 3:
				appendText(recordLine(t, fx.Messages[rapid.IntRange(0, 3).Draw(rt, "dup")]))
			case 4:
				appendText(`{"type":"message","message":{}}` + "\n")
			case 5:
				appendText(recordLine(t, msg(contract.RoleUser))[:10])
			case 6:
				// Flip one byte somewhere in the file, keeping its size.
				if len(data) < 2 {
					break
				}
				at := rapid.IntRange(0, len(data)-2).Draw(rt, "at")
				data[at] = rapid.SampledFrom([]byte("aZ0 {}\"")).Draw(rt, "byte")
				e.write(t, string(data))
			case 7:
				if at := rapid.IntRange(0, len(data)).Draw(rt, "cut"); at > 0 {
					e.write(t, string(data[:at]))
				}
			case 8:
				e.write(t, e.fixtureText(t, fx.Messages))
				pending = pending[:0]
			case 9:
				// A new message reusing a tool call id.
				id := rapid.SampledFrom(append([]string{"tool-call-1", " "}, pending...)).Draw(rt, "reused")
				appendText(recordLine(t, msg(contract.RoleAssistant, &contract.ToolCallBlock{ID: id, Name: "read"})))
			case 10:
				// A parallel batch, answered in one go, in a single write.
				a, b := "batch-a-"+strconv.Itoa(n), "batch-b-"+strconv.Itoa(n)
				appendText(recordLine(t, msg(contract.RoleAssistant, &contract.ToolCallBlock{ID: a, Name: "read"}, &contract.ToolCallBlock{ID: b, Name: "read"})) +
					recordLine(t, msg(contract.RoleTool, &contract.ToolResultBlock{ToolCallID: b, ToolName: "read"})) +
					recordLine(t, msg(contract.RoleTool, &contract.ToolResultBlock{ToolCallID: a, ToolName: "read"})))
			}
			got, gotErr := cachedAdapter.SnapshotHistory(ctx)
			want, wantErr := newAdapter(t, e.options(nil)).SnapshotHistory(ctx)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				rt.Fatalf("step %d: cached error %v, fresh error %v", i, gotErr, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				rt.Fatalf("step %d: cached snapshot differs from a fresh one (-fresh +cached):\n%s", i, diff)
			}
			checkAgainstFullValidator(rt, e, want, wantErr)
		}
	})
}

// checkAgainstFullValidator checks an adapter's answer against
// contract.ValidateHistorySnapshot run on the whole parsed file: the adapter
// validates incrementally, and must always agree with the full validator.
func checkAgainstFullValidator(rt *rapid.T, e env, snap contract.HistorySnapshot, err error) {
	data, rerr := os.ReadFile(e.path)
	if rerr != nil {
		rt.Fatal(rerr)
	}
	l, _ := newLimits(nil)
	h, perr := parseHistory(readOp, e.path, data, l)
	if perr != nil || h.header.RuntimeID != fixture().RuntimeID || h.root != e.root {
		if err == nil {
			rt.Fatalf("a file that does not parse or match (%v) gave a snapshot", perr)
		}
		return
	}
	// An adapter's snapshot lists no messages as an empty list, never nil,
	// as it lists no groups; a parse of a header alone has nil.
	msgs := h.messages
	if msgs == nil {
		msgs = []contract.Message{}
	}
	full := snapshotOf(&h.header, h.root, revisionOf(data), msgs, nil)
	issues := contract.ValidateHistorySnapshot(&full)
	var ve *ValidationError
	switch {
	case err == nil && len(issues) != 0:
		rt.Fatalf("the full validator finds %v, the adapter found none", issues)
	case err == nil && !reflect.DeepEqual(snap, full):
		rt.Fatalf("the adapter's snapshot differs from the full parse: %s", cmp.Diff(full, snap))
	case err != nil && !errors.As(err, &ve):
		rt.Fatalf("a file that parses gave %v", err)
	case err != nil && !reflect.DeepEqual(ve.Issues, issues):
		rt.Fatalf("issues %v, the full validator's %v", ve.Issues, issues)
	}
}
