package privacy

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/internal/vectors"
)

type payloadWant struct {
	value    string
	class    Classification
	changed  bool
	blocked  int
	redacted int
}

func checkPayload(t *testing.T, e *Engine, provider string, payload any, want payloadWant) Result {
	t.Helper()
	got, err := e.SanitizePayload(provider, payload)
	if err != nil {
		t.Fatalf("SanitizePayload: %v", err)
	}
	if string(got.Value) != want.value {
		t.Errorf("value:\n got %s\nwant %s", got.Value, want.value)
	}
	if want.class == "" {
		want.class = Normal
	}
	if got.Classification != want.class {
		t.Errorf("classification = %q, want %q", got.Classification, want.class)
	}
	if got.Changed != want.changed {
		t.Errorf("changed = %v, want %v", got.Changed, want.changed)
	}
	if got.BlockedBlocks != want.blocked {
		t.Errorf("blocked = %d, want %d", got.BlockedBlocks, want.blocked)
	}
	if got.SecretRedactions != want.redacted {
		t.Errorf("redactions = %d, want %d", got.SecretRedactions, want.redacted)
	}
	return got
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestFloors(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	ps := `"` + phSensitive + `"`
	cases := []struct {
		name string
		in   string
		want payloadWant
	}{
		{"mismatched close", `{"messages":[{"content":"[ds4:internal]a[/ds4:sensitive]"},{"content":"b"}]}`,
			payloadWant{`{"messages":[{"content":` + ps + `},{"content":` + ps + `}]}`, Sensitive, true, 2, 0}},
		{"stray close", `{"messages":[{"content":"a[/ds4:sensitive]"},{"content":"b"}]}`,
			payloadWant{`{"messages":[{"content":` + ps + `},{"content":` + ps + `}]}`, Sensitive, true, 2, 0}},
		{"split allowed pair", `{"messages":[{"content":"[ds4:internal]a"},{"content":"b[/ds4:internal]"}]}`,
			payloadWant{`{"messages":[{"content":"a"},{"content":"b[/ds4:internal]"}]}`, Internal, true, 0, 0}},
		{"unclosed does not touch non-content strings", `{"options":{"x":"plain"},"messages":[{"content":"[ds4:local-only]"}]}`,
			payloadWant{`{"options":{"x":"plain"},"messages":[{"content":"` + phLocal + `"}]}`, LocalOnly, true, 1, 0}},
		{"floor from a non-content string", `{"options":{"x":"[ds4:sensitive]"},"messages":[{"content":"hi"}]}`,
			payloadWant{`{"options":{"x":` + ps + `},"messages":[{"content":` + ps + `}]}`, Sensitive, true, 2, 0}},
		// Go kit only (SPEC §8): a member name's unclosed or leading
		// marker raises the floor anywhere, outside content context too.
		{"a key outside content context raises the floor", `{"options":{"[ds4:sensitive]k":"v"},"messages":[{"content":"hi"}]}`,
			payloadWant{`{"options":{` + ps + `:"v"},"messages":[{"content":` + ps + `}]}`, Sensitive, true, 2, 0}},
		// In document order the internal marker would be left open at the
		// end (floor internal); in JavaScript property order "0" comes first
		// and the sensitive pair opens inside it (nesting, floor sensitive).
		{"walk order is JavaScript property order", `{"options":{"b":"[ds4:sensitive]y[/ds4:sensitive]","0":"[ds4:internal]x"},"messages":[{"content":"z"}]}`,
			payloadWant{`{"options":{"0":` + ps + `,"b":` + ps + `},"messages":[{"content":` + ps + `}]}`, Sensitive, true, 3, 0}},
		{"leading marker with nothing after it", `{"content":"[ds4:internal]"}`,
			payloadWant{`{"content":""}`, Internal, true, 0, 0}},
		{"well formed pairs set no floor", `{"messages":[{"content":"[ds4:internal]a[/ds4:internal]"},{"content":"b"}]}`,
			payloadWant{`{"messages":[{"content":"a"},{"content":"b"}]}`, Internal, true, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkPayload(t, e, "remote", raw(c.in), c.want) })
	}
}

func TestKeys(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	cases := []struct {
		name string
		in   string
		want payloadWant
	}{
		{"collision suffix re-appended", `{"metadata":{"[ds4:normal]a[/ds4:normal]":1,"a":2,"a_1":3}}`,
			payloadWant{`{"metadata":{"a":1,"a_1":2,"a_1_2":3}}`, Normal, true, 0, 0}},
		{"structural key collides", `{"metadata":{"[ds4:normal]id[/ds4:normal]":1,"id":2}}`,
			payloadWant{`{"metadata":{"id":1,"id_1":2}}`, Normal, true, 0, 0}},
		{"index-like result moves first", `{"metadata":{"x":1,"[ds4:normal]0[/ds4:normal]":2}}`,
			payloadWant{`{"metadata":{"0":2,"x":1}}`, Normal, true, 0, 0}},
		{"marker key outside content", `{"options":{"[ds4:internal]k[/ds4:internal]":1,"sk-abcdefgh12":2}}`,
			payloadWant{`{"options":{"k":1,"sk-abcdefgh12":2}}`, Internal, true, 0, 0}},
		{"content and structural keys are kept", `{"metadata":{"Content":"sk-abcdefgh12","TYPE":"sk-abcdefgh12"}}`,
			payloadWant{`{"metadata":{"Content":"` + redactedCredential + `","TYPE":"sk-abcdefgh12"}}`, Normal, true, 0, 1}},
		{"toString stays", `{"metadata":{"toString":1,"constructor":2}}`,
			payloadWant{`{"metadata":{"toString":1,"constructor":2}}`, Normal, false, 0, 0}},
		{"array items inherit their key", `{"messages":[{"type":["sk-abcdefgh12"],"parts":["sk-abcdefgh12"]}]}`,
			payloadWant{`{"messages":[{"type":["sk-abcdefgh12"],"parts":["` + redactedCredential + `"]}]}`, Normal, true, 0, 1}},
		{"kelvin sign folds like JavaScript", `{"thin\u212aing":"sk-abcdefgh12"}`,
			payloadWant{`{"thinKing":"` + redactedCredential + `"}`, Normal, true, 0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			want := c.want
			if strings.Contains(in, `\u212a`) {
				want.value = strings.Replace(want.value, "thinKing", "thin\u212aing", 1)
			}
			checkPayload(t, e, "remote", raw(in), want)
		})
	}
}

func TestBinary(t *testing.T) {
	sensitive := DefaultConfig()
	sensitive.DefaultClassification = Sensitive
	es := mustEngine(t, sensitive)
	en := mustEngine(t, DefaultConfig())
	msg := func(v any) map[string]any { return map[string]any{"messages": []any{map[string]any{"content": v}}} }

	checkPayload(t, es, "remote", msg([]byte("hi")),
		payloadWant{`{"messages":[{"content":""}]}`, Sensitive, true, 1, 0})
	checkPayload(t, en, "remote", msg([]byte("hi")),
		payloadWant{`{"messages":[{"content":"aGk="}]}`, Normal, false, 0, 0})
	checkPayload(t, es, "ollama", msg([]byte("hi")),
		payloadWant{`{"messages":[{"content":"aGk="}]}`, Sensitive, false, 0, 0})
	checkPayload(t, es, "remote", map[string]any{"options": []byte("hi")},
		payloadWant{`{"options":"aGk="}`, Sensitive, false, 0, 0})
	// A payload that is itself a byte slice is a JSON document.
	top := []byte(`{"content":"sk-abcdefgh12"}`)
	checkPayload(t, en, "remote", top, payloadWant{`{"content":"` + redactedCredential + `"}`, Normal, true, 0, 1})
	checkPayload(t, en, "remote", &top, payloadWant{`{"content":"` + redactedCredential + `"}`, Normal, true, 0, 1})
	type Body []byte
	checkPayload(t, en, "remote", Body(top), payloadWant{`{"content":"` + redactedCredential + `"}`, Normal, true, 0, 1})
	if _, err := en.SanitizePayload("remote", []byte("\x00binary")); !errors.Is(err, ErrUninspectable) {
		t.Errorf("non-JSON top-level bytes: err = %v", err)
	}
	// A marker-like base64 text is binary, never text.
	checkPayload(t, en, "remote", msg([]byte("[ds4:local-only]")),
		payloadWant{`{"messages":[{"content":"W2RzNDpsb2NhbC1vbmx5XQ=="}]}`, Normal, false, 0, 0})
	// A json.RawMessage inside a Go payload is JSON, not binary data.
	checkPayload(t, es, "remote", msg(raw(`"[ds4:local-only]x[/ds4:local-only]"`)),
		payloadWant{`{"messages":[{"content":"` + phLocal + `"}]}`, LocalOnly, true, 1, 0})
	// Arrays of bytes are arrays of numbers, as encoding/json writes them.
	checkPayload(t, es, "remote", map[string]any{"content": [2]byte{1, 2}},
		payloadWant{`{"content":[1,2]}`, Sensitive, false, 0, 0})
	type Named []byte
	checkPayload(t, es, "remote", map[string]any{"content": Named("x")},
		payloadWant{`{"content":""}`, Sensitive, true, 1, 0})
	var nilBytes []byte
	checkPayload(t, es, "remote", map[string]any{"content": nilBytes},
		payloadWant{`{"content":null}`, Sensitive, false, 0, 0})
}

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) {
	return nil, errors.New("cannot marshal TOPSECRET-VALUE")
}

type panickingMarshaler struct{}

func (panickingMarshaler) MarshalJSON() ([]byte, error) { panic("TOPSECRET-VALUE") }

type invalidMarshaler struct{}

func (invalidMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"TOPSECRET-VALUE"`), nil }

type failingText struct{}

func (failingText) MarshalText() ([]byte, error) { return nil, errors.New("TOPSECRET-VALUE") }

type node struct {
	Text string `json:"text"`
	Next *node  `json:"next"`
}

func TestFailClosed(t *testing.T) {
	cyclic := &node{Text: "TOPSECRET-VALUE"}
	cyclic.Next = cyclic
	cyclicMap := map[string]any{"text": "TOPSECRET-VALUE"}
	cyclicMap["self"] = cyclicMap
	cyclicSlice := []any{"TOPSECRET-VALUE", nil}
	cyclicSlice[1] = cyclicSlice
	cases := map[string]any{
		"erroring marshaler":     map[string]any{"content": failingMarshaler{}},
		"panicking marshaler":    map[string]any{"content": panickingMarshaler{}},
		"invalid marshaler JSON": map[string]any{"content": invalidMarshaler{}},
		"erroring text marshal":  map[string]any{"content": failingText{}},
		"func":                   map[string]any{"content": "TOPSECRET-VALUE", "f": func() {}},
		"chan":                   map[string]any{"content": make(chan int)},
		"complex":                map[string]any{"content": complex(1, 2)},
		"NaN":                    map[string]any{"content": math.NaN()},
		"+Inf":                   struct{ X float64 }{math.Inf(1)},
		"-Inf float32":           []any{float32(math.Inf(-1))},
		"cycle via pointer":      cyclic,
		"cycle via map":          cyclicMap,
		"cycle via slice":        cyclicSlice,
		"unsupported map key":    map[[2]int]string{{1, 2}: "TOPSECRET-VALUE"},
		"invalid raw JSON":       raw(`{"content":"TOPSECRET-VALUE"`),
		"invalid UTF-8":          raw("{\"content\":\"TOPSECRET-VALUE\xff\"}"),
		"empty raw JSON":         raw(``),
		"bad json.Number":        map[string]any{"n": json.Number("TOPSECRET-VALUE")},
	}
	disabled := DefaultConfig()
	disabled.Enabled = false
	for _, cfg := range []Config{DefaultConfig(), disabled} {
		e := mustEngine(t, cfg)
		for name, payload := range cases {
			t.Run(name, func(t *testing.T) {
				res, err := e.SanitizePayload("remote", payload)
				if !errors.Is(err, ErrUninspectable) {
					t.Fatalf("err = %v, want ErrUninspectable", err)
				}
				if res.Value != nil {
					t.Fatalf("a value came back with the error")
				}
				if strings.Contains(err.Error(), "TOPSECRET") {
					t.Fatalf("error message leaks payload text: %v", err)
				}
			})
		}
	}
}

func TestSharedPointersAreNotCycles(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	shared := &node{Text: "sk-abcdefgh12"}
	list := []*node{shared, shared}
	checkPayload(t, e, "remote", map[string]any{"messages": list},
		payloadWant{`{"messages":[{"text":"` + redactedCredential + `","next":null},{"text":"` + redactedCredential + `","next":null}]}`, Normal, true, 0, 2})
}

func TestConfigValidation(t *testing.T) {
	if _, err := New(DefaultConfig()); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := map[string]func(*Config){
		"zero config":             func(c *Config) { *c = Config{} },
		"unknown default":         func(c *Config) { c.DefaultClassification = "secret" },
		"upper-case default":      func(c *Config) { c.DefaultClassification = "Normal" },
		"unknown remote default":  func(c *Config) { c.RemoteDefaultAllowed = []Classification{Normal, "public"} },
		"unknown remote provider": func(c *Config) { c.RemoteProviders = map[string][]Classification{"x": {"top"}} },
		"duplicate provider": func(c *Config) {
			c.RemoteProviders = map[string][]Classification{"Trusted": {Normal}, "\u00a0trusted ": {Internal}}
		},
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			mutate(&cfg)
			if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RemoteProviders = map[string][]Classification{" Trusted": {Sensitive, Normal}}
	e := mustEngine(t, cfg)
	for _, p := range []string{"", "  ", "\u00a0\ufeff\u3000"} {
		if _, err := e.Policy(p); !errors.Is(err, ErrBlankProvider) {
			t.Errorf("Policy(%q) err = %v, want ErrBlankProvider", p, err)
		}
		if _, err := e.SanitizePayload(p, raw(`{}`)); !errors.Is(err, ErrBlankProvider) {
			t.Errorf("SanitizePayload(%q) err = %v, want ErrBlankProvider", p, err)
		}
	}
	// U+0085 is not whitespace for JavaScript's trim.
	if p, err := e.Policy("\u0085"); err != nil || p.Destination != Remote {
		t.Errorf("Policy(U+0085) = %+v, %v", p, err)
	}
	p, err := e.Policy("\ufeffOLLAMA\t")
	if err != nil || p.Destination != Local || len(p.Allowed) != 4 || p.Provider != "ollama" {
		t.Errorf("local policy = %+v, %v", p, err)
	}
	p, _ = e.Policy("TRUSTED")
	if p.Destination != Remote || !p.Allows(Sensitive) || p.Allows(Internal) || p.Allows(LocalOnly) {
		t.Errorf("override policy = %+v", p)
	}
	if got := p.Allowed; len(got) != 2 || got[0] != Normal || got[1] != Sensitive {
		t.Errorf("allowed = %v, want lowest first", got)
	}
	p, _ = e.Policy("other")
	if !p.Allows(Normal) || !p.Allows(Internal) || p.Allows(Sensitive) {
		t.Errorf("default policy = %+v", p)
	}
}

func TestDisabled(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Enabled = false
	cfg.DefaultClassification = Sensitive
	e := mustEngine(t, cfg)
	got := checkPayload(t, e, " ollama", map[string]any{"b": "[ds4:local-only]x", "10": []byte("x"), "2": "sk-abcdefgh12"},
		payloadWant{`{"2":"sk-abcdefgh12","10":"eA==","b":"[ds4:local-only]x"}`, Sensitive, false, 0, 0})
	if got.Destination != Local {
		t.Errorf("destination = %q", got.Destination)
	}
	tr, err := e.SanitizeText("remote", "[ds4:local-only]x")
	if err != nil || tr.Text != "[ds4:local-only]x" || tr.Changed || tr.Classification != Sensitive || tr.Destination != Remote {
		t.Errorf("SanitizeText = %+v, %v", tr, err)
	}
}

func TestLocalProvider(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	got := checkPayload(t, e, "llama-cpp", raw(`{"system":"password=abcd [ds4:sensitive]s[/ds4:sensitive]","metadata":{"[ds4:local-only]k[/ds4:local-only]":1}}`),
		payloadWant{`{"system":"password=abcd s","metadata":{"k":1}}`, LocalOnly, true, 0, 0})
	if got.Destination != Local {
		t.Errorf("destination = %q", got.Destination)
	}
}

type Inner struct {
	Note string `json:"note"`
	Deep string
}

type Payload struct {
	Inner
	Model    string         `json:"model"`
	Messages []Message      `json:"messages"`
	Count    int64          `json:"count,string"`
	Skip     string         `json:"-"`
	Empty    string         `json:"empty,omitempty"`
	Zero     Inner          `json:"zero,omitzero"`
	Big      uint64         `json:"big"`
	Ratio    float32        `json:"ratio"`
	Extra    map[int]string `json:"extra"`
	hidden   string
}

type Message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

func TestGoValuesEncodeLikeEncodingJSON(t *testing.T) {
	p := Payload{
		Inner:    Inner{Note: "n", Deep: "d"},
		Model:    "m",
		Messages: []Message{{Role: "user", Content: []any{"hi", 1.5, true, nil, map[string]any{"text": "x"}}}},
		Count:    42,
		Skip:     "s",
		Big:      math.MaxUint64,
		Ratio:    0.1,
		Extra:    map[int]string{10: "a", 2: "b"},
		hidden:   "h",
	}
	cfg := DefaultConfig()
	cfg.Enabled = false
	res, err := mustEngine(t, cfg).SanitizePayload("remote", p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(p)
	if !vectors.SameJSON(t, res.Value, want) {
		t.Errorf("got  %s\nwant %s", res.Value, want)
	}
	if !strings.Contains(string(res.Value), `"big":18446744073709551615`) || !strings.Contains(string(res.Value), `"ratio":0.1`) {
		t.Errorf("Go numbers lost their literal: %s", res.Value)
	}
	if !strings.Contains(string(res.Value), `"extra":{"2":"b","10":"a"}`) {
		t.Errorf("index-like names are not in JavaScript order: %s", res.Value)
	}
}

// TestConcurrentUse sanitises payloads of several shapes from several
// goroutines at once, each result kept until all are done: the engine
// reuses working space between calls, and no result may share it.
func TestConcurrentUse(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	payloads := []any{
		raw(`{"messages":[{"role":"user","content":"[ds4:local-only]x[/ds4:local-only] sk-abcdefgh12"}],"metadata":{"sk-abcdefgh12":1,"sk-abcdefgh34":2}}`),
		raw(`{"metadata":{"[ds4:normal]a\u0062[/ds4:normal]":"-----BEGIN PRIVATE KEY-----k-----END PRIVATE KEY----- Bearer abcdefghij","2":"x","0":"y"}}`),
		raw(`{"b":1,"a":2,"b":3,"prompt":"password: hunter22 and ghp_abcdefghijkl1234"}`),
		map[string]any{"messages": []any{map[string]any{"role": "user", "content": "[ds4:internal]i[/ds4:internal] AKIA0123456789ABCDEF"}}},
	}
	want := make([]Result, len(payloads))
	for i, p := range payloads {
		var err error
		if want[i], err = e.SanitizePayload("remote", p); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]Result, 8)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for i := range 60 {
				r, err := e.SanitizePayload("remote", payloads[(g+i)%len(payloads)])
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], r)
			}
		})
	}
	wg.Wait()
	for g, rs := range got {
		for i, r := range rs {
			if w := want[(g+i)%len(payloads)]; string(r.Value) != string(w.Value) || r.SecretRedactions != w.SecretRedactions {
				t.Fatalf("goroutine %d, call %d: %s\nwant %s", g, i, r.Value, w.Value)
			}
		}
	}
}

func TestZeroEngineFailsClosed(t *testing.T) {
	var e Engine
	if _, err := e.SanitizePayload("remote", raw(`"x"`)); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("zero engine: err = %v", err)
	}
	var nilEngine *Engine
	if _, err := nilEngine.Policy("remote"); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("nil engine: err = %v", err)
	}
}
