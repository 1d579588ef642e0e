package nodeadapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// nodeLine is one protocol line the adapter wrote.
type nodeLine struct {
	ID     uint64                 `json:"id"`
	Method string                 `json:"method"`
	Params json.RawMessage        `json:"params"`
	Result json.RawMessage        `json:"result"`
	Error  *struct{ Code string } `json:"error"`
}

// The adapter serves one request at a time, and acts on a cancel as soon
// as it reads it: a completion cancelled while it waits its turn answers a
// fallback when its turn comes and never sends a transport request, and a
// transport request names the completion it serves.
func TestNodeAdapterHonoursCancel(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "adapter.mjs")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewReader(stdout)
	send := func(format string, args ...any) {
		t.Helper()
		if _, err := io.WriteString(stdin, fmt.Sprintf(format, args...)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() nodeLine {
		t.Helper()
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var l nodeLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("not a protocol line: %q", line)
		}
		return l
	}
	fx := conformance.NewFixture()
	fixture, err := json.Marshal(fx)
	if err != nil {
		t.Fatal(err)
	}
	send(`{"id":1,"method":"hello","params":{"protocol":"runtime-adapter-bridge-v1"}}`)
	next()
	send(`{"id":2,"method":"create","params":{"fixture":%s}}`, fixture)
	var created struct{ Instance string }
	if l := next(); json.Unmarshal(l.Result, &created) != nil || created.Instance == "" {
		t.Fatalf("create answered %+v", l)
	}
	complete := fmt.Sprintf(`"method":"complete","params":{"instance":%q,"provider":%q,"model":%q,"payload":{"messages":[]}}`,
		created.Instance, fx.Model.Provider, fx.Model.ID)
	send(`{"id":3,%s}`, complete)
	transport := next()
	var tp struct{ Call uint64 }
	if transport.Method != "transport" || json.Unmarshal(transport.Params, &tp) != nil || tp.Call != 3 {
		t.Fatalf("the first completion sent %s %s, want a transport request naming call 3", transport.Method, transport.Params)
	}
	// Completion 4 waits behind 3, which waits for its transport answer.
	send(`{"id":4,%s}`, complete)
	send(`{"id":5,"method":"cancel","params":{"id":4}}`)
	if l := next(); l.ID != 5 || string(l.Result) != "null" {
		t.Fatalf("the cancel answered %+v", l)
	}
	send(`{"id":%d,"result":{"output":"done"}}`, transport.ID)
	if l := next(); l.ID != 3 || !strings.Contains(string(l.Result), `"completed"`) {
		t.Fatalf("the first completion answered %+v", l)
	}
	l := next()
	if l.Method != "" || l.ID != 4 {
		t.Fatalf("the cancelled completion sent %+v, want its answer", l)
	}
	var r struct{ Status, Reason string }
	if json.Unmarshal(l.Result, &r) != nil || r.Status != "fallback" || r.Reason != "completion transport failed" {
		t.Fatalf("the cancelled completion answered %s", l.Result)
	}
}
