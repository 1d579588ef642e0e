package privacy

import (
	"strings"
	"unicode/utf8"
)

// isJSSpace reports whether r is whitespace for JavaScript's trim and for
// the \s class of its regular expressions: TAB, LF, VT, FF, CR, space,
// NBSP, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
// U+FEFF. U+0085 is not one of them.
func isJSSpace(r rune) bool {
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

// jsTrim trims as JavaScript's String.prototype.trim does.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// jsTrimLeft trims leading whitespace as JavaScript's trimStart does.
func jsTrimLeft(s string) string { return strings.TrimLeftFunc(s, isJSSpace) }

// jsLower lower-cases s as JavaScript's toLowerCase does for every
// character that matters when names are compared: Go's mapping, except
// that U+0130 (capital I with dot) becomes "i" + U+0307 as in JavaScript.
func jsLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	if !strings.ContainsRune(s, 0x130) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range s {
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return b.String()
}

// isWordByte reports whether c is a word character for JavaScript's \b
// (ASCII letters, digits and underscore).
func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// lowerASCII returns c lower-cased when it is an ASCII capital.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFoldASCII reports whether s[i:] starts with lower, comparing
// ASCII letters case-insensitively and nothing else (JavaScript's i flag
// without u folds no non-ASCII character onto an ASCII one).
func hasPrefixFoldASCII(s string, i int, lower string) bool {
	if len(s)-i < len(lower) {
		return false
	}
	for j := 0; j < len(lower); j++ {
		if lowerASCII(s[i+j]) != lower[j] {
			return false
		}
	}
	return true
}
