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
	// Each pair is what toLowerCase returns (Node.js 20, ICU 78).
	cases := map[string]string{
		"abc": "abc", "OpenAI": "openai", "\u0130x": "i\u0307x", "ÉCOLE": "école",
		// Capital sigma is final at the end of a word: after a cased
		// letter, not before one, case-ignorable characters (marks,
		// format characters, modifier letters, '.', ':', '\'') skipped
		// on both sides; a character both cased and case-ignorable
		// (U+02B0) is skipped.
		"\u0391\u03a3": "\u03b1\u03c2", "\u03a3": "\u03c3", "\u0391\u03a3\u0391": "\u03b1\u03c3\u03b1",
		"\u0391\u03a3.": "\u03b1\u03c2.", "\u0391\u03a3.\u0392": "\u03b1\u03c3.\u03b2",
		"\u0391\u0301\u03a3": "\u03b1\u0301\u03c2", " \u0391\u03a3 ": " \u03b1\u03c2 ", "\u0391\u03a31": "\u03b1\u03c21",
		"\u0391\u03a3'\u0392": "\u03b1\u03c3'\u03b2", "\u039f\u0394\u039f\u03a3 \u039f\u0394\u039f\u03a3": "\u03bf\u03b4\u03bf\u03c2 \u03bf\u03b4\u03bf\u03c2",
		"\u02b0\u03a3": "\u02b0\u03c3", "\u0391\u02b0\u03a3": "\u03b1\u02b0\u03c2", "\u0391\u03a3\u02b0": "\u03b1\u03c2\u02b0",
		"\u03a3\u03a3": "\u03c3\u03c2", "\u0391\u03a3\u03a3": "\u03b1\u03c3\u03c2", "1\u03a3": "1\u03c3",
		"\u0391\u03a3\U0001d400": "\u03b1\u03c3\U0001d400", "\U0001d400\u03a3": "\U0001d400\u03c2",
		"\u0130\u03a3": "i\u0307\u03c2", "\u0391\u03a3\u00ad\u0392": "\u03b1\u03c3\u00ad\u03b2", "\u212a\u03a3": "k\u03c2",
		// The Kelvin sign lowers to k; long s, dotless i and sharp s
		// are lower case already (unlike strings.EqualFold, which
		// matches the first two with s and i's upper case, I).
		"\u212a": "k", "\u017f": "\u017f", "\u0131": "\u0131", "\u00df": "\u00df", "\u1e9e": "\u00df",
	}
	for in, want := range cases {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
}

// Away from U+0130 and capital sigma, Lower is Go's strings.ToLower (no
// character above U+1FFFF has a case).
func TestLowerIsGoLowerElsewhere(t *testing.T) {
	for r := rune(0); r <= 0x1ffff; r++ {
		if r == 0x130 || r == 0x3a3 || (r >= 0xd800 && r <= 0xdfff) {
			continue
		}
		s := "A" + string(r) + "b"
		if got, want := Lower(s), strings.ToLower(s); got != want {
			t.Fatalf("Lower(%q) = %q, strings.ToLower gives %q", s, got, want)
		}
	}
}
