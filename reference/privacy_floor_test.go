package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// excludedLocal is the placeholder of withheld local-only content.
const excludedLocal = `"[DS4 local-only content excluded by privacy policy]"`

// completeThrough sends payload to provider through Complete on a
// reference adapter under cfg and returns what the transport received.
func completeThrough(t *testing.T, cfg privacy.Config, provider string, payload any) json.RawMessage {
	t.Helper()
	e := newEnv(t)
	fx := e.create(t)
	tr := conformance.NewRecordingTransport()
	a, err := New(Options{HistoryPath: e.path, RuntimeID: fx.RuntimeID, ProjectRoot: e.root, Model: &fx.Model, Transport: tr, Privacy: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer a.Shutdown(ctx)
	r := a.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: fx.Model.ID, Payload: payload})
	if r.Status != contract.StatusCompleted || tr.Len() != 1 {
		t.Fatalf("completion %s (%s), %d transport requests", r.Status, r.Code, tr.Len())
	}
	return tr.Requests()[0].Payload
}

// TestCompleteWithholdsBelowAnOpenMarker sends the payload in which a
// mismatched close leaves an internal marker open, so that a later
// local-only pair nests inside it, to a remote provider allowed sensitive
// content: every content must be withheld. An engine with one open slot
// instead of a stack sent the first two.
func TestCompleteWithholdsBelowAnOpenMarker(t *testing.T) {
	cfg := privacy.DefaultConfig()
	cfg.RemoteProviders = map[string][]privacy.Classification{"remote-x": {privacy.Normal, privacy.Internal, privacy.Sensitive}}
	payload := json.RawMessage(`{"messages":[{"role":"user","content":"[ds4:internal]a[ds4:sensitive]b[/ds4:internal]"},` +
		`{"role":"user","content":"public text"},{"role":"user","content":"[ds4:local-only]c[/ds4:local-only]"}]}`)
	got := completeThrough(t, cfg, "remote-x", payload)
	want := `{"messages":[{"role":"user","content":` + excludedLocal + `},{"role":"user","content":` + excludedLocal +
		`},{"role":"user","content":` + excludedLocal + `}]}`
	if string(got) != want {
		t.Fatalf("transport received %s\nwant %s", got, want)
	}
}

// TestCompleteWithholdsNameWithUnclosedMarker sends a member name in
// content context holding an unclosed local-only marker to a remote
// provider: the name and the rest of the payload must be withheld (a Go
// map is walked in sorted-key order).
func TestCompleteWithholdsNameWithUnclosedMarker(t *testing.T) {
	payload := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "public text"}},
		"metadata": map[string]any{"x [ds4:local-only]SECRET": 1},
	}
	got := completeThrough(t, privacy.DefaultConfig(), "remote-x", payload)
	want := `{"messages":[{"content":` + excludedLocal + `,"role":"user"}],"metadata":{` + excludedLocal + `:1}}`
	if string(got) != want || bytes.Contains(got, []byte("SECRET")) {
		t.Fatalf("transport received %s\nwant %s", got, want)
	}
}
