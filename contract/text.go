package contract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsJSSpace reports whether r is whitespace as JavaScript's String.prototype.trim
// and the regular expression class \s define it: TAB, LF, VT, FF, CR, space,
// NBSP, U+FEFF, the line and paragraph separators and every Unicode space
// separator (Zs). Unlike unicode.IsSpace it excludes U+0085 and includes U+FEFF.
func IsJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return r > 0xFF && unicode.Is(unicode.Zs, r)
}

// TrimJS trims s exactly as JavaScript's String.prototype.trim does.
func TrimJS(s string) string { return strings.TrimFunc(s, IsJSSpace) }

// IsBlank reports whether s is empty after TrimJS.
func IsBlank(s string) bool {
	for _, r := range s {
		if !IsJSSpace(r) {
			return false
		}
	}
	return true
}

// UTF16Len returns the length of s in UTF-16 code units, as JavaScript counts
// string length.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// truncateUTF16 cuts s to at most max UTF-16 code units. A character that
// would be split in half (a surrogate pair straddling the limit) is dropped:
// a Go string cannot hold half of one.
func truncateUTF16(s string, max int) string {
	n := 0
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if n+w > max {
			return s[:i]
		}
		n += w
	}
	return s
}

// collapseJSSpace replaces every run of JavaScript whitespace with one space.
func collapseJSSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inSpace := false
	for _, r := range s {
		if IsJSSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		if r == utf8.RuneError {
			b.WriteString("\uFFFD")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
