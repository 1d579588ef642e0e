package conformance

import "strings"

// article returns phrase after the indefinite article its sound takes:
// "an invalid-request", "an NBSP U+00A0", "a BOM U+FEFF". An initialism
// (its first two letters upper case) is read letter by letter.
func article(phrase string) string {
	if phrase == "" {
		return "a"
	}
	first := phrase[0]
	vowel := strings.IndexByte("aeiouAEIOU", first) >= 0
	if len(phrase) > 1 && 'A' <= first && first <= 'Z' && 'A' <= phrase[1] && phrase[1] <= 'Z' {
		vowel = strings.IndexByte("AEFHILMNORSX", first) >= 0
	}
	if vowel {
		return "an " + phrase
	}
	return "a " + phrase
}
