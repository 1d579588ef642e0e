package jsonw

import (
	"reflect"
	"strings"
	"testing"
)

// treeTokens flattens a parsed tree the way Flatten flattens a document,
// numbers written as JavaScript writes them.
func treeTokens(t *testing.T, dst []Token, v Value) []Token {
	switch v.Kind {
	case Object:
		dst = append(dst, Token{Kind: Object, N: len(v.Members)})
		for _, m := range v.Members {
			dst = append(dst, Token{Kind: Name, Text: m.Name, Bracket: strings.Contains(m.Name, "[")})
			dst = treeTokens(t, dst, m.Value)
		}
	case Array:
		dst = append(dst, Token{Kind: Array, N: len(v.Items)})
		for _, item := range v.Items {
			dst = treeTokens(t, dst, item)
		}
	case String:
		dst = append(dst, Token{Kind: String, Text: v.Str, Bracket: strings.Contains(v.Str, "[")})
	case Number:
		b, err := AppendNumber(nil, v.Num)
		if err != nil {
			t.Fatal(err)
		}
		dst = append(dst, Token{Kind: Number, Text: string(b)})
	case Bool:
		text := "false"
		if v.Bool {
			text = "true"
		}
		dst = append(dst, Token{Kind: Bool, Text: text})
	case Null:
		dst = append(dst, Token{Kind: Null, Text: "null"})
	}
	return dst
}

// checkFlatten compares Flatten with Parse on doc: the same verdict and
// error, and for a document Flatten calls ordered, the tokens of the
// parsed tree; a Verbatim token's text is its literal's content.
func checkFlatten(t *testing.T, doc string) {
	t.Helper()
	toks, ordered, err := Flatten(nil, doc)
	v, perr := Parse([]byte(doc))
	if (err == nil) != (perr == nil) || err != nil && err.Error() != perr.Error() {
		t.Fatalf("Flatten error %v, Parse error %v, for %q", err, perr, doc)
	}
	if err != nil {
		return
	}
	want := treeTokens(t, nil, v)
	got := make([]Token, len(toks))
	for i, tok := range toks {
		if tok.Verbatim && (tok.Kind != String && tok.Kind != Name || string(AppendString(nil, tok.Text)) != `"`+tok.Text+`"` || strings.Contains(tok.Text, `\`)) {
			t.Fatalf("token %d of %q is verbatim but its text is not its literal: %q", i, doc, tok.Text)
		}
		tok.Verbatim = false
		got[i] = tok
	}
	if ordered && !reflect.DeepEqual(got, want) {
		t.Fatalf("tokens differ from the parsed tree's for %q:\n got %+v\nwant %+v", doc, got, want)
	}
}

func TestFlattenMatchesParse(t *testing.T) {
	for _, doc := range []string{
		`null`, `true`, `false`, `-0`, `0`, `-12`, `123456789012345`, `1234567890123456`, `1.0`, `1e2`, `1E-7`, `0.1`,
		`1e400`, `-1e400`, `"x"`, `"\n"`, `"\/"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud800"`, `"é中😀"`, "\"\u2028\"",
		`[]`, `{}`, ` [1, "a", {"b": null}] `, `{"a":{"b":[{"c":"d"}]},"e":[[],{}]}`,
		`{"b":1,"2":2}`, `{"x":1,"x":2}`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"a":10}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`, `{"01":1,"4294967295":2}`,
		`{"a\"b":"c\\d"}`, `{"a":{"x":1},"b":{"x":2}}`,
		`{"[a":"b[","c":"\u005b","\u005bd":["[ds4:normal]x"]}`,
		`[1,2,]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `"\x"`, "\"a\x01\"", `01`, `1.`, `-`, `"\u12"`, "\"\xff\"", `{"a":1}x`, ``, ` `,
		`[` + strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth) + `]`,
	} {
		checkFlatten(t, doc)
	}
}

func FuzzFlattenMatchesParse(f *testing.F) {
	for _, seed := range []string{`{"a":[1,"b\n",{"c":null}],"d":1e2}`, `{"2":1,"a":2,"a":3}`, `"\ud800"`, `[1,]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) { checkFlatten(t, doc) })
}

// TestFlattenOrderedVerdict checks that Flatten calls a document ordered
// exactly when no object holds an array-index name or a repeated name.
func TestFlattenOrderedVerdict(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":1,"b":{"c":2}}`: true, `{"a":1,"b":{"0":2}}`: false, `{"01":1,"-1":2}`: true, `{"4294967294":1}`: false,
		`{"4294967295":1}`: true, `{"a":{"x":1},"b":{"x":1}}`: true, `{"a":{"x":1,"x":2}}`: false,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"a":11}`:             false,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":{"a":1},"l":12}`: true,
		`[{"a":1},{"a":1}]`: true,
	} {
		if _, got, err := Flatten(nil, doc); err != nil || got != want {
			t.Errorf("Flatten(%s) ordered %t (%v), want %t", doc, got, err, want)
		}
	}
}
