package localkv

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
	"time"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func optionsKey(t *testing.T, system, tool any) Key {
	t.Helper()
	in := baseInput()
	in.SystemOptions, in.ToolOptions = system, tool
	el := DeriveEligibility(in)
	if !el.Eligible {
		t.Fatalf("options %#v, %#v: %s", system, tool, el.Reason)
	}
	return el.Key
}

func TestAbsentAndNullOptionsDiffer(t *testing.T) {
	absent := optionsKey(t, nil, nil)
	null := optionsKey(t, JSONNull{}, nil)
	rawNull := optionsKey(t, json.RawMessage("null"), nil)
	bothNull := optionsKey(t, JSONNull{}, JSONNull{})
	toolNull := optionsKey(t, nil, JSONNull{})
	if null != rawNull {
		t.Errorf("JSONNull and raw null differ: %s vs %s", null.OptionsHash, rawNull.OptionsHash)
	}
	seen := map[string]string{}
	for name, k := range map[string]Key{"absent": absent, "system null": null, "both null": bothNull, "tool null": toolNull} {
		if other, dup := seen[k.OptionsHash]; dup {
			t.Errorf("%s and %s share an options hash", name, other)
		}
		seen[k.OptionsHash] = name
	}
	// The hashed documents, as the contract defines them.
	for _, c := range []struct {
		key  Key
		text string
	}{
		{absent, `{}`},
		{null, `{"systemOptions":null}`},
		{toolNull, `{"toolOptions":null}`},
		{bothNull, `{"systemOptions":null,"toolOptions":null}`},
	} {
		if h := sha256Hex(c.text); c.key.OptionsHash != h {
			t.Errorf("options hash of %s = %s, want %s", c.text, c.key.OptionsHash, h)
		}
	}
	// The absent-options vector's hash is H("{}").
	if absent.OptionsHash != "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Errorf("absent options hash = %s", absent.OptionsHash)
	}
}

func TestEquivalentOptionFormsHashAlike(t *testing.T) {
	want := optionsKey(t, json.RawMessage(`{"temperature":0,"seed":7,"stop":["a","b"],"n":null}`), nil).OptionsHash
	type temp float64
	forms := map[string]any{
		"map[string]any":    map[string]any{"seed": 7, "temperature": 0.0, "stop": []any{"a", "b"}, "n": nil},
		"json.Number":       map[string]any{"seed": json.Number("7"), "temperature": json.Number("-0"), "stop": []string{"a", "b"}, "n": JSONNull{}},
		"typed":             map[string]any{"seed": uint8(7), "temperature": temp(0), "stop": [2]string{"a", "b"}, "n": map[string]int(nil)},
		"raw members":       map[string]json.RawMessage{"seed": json.RawMessage("7.0"), "temperature": json.RawMessage("0e5"), "stop": json.RawMessage(`["a","b"]`), "n": json.RawMessage("null")},
		"duplicate in text": json.RawMessage(`{"seed":1,"temperature":0,"stop":["a","b"],"n":null,"seed":7}`),
	}
	for name, opts := range forms {
		if got := optionsKey(t, opts, nil).OptionsHash; got != want {
			t.Errorf("%s: options hash differs", name)
		}
	}
}

type cyclicMap map[string]any

type withMarshaler int

func (withMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type withTextMarshaler string

func (withTextMarshaler) MarshalText() ([]byte, error) { return []byte("x"), nil }

type plainStruct struct{ A int }

func TestInvalidOptions(t *testing.T) {
	cycleMap := map[string]any{}
	cycleMap["self"] = cycleMap
	cycleSlice := make([]any, 1)
	cycleSlice[0] = cycleSlice
	indirect := map[string]any{}
	indirect["list"] = []any{1, map[string]any{"back": indirect}}
	typedCycle := cyclicMap{}
	typedCycle["self"] = typedCycle
	n := 1
	cases := map[string]any{
		"func":                  func() {},
		"chan":                  make(chan int),
		"[]byte":                []byte("binary"),
		"byte array":            [4]byte{1, 2, 3, 4},
		"named byte slice":      json.RawMessage(nil),
		"NaN":                   math.NaN(),
		"+Inf":                  math.Inf(1),
		"-Inf":                  math.Inf(-1),
		"float32 NaN":           float32(math.NaN()),
		"cycle through map":     cycleMap,
		"cycle through slice":   cycleSlice,
		"indirect cycle":        indirect,
		"typed map cycle":       typedCycle,
		"struct":                plainStruct{A: 1},
		"time.Time":             time.Unix(0, 0),
		"pointer":               &n,
		"nil pointer":           (*int)(nil),
		"big.Int":               big.NewInt(1),
		"complex":               complex(1, 2),
		"uintptr":               uintptr(1),
		"MarshalJSON method":    withMarshaler(1),
		"MarshalText method":    withTextMarshaler("a"),
		"int64 beyond 2^53":     int64(1<<53 + 1),
		"max int64":             int64(math.MaxInt64),
		"max uint64":            uint64(math.MaxUint64),
		"invalid UTF-8 string":  "a\xffb",
		"invalid UTF-8 key":     map[string]any{"a\xff": 1},
		"map with int keys":     map[int]any{1: 1},
		"empty raw":             json.RawMessage{},
		"malformed raw":         json.RawMessage(`{"a":`),
		"raw with two values":   json.RawMessage(`1 2`),
		"raw lone high":         json.RawMessage(`"\ud800"`),
		"raw lone low":          json.RawMessage(`"\udc00x"`),
		"raw high then text":    json.RawMessage(`"\ud800\u0041"`),
		"raw out of range":      json.RawMessage(`1e400`),
		"Number NaN":            json.Number("NaN"),
		"Number hex":            json.Number("0x10"),
		"Number out of range":   json.Number("1e400"),
		"Number empty":          json.Number(""),
		"Number with space":     json.Number(" 1"),
		"Number trailing space": json.Number("1 "),
		"nested func":           map[string]any{"a": []any{1, func() {}}},
		"nested NaN":            []float64{1, math.NaN()},
		"nested bytes":          map[string]any{"b": []byte{1}},
		"nested struct":         []any{plainStruct{}},
	}
	for name, opts := range cases {
		in := baseInput()
		in.SystemOptions = opts
		if el := DeriveEligibility(in); el.Reason != ReasonInvalidOptions {
			t.Errorf("%s as system options: %+v", name, el)
		}
		in = baseInput()
		in.ToolOptions = opts
		if el := DeriveEligibility(in); el.Reason != ReasonInvalidOptions {
			t.Errorf("%s as tool options: %+v", name, el)
		}
		if _, err := StableJSON(opts); !errors.Is(err, ErrNotPlainJSON) {
			t.Errorf("%s: StableJSON error = %v", name, err)
		}
	}
}

func TestValidOptionEdgeCases(t *testing.T) {
	shared := map[string]any{"x": 1}
	deep := any("leaf")
	for range cycleCheckDepth + 100 {
		deep = []any{deep}
	}
	cases := map[string]struct {
		v    any
		text string
	}{
		"shared reference is not a cycle": {[]any{shared, shared}, `[{"x":1},{"x":1}]`},
		"deep but acyclic":                {deep, ""},
		"2^53 exact":                      {int64(1 << 53), `9007199254740992`},
		"2^60 exact":                      {uint64(1 << 60), `1152921504606847000`},
		"min int64 exact":                 {int64(math.MinInt64), `-9223372036854776000`},
		"float32":                         {float32(0.5), `0.5`},
		"negative zero":                   {math.Copysign(0, -1), `0`},
		"json.Number rounds like JSON":    {json.Number("123456789012345678"), `123456789012345680`},
		"raw surrogate pair":              {json.RawMessage(`"\ud83d\ude00"`), "\"\U0001F600\""},
		"raw escaped backslash u":         {json.RawMessage(`"\\ud800"`), `"\\ud800"`},
		"typed nil slice is null":         {[]string(nil), `null`},
		"empty containers":                {map[string]any{"a": []any{}, "o": map[string]any{}}, `{"a":[],"o":{}}`},
		"JS escaping":                     {"<&>\u2028", "\"<&>\u2028\""},
		"UTF-16 key order":                {map[string]int{"\ue000": 1, "\U0001F600": 2}, "{\"\U0001F600\":2,\"\ue000\":1}"},
	}
	for name, c := range cases {
		b, err := StableJSON(c.v)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.text != "" && string(b) != c.text {
			t.Errorf("%s: got %s, want %s", name, b, c.text)
		}
		optionsKey(t, c.v, nil)
	}
}

func TestStableJSONOfNil(t *testing.T) {
	b, err := StableJSON(nil)
	if err != nil || string(b) != "null" {
		t.Fatalf("StableJSON(nil) = %s, %v", b, err)
	}
}
