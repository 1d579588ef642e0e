package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// TestPipeKeepsEscapedNames sends payloads whose member names need JSON
// escapes through the reference adapter in process and over the bridge,
// which marshals them to JSON for the server to parse: both must send a
// remote provider the same sanitised payload, with every name intact and
// nothing withheld reaching the transport.
func TestPipeKeepsEscapedNames(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	cases := []struct {
		name    string
		payload any
		want    string
	}{
		{"marker pair in a name",
			map[string]any{"note\n[ds4:local-only]P[/ds4:local-only]": map[string]any{"v": "abcdefghijklmnopqr\n"}},
			`{"note\n[DS4 local-only content excluded by privacy policy]":{"v":"abcdefghijklmnopqr\n"}}`},
		{"credential below an escaped name",
			map[string]any{"k\n234567890123456789012345678901234567890": map[string]any{"content": "sk-ant-REDTEAMCRED0123456789\n"}},
			`{"k\n234567890123456789012345678901234567890":{"content":"[DS4 REDACTED CREDENTIAL]\n"}}`},
		{"nothing to sanitise",
			map[string]any{"a\"bcdefgh": []any{"x\ny"}, "back\\slash": map[string]any{"line\nbreak": "quote\"d"}},
			`{"a\"bcdefgh":["x\ny"],"back\\slash":{"line\nbreak":"quote\"d"}}`},
		{"JSON given as []byte",
			[]byte(`{"messages":[{"content":"[ds4:local-only]P[/ds4:local-only] sk-ant-REDTEAMCRED0123456789"}]}`),
			`{"messages":[{"content":"[DS4 local-only content excluded by privacy policy] [DS4 REDACTED CREDENTIAL]"}]}`},
		{"JSON given as a pointer to []byte",
			&[]byte{'{', '"', 'p', 'r', 'o', 'm', 'p', 't', '"', ':', '"', '[', 'd', 's', '4', ':', 'l', 'o', 'c', 'a', 'l', '-', 'o', 'n', 'l', 'y', ']', 'P', '"', '}'},
			`{"prompt":"[DS4 local-only content excluded by privacy policy]"}`},
		{"raw JSON",
			json.RawMessage(`{"x\ty":{"z\n":"[ds4:local-only]P[/ds4:local-only]\n"},"x\tz":"\""}`),
			`{"x\ty":{"z\n":"[DS4 local-only content excluded by privacy policy]\n"},"x\tz":"\""}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, via := range []struct {
				name    string
				factory conformance.Factory
			}{{"in process", reference.NewConformanceFactory()}, {"over the bridge", Pipe(reference.NewConformanceFactory(), Options{})}} {
				tr := conformance.NewRecordingTransport()
				inst, err := via.factory.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
				if err != nil {
					t.Fatal(err)
				}
				r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "openai", Model: "m", Payload: c.payload})
				if err := inst.Cleanup(ctx); err != nil {
					t.Fatal(err)
				}
				if r.Status != contract.StatusCompleted || tr.Len() != 1 {
					t.Fatalf("%s: result %+v, %d transport calls", via.name, r, tr.Len())
				}
				got := tr.Requests()[0].Payload
				if string(got) != c.want {
					t.Errorf("%s: transport saw %s\nwant %s", via.name, got, c.want)
				}
				if bytes.Contains(got, []byte("P[/ds4")) || bytes.Contains(got, []byte("REDTEAMCRED")) {
					t.Errorf("%s: a withheld value reached the transport: %s", via.name, got)
				}
			}
		})
	}
}
