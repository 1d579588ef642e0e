package privacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

const fuzzProbe = "QZXJPROBEQZXJ"

// hasMarker reports whether s contains an unescaped marker.
func hasMarker(s string) bool { return len(findMarkers(nil, s)) > 0 }

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

// Probes of FuzzSanitizeProbesInNames: a local-only text and a credential.
// Neither is a word or contains a marker, a backslash or a JSON escape.
const (
	localProbe  = "QZXJLOCALQZXJ"
	secretProbe = "sk-ant-QZXJSECRET0123456789"
)

// probeDoc builds a JSON document from fuzz input: objects, arrays and
// strings to any depth, with member names and strings drawn from names
// that escape (quotes, backslashes, control characters, non-ASCII),
// structural and content keys, local-only pairs around localProbe and the
// credential secretProbe. It records every member name it writes, with
// whether the engine may legitimately change it.
type probeDoc struct {
	shape []byte
	text  string
	buf   []byte
	// names holds, per written member name, whether it must come out
	// unchanged.
	names map[string]bool
	n     int
}

var probeWords = []string{
	"content", "text", "messages", "metadata", "role", "type", "name", "id", "note", "x",
	"a\"b", "back\\slash", "line\nbreak", "tab\there", "naïve", "\u2028sep", "\x01ctl", "é\u00e9", "\\[ds4:local-only]",
	"[/ds4:local-only]", "\\",
}

func (p *probeDoc) next() byte {
	if len(p.shape) == 0 {
		return 0
	}
	c := p.shape[0]
	p.shape = p.shape[1:]
	return c
}

// str returns a string with an optional probe, surrounded by escapes. An
// unclosed marker after other text protects the rest of a member name as
// it does in a value: the Go kit's marker-structure floor counts member
// names anywhere in the payload (SPEC §8, Go kit only).
func (p *probeDoc) str() string {
	c := p.next()
	w := probeWords[int(c>>3)%len(probeWords)]
	// Text next to a probe must not end in a backslash (which would
	// escape the marker after it) and must leave the credential
	// word-bounded: a newline separates them.
	pre := strings.TrimRight(w+p.text, "\\") + "\n"
	switch c & 7 {
	case 0, 1, 2:
		return w
	case 3:
		return pre + "[ds4:local-only]" + localProbe + "[/ds4:local-only]\n" + w
	case 4:
		return pre + "[DS4:Local-Only]" + localProbe
	case 5:
		return pre + secretProbe + "\n" + w
	case 6:
		return w + "\t" + p.text
	}
	return pre + "[ds4:local-only]" + localProbe + "[/ds4:local-only]" + "\"" + secretProbe
}

func (p *probeDoc) value(depth int, ctx bool) {
	c := p.next()
	switch {
	case depth > 6 || c%4 == 0:
		p.buf = jsonw.AppendString(p.buf, p.str())
	case c%4 == 1:
		p.buf = append(p.buf, '[')
		for i := range int(p.next() % 4) {
			if i > 0 {
				p.buf = append(p.buf, ',')
			}
			p.value(depth+1, ctx)
		}
		p.buf = append(p.buf, ']')
	default:
		p.buf = append(p.buf, '{')
		seen := map[string]bool{}
		for i := range int(p.next() % 5) {
			name := p.str()
			if seen[name] {
				name += "#" + strconv.Itoa(i)
			}
			seen[name] = true
			if i > 0 {
				p.buf = append(p.buf, ',')
			}
			p.buf = jsonw.AppendString(p.buf, name)
			p.buf = append(p.buf, ':')
			kc := classifyKey(name)
			// A name may change only when it holds a marker, or in
			// content context when it is neither a structural nor a
			// content key (it is then sanitised as content).
			mayChange := hasMarker(name) || ctx && kc == keyOther
			p.names[name] = p.names[name] || !mayChange
			p.n++
			p.value(depth+1, ctx || kc == keyContent)
		}
		p.buf = append(p.buf, '}')
	}
}

// FuzzSanitizeProbesInNames places local-only pairs and credentials in
// member names and string values at any depth, next to names and values
// with JSON escapes, and checks that no local-only probe reaches a remote
// provider (in names or values, in content context or not), that no
// credential in content context does (except under a structural key,
// which is kept as is), and that every member name the engine has no
// reason to change comes out byte for byte the same.
func FuzzSanitizeProbesInNames(f *testing.F) {
	f.Add([]byte{2, 4, 3 << 3, 2, 1, 0, 3, 2}, "", byte(0))
	f.Add([]byte{2, 3, 8<<3 | 3, 2, 2, 10 << 3, 0, 11<<3 | 3, 1, 2, 0, 12<<3 | 5}, "\"", byte(1))
	f.Add([]byte{2, 4, 0, 2, 4, 13 << 3, 1, 3, 0, 7, 0, 5, 0, 3, 14 << 3, 0, 15<<3 | 7}, "\\u0041\n", byte(2))
	f.Add([]byte{2, 2, 2<<3 | 3, 2, 3, 16<<3 | 3, 0, 17<<3 | 4, 0, 18 << 3, 0, 19<<3 | 5}, "é\t\x00", byte(4))
	f.Add([]byte{2, 4, 3, 2, 4, 5, 0, 6, 0, 7, 0, 4, 0, 20<<3 | 3, 1, 3, 0, 9<<3 | 7}, "[ds4:internal]", byte(8))
	// An unclosed marker after text in a member name at the root, outside
	// content context, and one under a name that is no content key.
	f.Add([]byte{2, 1, 9<<3 | 4, 0}, " ", byte(0))
	f.Add([]byte{2, 2, 8 << 3, 2, 1, 4<<3 | 4, 0, 0}, "note", byte(9))
	f.Fuzz(func(t *testing.T, shape []byte, text string, mode byte) {
		if strings.Contains(text, "QZXJ") || !utf8.ValidString(text) || hasMarker(text) {
			// Markers in the filler could nest a probe's pair inside
			// another pair of a member name, where no floor applies.
			t.Skip()
		}
		cfg := DefaultConfig()
		cfg.DefaultClassification = classOrder[int(mode)%3] // never local-only
		cfg.RemoteProviders = map[string][]Classification{"trusted": {Normal, Internal, Sensitive}}
		provider := "remote"
		if mode&8 != 0 {
			provider = "Trusted"
		}
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := &probeDoc{shape: shape, text: text, names: map[string]bool{}}
		p.value(0, false)
		res, err := e.SanitizePayload(provider, json.RawMessage(p.buf))
		if err != nil {
			t.Fatalf("SanitizePayload: %v", err)
		}
		if bytes.Contains(res.Value, []byte(localProbe)) {
			t.Fatalf("local-only text reached a remote provider:\n in %s\nout %s", p.buf, res.Value)
		}
		var out any
		if err := json.Unmarshal(res.Value, &out); err != nil {
			t.Fatalf("output is not valid JSON: %v", err)
		}
		outNames := map[string]bool{}
		// A string is sanitised in content context unless its own key is
		// structural (array items inherit their array's key).
		var walk func(v any, ctx bool, key keyClass)
		walk = func(v any, ctx bool, key keyClass) {
			switch v := v.(type) {
			case map[string]any:
				for name, child := range v {
					outNames[name] = true
					kc := classifyKey(name)
					if strings.Contains(name, localProbe) {
						t.Fatalf("local-only text reached a remote provider in a name: %q", name)
					}
					if ctx && kc == keyOther && strings.Contains(name, secretProbe) {
						t.Fatalf("a credential in content context reached the output: %q", name)
					}
					walk(child, ctx || kc == keyContent, kc)
				}
			case []any:
				for _, item := range v {
					walk(item, ctx, key)
				}
			case string:
				if strings.Contains(v, localProbe) {
					t.Fatalf("local-only text reached a remote provider: %q", v)
				}
				if ctx && key != keyStructural && strings.Contains(v, secretProbe) {
					t.Fatalf("a credential in content context reached the output: %q", v)
				}
			}
		}
		walk(out, false, keyOther)
		for name, keep := range p.names {
			if keep && !outNames[name] {
				t.Fatalf("member name %q did not come out unchanged:\n in %s\nout %s", name, p.buf, res.Value)
			}
		}
	})
}
