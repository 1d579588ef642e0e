package privacy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
)

func TestResultForProvider(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.SanitizePayload("remote-x", map[string]any{"content": "[ds4:local-only]x[/ds4:local-only] sk-abcdefgh12345678"})
	if err != nil {
		t.Fatal(err)
	}
	got := r.ForProvider("remote-x")
	if got.Provider != "remote-x" || got.Destination != contract.DestinationRemote || string(got.Payload) != string(r.Value) ||
		!got.Changed || got.BlockedBlocks != 1 || got.SecretRedactions != 1 {
		t.Errorf("ForProvider = %+v from %+v", got, r)
	}
}

// TestWorkLetsGoOfThePayload checks what the pool of working space keeps
// between sanitisations: after a reset no token, member name or sanitised
// text of the payload is left in it, and the result is not shared with it.
func TestWorkLetsGoOfThePayload(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	ws := new(work)
	payload := json.RawMessage(`{"messages":[{"role":"user","content":"[ds4:internal]QZXJ-A[/ds4:internal] x"},` +
		`{"role":"user","content":"[ds4:normal]n[/ds4:normal] -----BEGIN PRIVATE KEY-----k-----END PRIVATE KEY----- sk-QZXJ-E0123"}],"metadata":{"[ds4:normal]QZXJ-B[/ds4:normal]":"QZXJ-C"}}`)
	res, err := e.sanitizeWith(ws, Remote, classMask{true, true}, payload)
	if err != nil {
		t.Fatal(err)
	}
	used := ws.toks
	ws.reset()
	for i, tok := range used[:cap(used)] {
		if tok != (jsonw.Token{}) {
			t.Fatalf("token %d kept: %+v", i, tok)
		}
	}
	for _, n := range ws.names[:cap(ws.names)] {
		if n != "" {
			t.Fatalf("member name kept: %q", n)
		}
	}
	for _, b := range [][]byte{ws.buf, ws.doc, ws.secret[0], ws.secret[1]} {
		if bytes.Contains(b[:cap(b)], []byte("QZXJ")) {
			t.Fatalf("payload text kept: %q", b[:cap(b)])
		}
	}
	if ws.out != nil || res.SecretRedactions != 2 {
		t.Fatalf("result kept %t, %d redactions", ws.out != nil, res.SecretRedactions)
	}
	if !bytes.Contains(res.Value, []byte("QZXJ-A")) || !bytes.Contains(res.Value, []byte("QZXJ-B")) {
		t.Fatalf("the result lost its text: %s", res.Value)
	}
	// Tokens written before a payload fails to parse are let go of too.
	if _, err := e.sanitizeWith(ws, Remote, classMask{true, true}, json.RawMessage(`{"a":"QZXJ-D","b":`)); err == nil {
		t.Fatal("a truncated document was sanitised")
	}
	for i, tok := range ws.toks[:cap(ws.toks)] {
		if tok != (jsonw.Token{}) {
			t.Fatalf("token %d kept after an error: %+v", i, tok)
		}
	}
}
