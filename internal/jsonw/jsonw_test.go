package jsonw

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/internal/vectors"
)

func TestStableVectors(t *testing.T) {
	n := 0
	for _, tc := range vectors.Read(t, "stable.jsonl") {
		var c struct {
			Name   string
			Input  json.RawMessage
			Output struct {
				Text   string `json:"text"`
				SHA256 string `json:"sha256"`
			}
		}
		c.Name, c.Input = tc.Name, tc.Input
		tc.Decode(t, nil, &c.Output)
		v, err := Parse(c.Input)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		got, err := AppendSorted(nil, v)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if string(got) != c.Output.Text {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, got, c.Output.Text)
		}
		sum := sha256.Sum256(got)
		if hex.EncodeToString(sum[:]) != c.Output.SHA256 {
			t.Errorf("%s: sha256 mismatch", c.Name)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no vectors read")
	}
}

func TestAppendNumberMatchesJavaScript(t *testing.T) {
	cases := map[float64]string{
		0: "0", math.Copysign(0, -1): "0", 1: "1", -1.5: "-1.5", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 1e-6: "0.000001", 123456789012345678: "123456789012345680", 5e-324: "5e-324",
		1.7976931348623157e308: "1.7976931348623157e+308", 0.30000000000000004: "0.30000000000000004",
	}
	for f, want := range cases {
		got, err := AppendNumber(nil, f)
		if err != nil || string(got) != want {
			t.Errorf("AppendNumber(%v) = %q, %v; want %q", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendNumber(nil, f); !errors.Is(err, ErrNonFinite) {
			t.Errorf("AppendNumber(%v) error = %v, want ErrNonFinite", f, err)
		}
	}
}

func TestAppendStringMatchesJavaScript(t *testing.T) {
	cases := map[string]string{
		"":                  `""`,
		"<a>&b\u2028\u2029": "\"<a>&b\u2028\u2029\"",
		"\x00\x1f\x7f":      `"\u0000\u001f` + "\x7f\"",
		"\"\\/":             `"\"\\/"`,
		"bad\xffbyte":       "\"bad\ufffdbyte\"",
		"do\xed\xa0\x80ne":  `"do\ud800ne"`,
		"\xed\xbf\xbf\xed":  "\"\\udfff\ufffd\"",
		"\b\f\n\r\t":        `"\b\f\n\r\t"`,
	}
	for in, want := range cases {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestNormalizeMatchesJSONParseStringify(t *testing.T) {
	cases := map[string]string{
		` { "b" : 1.0 , "a":[ true,false,null ] } `:          `{"b":1,"a":[true,false,null]}`,
		`{"x":1,"2":2,"1":1,"01":3,"x":4}`:                   `{"1":1,"2":2,"x":4,"01":3}`,
		`"\u00e9\ud83d\ude00\/"`:                             `"é😀/"`,
		`"\ud800"`:                                           `"\ud800"`,
		`["do\uD800ne","\udc00\ud800","\ud800\ud83d\ude00"]`: `["do\ud800ne","\udc00\ud800","\ud800😀"]`,
		`-0`:                              `0`,
		`{"4294967295":1,"4294967294":2}`: `{"4294967294":2,"4294967295":1}`,
	}
	for in, want := range cases {
		got, err := Normalize(nil, []byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Normalize(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestScannerRejectsMalformedInput(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `1e`, `-`, `"abc`, "\"a\x01\"", `"\x"`, `"\u12"`,
		`tru`, `nul`, `{"a":1}x`, "\"\xff\"", `{a:1}`, `[1 2]`, `+1`, `.5`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
	deep := make([]byte, 0, 2*MaxDepth+10)
	for i := 0; i < MaxDepth+2; i++ {
		deep = append(deep, '[')
	}
	if _, err := Parse(deep); err == nil {
		t.Error("Parse accepted nesting beyond MaxDepth")
	}
}

func TestScannerTypeErrorsNameBothKinds(t *testing.T) {
	_, err := NewScanner([]byte(`12`)).String()
	var te *TypeError
	if !errors.As(err, &te) || te.Expected != String || te.Found != Number {
		t.Fatalf("String() on a number: %v", err)
	}
	if err.Error() != "expected string, found number" {
		t.Fatalf("message = %q", err.Error())
	}
}

func FuzzNormalizeIsIdempotent(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"x"`, `{"1":0,"a":1}`, `1e21`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		once, err := Normalize(nil, in)
		if err != nil {
			return
		}
		twice, err := Normalize(nil, once)
		if err != nil || string(once) != string(twice) {
			t.Fatalf("not idempotent: %s -> %s (%v)", once, twice, err)
		}
		if !json.Valid(once) {
			t.Fatalf("invalid output %s", once)
		}
	})
}

// Raw and Skip reject a number too large for a double, as Number does, so a
// value Raw returns always normalises.
func TestRawRejectsNumbersBeyondADouble(t *testing.T) {
	for _, in := range []string{`1e400`, `[1,-1E999]`, `{"a":{"b":2e308}}`, "1" + strings.Repeat("0", 400)} {
		if _, err := NewScanner([]byte(in)).Raw(); err == nil {
			t.Errorf("Raw accepted %s", in)
		}
		if err := NewScanner([]byte(in)).Skip(); err == nil {
			t.Errorf("Skip accepted %s", in)
		}
	}
	for _, in := range []string{`1e308`, `1e-400`, `-0.5E+2`, "1" + strings.Repeat("0", 300)} {
		raw, err := NewScanner([]byte(in)).Raw()
		if err != nil {
			t.Errorf("Raw rejected %s: %v", in, err)
			continue
		}
		if _, err := Normalize(nil, raw); err != nil {
			t.Errorf("Normalize rejected %s: %v", in, err)
		}
	}
}

func TestHasLoneSurrogateEscape(t *testing.T) {
	for in, want := range map[string]bool{
		`"\ud83d\ude00"`: false, `"\ud800"`: true, `"\udc00"`: true, `"\ud800x"`: true,
		`"\ud800\u0041"`: true, `"\\ud800"`: false, `{"a":"\n"}`: false, `"\ud83d\ude00\udfff"`: true,
	} {
		if got := HasLoneSurrogateEscape([]byte(in)); got != want {
			t.Errorf("HasLoneSurrogateEscape(%s) = %v, want %v", in, got, want)
		}
	}
}

// TestObjectNamesSurviveTheirValues reads member names with escapes followed
// by values with escapes: a name must not change when the value is read.
func TestObjectNamesSurviveTheirValues(t *testing.T) {
	cases := map[string]string{
		`{"a\"bcdefgh":["x\ny"]}`: `a"bcdefgh`,
		`{"note\n[ds4:local-only]P[/ds4:local-only]":{"v":"abcdefghijklmnopqr\n"}}`: "note\n[ds4:local-only]P[/ds4:local-only]",
		`{"k\n2345678901234567890":{"content":"sk-ant-0123456789\n"}}`:              "k\n2345678901234567890",
		`{"x\ty":{"\u0041\u0042\u0043\u0044\u0045\u0046":"\"\"\"\"\"\""}}`:          "x\ty",
	}
	for in, want := range cases {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%s): %v", in, err)
		}
		if len(v.Members) != 1 || v.Members[0].Name != want {
			t.Errorf("Parse(%s) member name = %q, want %q", in, v.Members[0].Name, want)
		}
		var names []string
		s := NewScanner([]byte(in))
		err = s.Object(func(name string) error {
			if err := s.Skip(); err != nil {
				return err
			}
			names = append(names, name)
			return nil
		})
		if err != nil || len(names) != 1 || names[0] != want {
			t.Errorf("Object(%s) names = %q, %v; want [%q]", in, names, err, want)
		}
	}
	// Names that differ only after an escape stay distinct members.
	v, err := Parse([]byte(`{"a\nb":{"c":"\n"},"a\nc":{"c":"\t"}}`))
	if err != nil || len(v.Members) != 2 || v.Members[0].Name != "a\nb" || v.Members[1].Name != "a\nc" {
		t.Errorf("distinct escaped names merged: %+v, %v", v.Members, err)
	}
}

// TestLoneSurrogateRoundTrip reads lone surrogate escapes as WTF-8 and
// writes them back as the same escapes, as JavaScript keeps them.
func TestLoneSurrogateRoundTrip(t *testing.T) {
	v, err := Parse([]byte(`{"do\ud800ne":"\uDC00"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := v.Members[0]; m.Name != "do\xed\xa0\x80ne" || m.Value.Str != "\xed\xb0\x80" {
		t.Fatalf("lone surrogates read as %q: %q", m.Name, m.Value.Str)
	}
	if v.Members[0].Name == "do\ufffdne" {
		t.Fatal("a lone surrogate collides with U+FFFD")
	}
	out, err := AppendValue(nil, v)
	if err != nil || string(out) != `{"do\ud800ne":"\udc00"}` {
		t.Fatalf("AppendValue = %s, %v", out, err)
	}
}
