package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// transcript returns the lines of docs/bridge.md's example transcript:
// "> …" what the harness writes, "< …" what the adapter writes.
func transcript(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/bridge.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "> {") || strings.HasPrefix(l, "< {") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 8 {
		t.Fatalf("docs/bridge.md has %d transcript lines", len(lines))
	}
	return lines
}

// linePattern turns a "> …" line of the transcript into a pattern the
// harness's line must match: "…" stands for what the doc shortened.
func linePattern(doc string) *regexp.Regexp {
	parts := strings.Split(doc, "…")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// transcriptTransport answers as the transcript's harness does.
type transcriptTransport struct{ calls int }

func (tr *transcriptTransport) Send(_ context.Context, req contract.TransportRequest) (json.RawMessage, error) {
	tr.calls++
	return json.RawMessage(`{"role":"assistant","content":"conformance completion"}`), nil
}

// The transcript in docs/bridge.md is what the harness does: played the
// adapter's lines, the harness writes the doc's lines, and it reads the
// adapter's answers as the doc says.
func TestDocTranscriptMatchesTheHarness(t *testing.T) {
	checkGoroutines(t)
	lines := transcript(t)
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	c := NewClient(cr, cw, Options{CallTimeout: bound(10 * time.Second)})
	defer c.Close()
	defer sw.Close()
	defer sr.Close()

	type outcome struct {
		root string
		res  contract.CompletionResult
		err  error
	}
	tr := &transcriptTransport{}
	done := make(chan outcome, 1)
	go func() {
		ctx := context.Background()
		var o outcome
		defer func() { done <- o }()
		if _, o.err = c.Hello(ctx); o.err != nil {
			return
		}
		var inst conformance.Instance
		if inst, o.err = c.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr}); o.err != nil {
			return
		}
		o.root = inst.ExpectedProjectRoot
		o.res = inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "conformance-remote", Model: "conformance-model",
			Payload: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}}})
		o.err = inst.Cleanup(ctx)
	}()

	in := bufio.NewReader(sr)
	for i, l := range lines {
		body := l[2:]
		if l[0] == '>' {
			got, err := in.ReadString('\n')
			if err != nil {
				t.Fatalf("line %d: the harness wrote nothing more (%v); the doc says\n%s", i+1, err, body)
			}
			if got = strings.TrimSuffix(got, "\n"); !linePattern(body).MatchString(got) {
				t.Fatalf("line %d: the harness wrote\n%s\nthe doc says\n%s", i+1, got, body)
			}
			continue
		}
		// The adapter's line, with what the doc shortened left out.
		line := strings.ReplaceAll(body, "…", "")
		if !json.Valid([]byte(line)) {
			t.Fatalf("line %d is not JSON once unshortened: %s", i+1, line)
		}
		if _, err := io.WriteString(sw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.Status != contract.StatusCompleted || string(o.res.Output) != `{"role":"assistant","content":"conformance completion"}` ||
		o.res.Privacy.BlockedBlocks != 1 || tr.calls != 1 || o.root != "/tmp/node-adapter-" {
		t.Fatalf("the harness read %+v (root %q, %d transport calls)", o.res, o.root, tr.calls)
	}
}
