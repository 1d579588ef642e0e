package privacy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// TestEscapedNamesSurviveSanitising covers member names that need JSON
// escapes followed by values that need them too: the name must be the one
// sanitised and written, not text taken from the value.
func TestEscapedNamesSurviveSanitising(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	cases := []struct {
		name string
		in   string
		want payloadWant
	}{
		{"marker pair in a name",
			`{"note\n[ds4:local-only]P[/ds4:local-only]":{"v":"abcdefghijklmnopqr\n"}}`,
			payloadWant{`{"note\n[DS4 local-only content excluded by privacy policy]":{"v":"abcdefghijklmnopqr\n"}}`, LocalOnly, true, 1, 0}},
		{"credential below an escaped name",
			`{"k\n2345678901234567890":{"content":"sk-ant-REDTEAMCRED0123456789\n"}}`,
			payloadWant{`{"k\n2345678901234567890":{"content":"[DS4 REDACTED CREDENTIAL]\n"}}`, Normal, true, 0, 1}},
		{"name followed by an escaped array item",
			`{"a\"bcdefgh":["x\ny"]}`,
			payloadWant{`{"a\"bcdefgh":["x\ny"]}`, Normal, false, 0, 0}},
		{"names that differ after an escape",
			`{"a\nb":{"c":"\n"},"a\nc":{"c":"\t"}}`,
			payloadWant{`{"a\nb":{"c":"\n"},"a\nc":{"c":"\t"}}`, Normal, false, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkPayload(t, e, "openai", raw(c.in), c.want) })
	}
}

// TestPayloadsWithEscapesAndNothingToSanitise sends random documents with
// escapes in names and values, and nothing the engine would change, to a
// remote provider: each must come out exactly as JSON.stringify would write
// it.
func TestPayloadsWithEscapesAndNothingToSanitise(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bc", "\n", "\"", "\\", "\t", "é", "\u2028", "\x01", "x y", "/"}
	str := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	var value func(depth int) jsonw.Value
	value = func(depth int) jsonw.Value {
		switch k := rng.IntN(4); {
		case depth > 3 || k == 0:
			return jsonw.Value{Kind: jsonw.String, Str: str()}
		case k == 1:
			v := jsonw.Value{Kind: jsonw.Array, Items: []jsonw.Value{}}
			for range rng.IntN(4) {
				v.Items = append(v.Items, value(depth+1))
			}
			return v
		default:
			v := jsonw.Value{Kind: jsonw.Object, Members: []jsonw.Member{}}
			seen := map[string]bool{}
			for range rng.IntN(5) {
				if n := str(); !seen[n] {
					seen[n] = true
					v.Members = append(v.Members, jsonw.Member{Name: n, Value: value(depth + 1)})
				}
			}
			return v
		}
	}
	for range 2000 {
		in, err := jsonw.AppendValue(nil, jsonw.Value{Kind: jsonw.Object, Members: []jsonw.Member{{Name: str(), Value: value(0)}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.SanitizePayload("openai", json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Value) != string(in) || got.Changed {
			t.Fatalf("payload changed:\n in %s\nout %s", in, got.Value)
		}
	}
}
