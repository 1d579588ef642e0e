// Package jsstring holds the JavaScript string rules the contract is written
// in: what trim removes, how long a string is and how strings sort (in
// UTF-16 code units), and how names are lower-cased. The TypeScript kit
// applies them natively; the Go kit applies them through this package alone.
package jsstring

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// IsSpace reports whether r is whitespace for String.prototype.trim and for
// the \s class of JavaScript regular expressions: the WhiteSpace and
// LineTerminator code points TAB, LF, VT, FF, CR, space, NBSP, U+1680,
// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF. Unlike
// unicode.IsSpace it excludes U+0085 and includes U+FEFF.
func IsSpace(r rune) bool {
	switch {
	case r == ' ' || (r >= '\t' && r <= '\r'):
		return true
	case r < 0xA0:
		return false
	}
	switch r {
	case 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// SpaceClass is the set IsSpace accepts as a Go regular expression class
// (Go's own \s is ASCII only).
const SpaceClass = `[\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]`

// Trim trims s as String.prototype.trim does.
func Trim(s string) string { return strings.TrimFunc(s, IsSpace) }

// TrimLeft trims leading whitespace as String.prototype.trimStart does.
func TrimLeft(s string) string { return strings.TrimLeftFunc(s, IsSpace) }

// IsBlank reports whether s is empty after Trim.
func IsBlank(s string) bool {
	for _, r := range s {
		if !IsSpace(r) {
			return false
		}
	}
	return true
}

// CollapseSpace replaces every run of whitespace with one space. Bytes that
// are not valid UTF-8 become U+FFFD.
func CollapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inSpace := false
	for _, r := range s {
		if IsSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		b.WriteRune(r)
	}
	return b.String()
}

// Units returns the number of UTF-16 code units of r: 2 above U+FFFF, else 1.
func Units(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// surrogateAt returns the length of the WTF-8 encoding of a lone surrogate
// at s[i:] (3), or 0. The JSON scanner reads a lone surrogate escape so.
func surrogateAt(s string, i int) int {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 3
	}
	return 0
}

// Len returns the length of s in UTF-16 code units, as JavaScript counts
// string length. A lone surrogate held as WTF-8 is one unit; any other byte
// that is not valid UTF-8 counts as U+FFFD.
func Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if w := surrogateAt(s, i); w > 0 {
				size = w
			}
		}
		n += Units(r)
		i += size
	}
	return n
}

// Truncate cuts s to at most max UTF-16 code units. A character that would
// be split in half (a surrogate pair straddling the limit) is dropped: a Go
// string cannot hold half of one.
func Truncate(s string, max int) string {
	n := 0
	for i, r := range s {
		w := Units(r)
		if n+w > max {
			return s[:i]
		}
		n += w
	}
	return s
}

// Compare compares two strings by their UTF-16 code units, the order of
// JavaScript's default sort and of its string comparison operators. It
// differs from byte order only for characters above U+FFFF against
// U+E000–U+FFFF, and for lone surrogates held as WTF-8.
func Compare(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	if a[i] < 0x80 && b[i] < 0x80 {
		return int(a[i]) - int(b[i])
	}
	// Compare code units from the start of the character that differs
	// (it starts at the same offset in both: the strings agree up to i).
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ia, ib := i, i
	var pa, pb rune // pending low surrogates
	for {
		ua, oka := nextUnit(a, &ia, &pa)
		ub, okb := nextUnit(b, &ib, &pb)
		switch {
		case !oka && !okb:
			// The same code units from different bytes (invalid UTF-8
			// read as U+FFFD): order by bytes, to be total.
			return strings.Compare(a, b)
		case !oka:
			return -1
		case !okb:
			return 1
		case ua != ub:
			return int(ua) - int(ub)
		}
	}
}

// nextUnit returns the UTF-16 code unit at *i (or the pending low
// surrogate *low) and advances past it. A lone surrogate held as WTF-8 is
// its own unit; another invalid byte is U+FFFD.
func nextUnit(s string, i *int, low *rune) (rune, bool) {
	if *low != 0 {
		u := *low
		*low = 0
		return u, true
	}
	if *i >= len(s) {
		return 0, false
	}
	r, size := utf8.DecodeRuneInString(s[*i:])
	if r == utf8.RuneError && size == 1 && surrogateAt(s, *i) > 0 {
		r = rune(s[*i]&0x0F)<<12 | rune(s[*i+1]&0x3F)<<6 | rune(s[*i+2]&0x3F)
		size = 3
	}
	*i += size
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		*low = lo
		return hi, true
	}
	return r, true
}

// Lower lower-cases s as toLowerCase does: Go's mapping (Unicode's simple
// lower-case mapping), except where JavaScript applies the full mapping of
// SpecialCasing.txt without a language: U+0130 (capital I with dot)
// becomes "i" + U+0307, and U+03A3 (capital sigma) becomes final sigma
// U+03C2 at the end of a word (the Final_Sigma condition). Every other
// character maps the same way in both. Go's tables are of Unicode 15.0: a
// character a later version added may lower-case in JavaScript and not
// here.
func Lower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	if !strings.ContainsRune(s, 0x130) && !strings.ContainsRune(s, capitalSigma) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 1)
	for i, r := range s {
		switch {
		case r == 0x130:
			b.WriteString("i\u0307")
		case r == capitalSigma && finalSigma(s, i):
			b.WriteRune(finalSmallSigma)
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

const (
	capitalSigma    = 0x3A3
	finalSmallSigma = 0x3C2
)

// finalSigma reports whether the capital sigma at s[i] ends a word, by
// Unicode's Final_Sigma condition: it follows a cased letter (with only
// case-ignorable characters between them) and no cased letter follows it
// (again skipping case-ignorable characters). A character that is both
// cased and case-ignorable is skipped, as ICU, which JavaScript engines
// use, does.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + utf8.RuneLen(capitalSigma); j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

// cased reports Unicode's Cased property: Lowercase, Uppercase or
// titlecase letters.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable reports Unicode's Case_Ignorable property: nonspacing and
// enclosing marks, format characters, modifier letters and symbols, and
// the Word_Break classes MidLetter, MidNumLet and Single_Quote (listed
// here, as Go has no Word_Break table).
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
