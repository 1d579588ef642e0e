package jsstring

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
)

func TestIsSpaceIsJavaScriptWhitespace(t *testing.T) {
	// ECMAScript WhiteSpace and LineTerminator: TAB, VT, FF, ZWNBSP, every
	// Zs space separator, LF, CR, LS and PS.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r == '\t' || r == '\v' || r == '\f' || r == 0xFEFF || unicode.Is(unicode.Zs, r) ||
			r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
		if IsSpace(r) != want {
			t.Fatalf("IsSpace(%U) = %v", r, !want)
		}
	}
}

func TestTrimAndBlank(t *testing.T) {
	if got := Trim("\ufeff\u00a0\u2028 x \u3000\t"); got != "x" {
		t.Errorf("Trim = %q", got)
	}
	if got := Trim("\u0085x\u0085"); got != "\u0085x\u0085" {
		t.Errorf("Trim must keep U+0085, got %q", got)
	}
	if got := TrimLeft(" \n x "); got != "x " {
		t.Errorf("TrimLeft = %q", got)
	}
	if !IsBlank("\u2029\u205f") || IsBlank("\u200b") || !IsBlank("") {
		t.Error("IsBlank disagrees with JavaScript's trim")
	}
	if got := CollapseSpace(" a \n\t b\u3000"); got != " a b " {
		t.Errorf("CollapseSpace = %q", got)
	}
}

func TestLenAndTruncate(t *testing.T) {
	cases := map[string]int{"": 0, "abc": 3, "é": 1, "😀": 2, "a😀b": 4, "do\xed\xa0\x80ne": 5, "\xff": 1}
	for s, want := range cases {
		if got := Len(s); got != want {
			t.Errorf("Len(%q) = %d, want %d", s, got, want)
		}
	}
	long := strings.Repeat("😀", 130) // 260 units
	if got := Truncate(long, 239); Len(got) != 238 {
		t.Errorf("a pair straddling the limit must be dropped: %d units", Len(got))
	}
	if got := Truncate("abc", 5); got != "abc" {
		t.Errorf("Truncate = %q", got)
	}
}

// units returns s as UTF-16 code units, reading WTF-8 lone surrogates as
// their code unit.
func units(s string) []uint16 {
	var out []uint16
	for i := 0; i < len(s); {
		if surrogateAt(s, i) > 0 {
			out = append(out, uint16(s[i]&0x0F)<<12|uint16(s[i+1]&0x3F)<<6|uint16(s[i+2]&0x3F))
			i += 3
			continue
		}
		r := []rune(s[i:])[0]
		out = utf16.AppendRune(out, r)
		i += len(string(r))
	}
	return out
}

func TestCompareIsUTF16Order(t *testing.T) {
	if Compare("\U0001F600", "\uE000") >= 0 {
		t.Error("U+1F600 must sort before U+E000 in UTF-16 order")
	}
	if Compare("a", "ab") >= 0 || Compare("A", "a") >= 0 || Compare("b", "b") != 0 {
		t.Error("basic order wrong")
	}
	// A lone high surrogate, then U+E000, sorts after the pair D800 DC00.
	if Compare("\xed\xa0\x80\ue000", "\U00010000") <= 0 {
		t.Error("a lone surrogate must compare by its code units")
	}
	pieces := []string{"a", "é", "\uE000", "\uFFFF", "😀", "\U00010000", "\xed\xa0\x80", "\xed\xb0\x80", ""}
	rng := rand.New(rand.NewPCG(3, 4))
	str := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 20000 {
		a, b := str(), str()
		want := slices.Compare(units(a), units(b))
		got := Compare(a, b)
		// Equal code units from different bytes (a surrogate pair written
		// as two WTF-8 halves) still order, by bytes.
		if (got == 0) != (a == b) || want != 0 && (got < 0) != (want < 0) {
			t.Fatalf("Compare(%q, %q) = %d, UTF-16 order %d", a, b, got, want)
		}
	}
}

func TestLowerMatchesJavaScript(t *testing.T) {
	cases := map[string]string{"abc": "abc", "OpenAI": "openai", "\u0130x": "i\u0307x", "ÉCOLE": "école"}
	for in, want := range cases {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
}
