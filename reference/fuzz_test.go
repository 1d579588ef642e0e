package reference

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/internal/vectors"
)

// fuzzProbe is planted in the seeds: whatever the fuzzer does to a file, an
// error about it must never quote it.
const fuzzProbe = "DS4_FUZZ_PRIVATE_LINE"

func fuzzSeeds(f *testing.F) {
	root := os.TempDir()
	h := Header{RuntimeID: "rt", SessionID: "s", ProjectRoot: root}
	header := string(appendHeader(nil, &h))
	rec := func(entry, blocks string) string {
		return `{"type":"message","message":{"id":"s:` + entry + `","sourceEntryId":"` + entry + `","role":"assistant","blocks":[` + blocks +
			`],"provenance":{"source":"runtime-session","sessionId":"s","entryId":"` + entry + `","runtimeId":"rt"},"flags":{}}}` + "\n"
	}
	valid := header +
		rec("e1", `{"type":"text","text":"`+fuzzProbe+` <&> \u2028"}`) +
		rec("e2", `{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a","n":[1,2.5e3,null]}}`) +
		rec("e3", `{"type":"toolResult","toolCallId":"c1","toolName":"read","content":"ok","isError":false}`) +
		rec("e4", `{"type":"opaqueProvider","value":{"k":"`+fuzzProbe+`"},"extra":true}`)
	for _, s := range []string{
		valid,
		header,
		strings.TrimSuffix(valid, "\n"),
		strings.ReplaceAll(valid, "\n", "\r\n"),
		header + "\n",
		header + `{"type":"message","message":{}}` + "\n",
		header + `{"type":"note","message":` + fuzzProbe + "}\n",
		valid + valid,
		"",
		"\xff\n",
	} {
		f.Add([]byte(s))
	}
	for _, c := range vectors.Read(f, "reference-jsonl.jsonl") {
		var out struct {
			FileText string `json:"fileText"`
		}
		c.Decode(f, nil, &out)
		f.Add([]byte(out.FileText))
	}
}

// FuzzParseHistory feeds arbitrary bytes to the history parser. It must
// never panic; an error must wrap one of the package's sentinels and never
// quote the file; a file it accepts must write back to bytes that parse to
// the same messages (and write back identically again).
func FuzzParseHistory(f *testing.F) {
	fuzzSeeds(f)
	l := limits{maxBytes: 1 << 20, maxMessages: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := parseHistory("fuzz", "fuzz.jsonl", data, l)
		if err != nil {
			if !errors.Is(err, ErrHistoryCorrupt) && !errors.Is(err, ErrHistoryTooLarge) {
				t.Fatalf("error wraps no history sentinel: %v", err)
			}
			if bytes.Contains(data, []byte(fuzzProbe)) && strings.Contains(err.Error(), fuzzProbe) {
				t.Fatalf("error quotes the file: %v", err)
			}
			return
		}
		if got, want := len(h.messages), bytes.Count(data, []byte{'\n'})-1; got != want {
			t.Fatalf("parsed %d messages from %d record lines", got, want)
		}
		written := appendHeader(nil, &h.header)
		for i := range h.messages {
			if written, err = appendRecord(written, &h.messages[i]); err != nil {
				t.Fatalf("an accepted message does not write back: %v", err)
			}
		}
		again, err := parseHistory("fuzz", "fuzz.jsonl", written, limits{maxBytes: 1 << 30, maxMessages: 1 << 20})
		if err != nil {
			t.Fatalf("written history does not parse: %v", err)
		}
		rewritten := appendHeader(nil, &again.header)
		for i := range again.messages {
			if rewritten, err = appendRecord(rewritten, &again.messages[i]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(written, rewritten) {
			t.Fatalf("write-back is not stable:\n%s\n%s", written, rewritten)
		}
	})
}
