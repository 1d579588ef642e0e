package privacy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The left-to-right search for secret names that redactAssignments
// replaced: the two must always agree.

// redactAssignmentsForward replaces the values of secret assignments: a
// word-bounded secret name, optional whitespace, ':' or '=', optional
// whitespace, an optional quote, 4 or more value characters and the same
// quote. The name, separator and quotes are kept. Go's regexp has no
// back-reference for "the same quote", so the scan is written out; since a
// value never contains a quote, an opening quote that is not closed right
// after the value means there is no match at that position.
func redactAssignmentsForward(s string, n *int) string {
	if strings.IndexByte(s, ':') < 0 && strings.IndexByte(s, '=') < 0 {
		return s // no separator, so no assignment
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'a', 'A', 'c', 'C', 'p', 'P':
		default:
			continue
		}
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		kl := assignmentKeyAt(s, i)
		if kl == 0 {
			continue
		}
		j := skipJSSpace(s, i+kl)
		if j >= len(s) || (s[j] != ':' && s[j] != '=') {
			continue
		}
		j = skipJSSpace(s, j+1)
		var quote byte
		if j < len(s) && (s[j] == '"' || s[j] == '\'') {
			quote = s[j]
			j++
		}
		end, units := secretValueEnd(s, j)
		if units < 4 {
			continue
		}
		after := end
		if quote != 0 {
			if end >= len(s) || s[end] != quote {
				continue
			}
			after++
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:j])
		b.WriteString(redactedSecret)
		if quote != 0 {
			b.WriteByte(quote)
		}
		last = after
		i = after - 1
		*n++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// assignmentKeyAt returns the length of a secret name starting at s[i], or 0.
func assignmentKeyAt(s string, i int) int {
	for _, k := range assignmentKeys {
		if !hasPrefixFoldASCII(s, i, k[0]) {
			continue
		}
		j := i + len(k[0])
		if k[1] == "" {
			return j - i
		}
		if j < len(s) && (s[j] == '_' || s[j] == '-') && hasPrefixFoldASCII(s, j+1, k[1]) {
			return j + 1 + len(k[1]) - i
		}
		if hasPrefixFoldASCII(s, j, k[1]) {
			return j + len(k[1]) - i
		}
	}
	return 0
}

func TestRedactAssignmentsMatchesForwardSearch(t *testing.T) {
	pieces := []string{"api", "_", "-", "key", "KEY", "access", "token", "auth", "client", "secret", "Password",
		"password", ":", "=", " ", "\n", "\u00a0", "\"", "'", "abcd", "ab", "x", "é", ",", "}", "\U0001F600"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		var n1, n2 int
		got, _ := redactAssignments(s, &n1, nil)
		want := redactAssignmentsForward(s, &n2)
		if got != want || n1 != n2 {
			t.Fatalf("redactAssignments(%q) = %q (%d), forward search %q (%d)", s, got, n1, want, n2)
		}
	}
}
