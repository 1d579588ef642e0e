package privacy

// The ASCII rules of JavaScript regular expressions without the u flag, as
// the marker and secret patterns use them.

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
