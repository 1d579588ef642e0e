package reference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A cold read in blocks of any size gives the verdict of parseHistory on
// the whole file: the same error, or the same messages and revision.
func TestPropertyColdReadIsParseHistory(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	header := e.headerLine(fx.RuntimeID, fx.SessionID, e.root)
	var records []string
	for _, m := range fx.Messages {
		records = append(records, recordLine(t, m))
	}
	path := filepath.Join(e.dir, "cold.jsonl")
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		if rapid.IntRange(0, 9).Draw(rt, "header") > 0 {
			b.WriteString(header)
		} else {
			b.WriteString(rapid.SampledFrom([]string{"", "\n", "{}\n", `{"type":"ds4-runtime-session-v1"}` + "\n"}).Draw(rt, "bad header"))
		}
		for range rapid.IntRange(0, 8).Draw(rt, "lines") {
			switch rapid.IntRange(0, 9).Draw(rt, "kind") {
			case 0:
				b.WriteString("\n")
			case 1:
				b.WriteString("{\"type\":\"message\"}\n")
			case 2:
				b.WriteString("\xff\xfe\n")
			default:
				b.WriteString(rapid.SampledFrom(records).Draw(rt, "record"))
			}
		}
		data := b.String()
		if cut := rapid.IntRange(0, 3).Draw(rt, "cut"); cut > 0 && len(data) > 0 {
			data = data[:len(data)-rapid.IntRange(1, min(len(data), 40)).Draw(rt, "cut bytes")]
		}
		l := limits{maxBytes: int64(rapid.IntRange(len(data)/2, len(data)+10).Draw(rt, "max bytes")), maxMessages: rapid.IntRange(0, 10).Draw(rt, "max messages")}
		if l.maxBytes == 0 {
			l.maxBytes = 1
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			rt.Fatal(err)
		}
		want, wantErr := parseHistory(readOp, path, []byte(data), l)
		if int64(len(data)) > l.maxBytes {
			want, wantErr = nil, parseError(readOp, path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
		}
		s := &store{path: path, limits: l, block: rapid.IntRange(1, 64).Draw(rt, "block")}
		f, fi, err := openRegular(readOp, path, os.O_RDONLY)
		if err != nil {
			rt.Fatal(err)
		}
		defer f.Close()
		got, gotErr := s.coldRead(context.Background(), f, fi)
		switch {
		case (wantErr == nil) != (gotErr == nil):
			rt.Fatalf("cold read: %v, parseHistory: %v", gotErr, wantErr)
		case wantErr != nil:
			if gotErr.Error() != wantErr.Error() {
				rt.Fatalf("cold read: %v, parseHistory: %v", gotErr, wantErr)
			}
		default:
			sum := sha256.Sum256([]byte(data))
			if len(got.msgs) != len(want.messages) || got.header != want.header || got.root != want.root ||
				hex.EncodeToString(got.digest.Sum(nil)) != hex.EncodeToString(sum[:]) || got.size != int64(len(data)) || got.held.size != got.size {
				rt.Fatalf("cold read differs: %d messages, want %d", len(got.msgs), len(want.messages))
			}
			for i := range got.msgs {
				if got.x.message(&got.msgs[i]).ID != want.messages[i].ID {
					rt.Fatalf("message %d differs", i)
				}
			}
		}
	})
}
