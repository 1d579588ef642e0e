package conformance

import "testing"

func TestArticle(t *testing.T) {
	for phrase, want := range map[string]string{
		"invalid-request":       "an invalid-request",
		"adapter-closed":        "an adapter-closed",
		"transport-failed":      "a transport-failed",
		"empty":                 "an empty",
		"ASCII whitespace":      "an ASCII whitespace",
		"NBSP U+00A0":           "an NBSP U+00A0",
		"BOM U+FEFF":            "a BOM U+FEFF",
		"ideographic space":     "an ideographic space",
		"line separator U+2028": "a line separator U+2028",
		"number":                "a number",
	} {
		if got := article(phrase); got != want {
			t.Errorf("article(%q) = %q, want %q", phrase, got, want)
		}
	}
}
