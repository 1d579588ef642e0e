package privacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

const fuzzProbe = "QZXJPROBEQZXJ"

// FuzzSanitizeNeverLeaksLocalOnly checks the engine's central promise: text
// inside a [ds4:local-only] pair in a content string never reaches a remote
// provider, whatever surrounds it (arbitrary JSON next to it, arbitrary text
// before and after it, any remote policy), and the output is valid JSON.
func FuzzSanitizeNeverLeaksLocalOnly(f *testing.F) {
	f.Add(`null`, "", "", byte(0))
	f.Add(`{"content":"[ds4:local-only]"}`, "", "", byte(1))
	f.Add(`"x"`, `\`, "", byte(2))
	f.Add(`[1,2]`, `\\`, `\`, byte(3))
	f.Add(`{"metadata":{"[ds4:normal]a":"[/ds4:normal]"}}`, "[ds4:normal]", "[/ds4:normal]", byte(4))
	f.Add(`{"text":"[/ds4:local-only]"}`, "[ds4:local-only]", "[ds4:internal]", byte(5))
	f.Add(`{"0":"a","messages":[{"role":"user","content":"[ds4:sensitive]s"}]}`, "  ", "[/ds4:sensitive]", byte(6))
	f.Add(`{"a":"sk-abcdefgh12","b":"password=x"}`, "password=", "-----END RSA PRIVATE KEY-----", byte(7))
	f.Add(`{"tools":[{"name":"[ds4:local-only]x","description":"y"}]}`, "Bearer ", "[/DS4:LOCAL-ONLY]", byte(8))
	f.Fuzz(func(t *testing.T, payload, prefix, suffix string, mode byte) {
		if strings.Contains(payload+prefix+suffix, "QZXJ") || !json.Valid([]byte(payload)) {
			t.Skip()
		}
		cfg := DefaultConfig()
		cfg.DefaultClassification = classOrder[int(mode)%3] // never local-only
		cfg.RedactSecrets = mode&4 == 0
		cfg.RemoteProviders = map[string][]Classification{"trusted": {Normal, Internal, Sensitive}}
		provider := "remote"
		if mode&8 != 0 {
			provider = "Trusted"
		}
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		content := prefix + "[ds4:local-only]" + fuzzProbe + "[/ds4:local-only]" + suffix
		doc := []byte(`{"messages":[` + payload + `,{"role":"user","content":`)
		doc = jsonw.AppendString(doc, content)
		doc = append(doc, "}]}"...)
		res, err := e.SanitizePayload(provider, json.RawMessage(doc))
		if err != nil {
			if !errors.Is(err, ErrUninspectable) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !json.Valid(res.Value) {
			t.Fatalf("output is not valid JSON: %q", res.Value)
		}
		if bytes.Contains(res.Value, []byte(fuzzProbe)) {
			t.Fatalf("local-only text leaked to a remote provider: %s", res.Value)
		}
		if res.Classification != LocalOnly || res.BlockedBlocks == 0 {
			t.Fatalf("local-only content not reported: %+v", res)
		}
	})
}
