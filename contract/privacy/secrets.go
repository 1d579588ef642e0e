package privacy

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// The replacement texts of secret redaction.
const (
	redactedPrivateKey = "[DS4 REDACTED PRIVATE KEY]"
	redactedCredential = "[DS4 REDACTED CREDENTIAL]"
	redactedToken      = "[DS4 REDACTED TOKEN]"
	redactedSecret     = "[DS4 REDACTED SECRET]"
)

// These patterns need neither look-behind nor back-references, so Go's
// regexp, which picks the match a backtracking engine would pick, finds
// exactly what JavaScript finds; \b is ASCII in both, as JavaScript's is
// without the u flag. Case-insensitive parts are spelt out as
// ASCII classes: Go's (?i) would also fold U+017F and U+212A onto s and k,
// which JavaScript does not.
var (
	pemPattern    = regexp.MustCompile(`-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----(?s:.*?)-----END (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----`)
	bearerPattern = regexp.MustCompile(`\b([Bb][Ee][Aa][Rr][Ee][Rr]` + jsstring.SpaceClass + `+)[A-Za-z0-9._~+/=-]{8,}`)
)

// redactSecrets replaces secrets in s, pattern after pattern over the
// already-redacted text, and returns the text and the number of
// replacements.
func redactSecrets(s string) (string, int) {
	n := 0
	if strings.Contains(s, "-----BEGIN ") {
		s = replaceAll(pemPattern, s, redactedPrivateKey, false, &n)
	}
	s = redactCredentials(s, &n)
	if containsFoldASCII(s, "bearer") {
		s = replaceAll(bearerPattern, s, redactedToken, true, &n)
	}
	s = redactAssignments(s, &n)
	return s, n
}

// replaceAll replaces every match of re with repl, keeping the first
// submatch in front of it when keepPrefix is set, and counts replacements.
func replaceAll(re *regexp.Regexp, s, repl string, keepPrefix bool, n *int) string {
	locs := re.FindAllStringSubmatchIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, loc := range locs {
		b.WriteString(s[last:loc[0]])
		if keepPrefix {
			b.WriteString(s[loc[2]:loc[3]])
		}
		b.WriteString(repl)
		last = loc[1]
		*n++
	}
	b.WriteString(s[last:])
	return b.String()
}

// containsFoldASCII reports whether s contains lower, ASCII
// case-insensitively.
func containsFoldASCII(s, lower string) bool {
	for _, first := range [2]byte{lower[0], lower[0] - 'a' + 'A'} {
		for i := 0; ; i++ {
			k := strings.IndexByte(s[i:], first)
			if k < 0 {
				break
			}
			i += k
			if hasPrefixFoldASCII(s, i, lower) {
				return true
			}
		}
	}
	return false
}

// assignmentKeys are the secret names of key=value assignments, matched
// ASCII case-insensitively; '_' or '-' may separate their two words.
var assignmentKeys = [...][2]string{
	{"api", "key"}, {"access", "token"}, {"auth", "token"}, {"client", "secret"}, {"password", ""},
}

// skipJSSpace returns the offset of the first non-whitespace rune at or
// after i.
func skipJSSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !jsstring.IsSpace(r) {
			return i
		}
		i += size
	}
	return i
}

// secretValueEnd scans a secret value from i: characters that are neither
// whitespace nor one of , " ' ; } ]. It returns the end offset and the
// length in UTF-16 code units, as JavaScript counts "4 or more".
func secretValueEnd(s string, i int) (int, int) {
	units := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case ',', '"', '\'', ';', '}', ']':
				return i, units
			}
			if jsstring.IsSpace(rune(c)) {
				return i, units
			}
			i++
			units++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if jsstring.IsSpace(r) {
			return i, units
		}
		units += jsstring.Units(r)
		i += size
	}
	return i, units
}

// redactAssignments replaces the values of secret assignments: a
// word-bounded secret name, optional whitespace, ':' or '=', optional
// whitespace, an optional quote, 4 or more value characters and the same
// quote. The name, separator and quotes are kept. Go's regexp has no
// back-reference for "the same quote", so the scan is written out; since a
// value never contains a quote, an opening quote that is not closed right
// after the value means there is no match at that position.
//
// The scan goes from separator to separator, looking back for the name:
// exactly one name can end before a given separator, and no name starts
// inside another at a word boundary, so this finds the matches a
// left-to-right search for names finds, in the same order.
func redactAssignments(s string, n *int) string {
	var b strings.Builder
	last := 0
	colon, equals := strings.IndexByte(s, ':'), strings.IndexByte(s, '=')
	for {
		// The next separator at or after last.
		if colon >= 0 && colon < last {
			colon = nextByte(s, last, ':')
		}
		if equals >= 0 && equals < last {
			equals = nextByte(s, last, '=')
		}
		sep := colon
		if sep < 0 || (equals >= 0 && equals < sep) {
			sep = equals
		}
		if sep < 0 {
			break
		}
		// Consume this separator whatever happens.
		if sep == colon {
			colon = nextByte(s, sep+1, ':')
		} else {
			equals = nextByte(s, sep+1, '=')
		}
		e := sep
		for e > last {
			r, size := utf8.DecodeLastRuneInString(s[:e])
			if !jsstring.IsSpace(r) {
				break
			}
			e -= size
		}
		i := assignmentKeyBefore(s, e)
		if i < last || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		j := skipJSSpace(s, sep+1)
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
		*n++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// nextByte returns the offset of the first c in s at or after from, or -1.
func nextByte(s string, from int, c byte) int {
	if from >= len(s) {
		return -1
	}
	k := strings.IndexByte(s[from:], c)
	if k < 0 {
		return -1
	}
	return from + k
}

// assignmentKeyBefore returns the start of the secret name that ends at
// s[e], or -1.
func assignmentKeyBefore(s string, e int) int {
	for _, k := range assignmentKeys {
		if k[1] == "" {
			if i := e - len(k[0]); i >= 0 && hasPrefixFoldASCII(s, i, k[0]) {
				return i
			}
			continue
		}
		j := e - len(k[1])
		if j < 0 || !hasPrefixFoldASCII(s, j, k[1]) {
			continue
		}
		if i := j - len(k[0]); i >= 0 && hasPrefixFoldASCII(s, i, k[0]) {
			return i
		}
		if i := j - 1 - len(k[0]); i >= 0 && (s[j-1] == '_' || s[j-1] == '-') && hasPrefixFoldASCII(s, i, k[0]) {
			return i
		}
	}
	return -1
}

// credentialEnd returns the end of a credential starting at s[i], or -1.
// It finds what JavaScript's
//
//	\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{12,}|AKIA[0-9A-Z]{16})\b
//
// matches at i, the caller having checked the word boundary before s[i]:
// the whole alternation must end at a word boundary, so AKIA followed by 17
// characters is not a key and a trailing '-' stays outside the match.
func credentialEnd(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], "sk-"):
		run := i + 3
		for run < len(s) && (isWordByte(s[run]) || s[run] == '-') {
			run++
		}
		// The greedy run backs off until it ends at a word boundary; with
		// or without "ant-" the shortest end is 8 characters after "sk-".
		for e := run; e >= i+3+8; e-- {
			if atWordBoundary(s, e) {
				return e
			}
		}
	case len(s)-i >= 4 && s[i] == 'g' && s[i+1] == 'h' && strings.IndexByte("pousr", s[i+2]) >= 0 && s[i+3] == '_':
		run := i + 4
		for run < len(s) && isWordByte(s[run]) && s[run] != '_' {
			run++
		}
		// Inside a run of word characters there is no boundary.
		if run-(i+4) >= 12 && atWordBoundary(s, run) {
			return run
		}
	case strings.HasPrefix(s[i:], "AKIA"):
		e := i + 4
		for e < len(s) && e < i+20 && (('0' <= s[e] && s[e] <= '9') || ('A' <= s[e] && s[e] <= 'Z')) {
			e++
		}
		if e == i+20 && atWordBoundary(s, e) {
			return e
		}
	}
	return -1
}

// atWordBoundary reports whether JavaScript's \b holds at offset i.
func atWordBoundary(s string, i int) bool {
	before := i > 0 && isWordByte(s[i-1])
	after := i < len(s) && isWordByte(s[i])
	return before != after
}

// redactCredentials replaces every credential with the credential
// placeholder, scanning left to right and resuming after each match. Only
// a position where "sk-", "gh?_" or "AKIA" starts can begin a credential,
// so the scan jumps from one such anchor to the next.
func redactCredentials(s string, n *int) string {
	var b strings.Builder
	last := 0
	a := credentialAnchors{s: s, sk: -2, gh: -2, akia: -2}
	for i := a.next(0); i >= 0; i = a.next(i) {
		if i > 0 && isWordByte(s[i-1]) {
			i++
			continue
		}
		e := credentialEnd(s, i)
		if e < 0 {
			i++
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(redactedCredential)
		last = e
		i = e
		*n++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// credentialAnchors finds the anchors of credentials in s: the offsets
// where "sk-", "gh" + one of pousr + "_", or "AKIA" starts. It keeps the
// next anchor of each kind (-1 for none left, -2 for not searched yet), so
// that a scan over s searches each part of it once per kind.
type credentialAnchors struct {
	s            string
	sk, gh, akia int
}

// next returns the first anchor at or after from, or -1. Calls must not
// go back: from never decreases.
func (a *credentialAnchors) next(from int) int {
	s := a.s
	if a.sk != -1 && a.sk < from {
		a.sk = indexFrom(s, from, "sk-")
	}
	if a.akia != -1 && a.akia < from {
		a.akia = indexFrom(s, from, "AKIA")
	}
	if a.gh != -1 && a.gh < from {
		// A gh?_ anchor is found by its underscore, three bytes in.
		a.gh = -1
		for j := from + 3; j < len(s); j++ {
			k := strings.IndexByte(s[j:], '_')
			if k < 0 {
				break
			}
			j += k
			if i := j - 3; s[i] == 'g' && s[i+1] == 'h' && strings.IndexByte("pousr", s[i+2]) >= 0 {
				a.gh = i
				break
			}
		}
	}
	best := -1
	for _, i := range [3]int{a.sk, a.gh, a.akia} {
		if i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// indexFrom returns the offset of the first sub in s at or after from, or
// -1.
func indexFrom(s string, from int, sub string) int {
	if from > len(s) {
		return -1
	}
	if k := strings.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}
