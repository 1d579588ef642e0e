package privacy

import (
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// The replacement texts of secret redaction.
const (
	redactedPrivateKey = "[DS4 REDACTED PRIVATE KEY]"
	redactedCredential = "[DS4 REDACTED CREDENTIAL]"
	redactedToken      = "[DS4 REDACTED TOKEN]"
	redactedSecret     = "[DS4 REDACTED SECRET]"
)

// redactSecrets replaces secrets in s, pattern after pattern over the
// already-redacted text, and returns the text and the number of
// replacements. Every pattern is scanned in code, from anchors found with
// byte searches; the tests hold the regular expression each scan must
// agree with (Go's regexp picks the match a backtracking engine picks, so
// each is an exact model of the JavaScript pattern).
//
// The redacted text is built in bufs, two buffers written in turn so that
// no pattern writes the buffer its input is in: it may be a view of one of
// them, valid until they are next written; used records the most of each
// that was written. With bufs nil, every copy is a buffer of its own.
func redactSecrets(s string, bufs *[2][]byte, used *[2]int) (string, int) {
	var anchors uint8 = anyAnchor
	if len(s) <= shortText {
		if anchors = secretAnchors(s); anchors == 0 {
			return s, 0
		}
	}
	var n int
	in := -1 // the buffer s is in, if one
	var scratch [2][]byte
	if bufs != nil {
		scratch = *bufs
	}
	// run runs one pattern, writing the buffer s is not in; s is then in
	// that buffer if the pattern replaced something.
	run := func(redact func(string, *int, []byte) (string, []byte)) {
		k := 0
		if in == 0 {
			k = 1
		}
		before := n
		var out []byte
		if s, out = redact(s, &n, scratch[k]); n > before {
			in, scratch[k] = k, out
			if used != nil {
				used[k] = max(used[k], len(out))
			}
		}
	}
	// A pattern runs when s holds one of its anchors; no replacement text
	// holds one another pattern could complete.
	if anchors&anchorHyphen != 0 {
		run(redactPEM)
	}
	if anchors&(anchorHyphen|anchorK|anchorUnderscore) != 0 {
		run(redactCredentials)
	}
	if anchors&anchorB != 0 {
		run(redactBearer)
	}
	if anchors&anchorSeparator != 0 {
		run(redactAssignments)
	}
	if bufs != nil {
		*bufs = scratch
	}
	return s, n
}

// rewriter builds the redacted copy of a text of size bytes in buf,
// whose contents it overwrites (nil: a buffer of its own); the copy
// finish returns is a view of the buffer, valid until it is next written.
type rewriter struct {
	buf  []byte
	size int
	on   bool
}

func (w *rewriter) write(s string) {
	if !w.on {
		w.buf, w.on = slices.Grow(w.buf[:0], w.size), true
	}
	w.buf = append(w.buf, s...)
}

func (w *rewriter) writeByte(c byte) {
	if !w.on {
		w.buf, w.on = slices.Grow(w.buf[:0], w.size), true
	}
	w.buf = append(w.buf, c)
}

// finish returns s unchanged when nothing was written, else the copy with
// s[last:] appended; and the buffer, grown or not.
func (w *rewriter) finish(s string, last int) (string, []byte) {
	if !w.on {
		return s, w.buf
	}
	w.buf = append(w.buf, s[last:]...)
	return unsafe.String(unsafe.SliceData(w.buf), len(w.buf)), w.buf
}

// shortText is the length up to which a text is first checked in one pass
// for a byte every secret needs, rather than searched pattern by pattern.
const shortText = 64

// The anchors of the secret patterns: bytes of which every match holds
// one. A PEM block holds hyphens; a credential the hyphen of "sk-", the K
// of "AKIA" or the underscore of "gh?_"; a Bearer token the b of "bearer"
// in either case; an assignment its separator.
const (
	anchorHyphen = 1 << iota
	anchorK
	anchorUnderscore
	anchorB
	anchorSeparator
	anyAnchor = anchorHyphen | anchorK | anchorUnderscore | anchorB | anchorSeparator
)

var secretBytes = [256]uint8{'-': anchorHyphen, 'K': anchorK, '_': anchorUnderscore, 'b': anchorB, 'B': anchorB, ':': anchorSeparator, '=': anchorSeparator}

// secretAnchors returns the anchors s holds, in one pass.
func secretAnchors(s string) uint8 {
	var m uint8
	for i := 0; i < len(s); i++ {
		m |= secretBytes[s[i]]
	}
	return m
}

// PEM private-key blocks: a header, anything, and the nearest footer after
// it. Header and footer name one of the key types, which need not agree.
const (
	pemBegin = "-----BEGIN "
	pemEnd   = "-----END "
	pemLabel = "PRIVATE KEY-----"
)

var pemTypes = [...]string{"RSA ", "EC ", "OPENSSH ", "DSA ", ""}

// pemLabelEnd returns the end of "[RSA |EC |OPENSSH |DSA ]PRIVATE KEY-----"
// starting at s[i], or -1.
func pemLabelEnd(s string, i int) int {
	for _, t := range pemTypes {
		if strings.HasPrefix(s[i:], t) && strings.HasPrefix(s[i+len(t):], pemLabel) {
			return i + len(t) + len(pemLabel)
		}
	}
	return -1
}

// redactPEM replaces every private-key block with the private-key
// placeholder. It finds what
//
//	-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----(?s:.*?)-----END (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----
//
// matches, left to right: the first header that has a footer after it, up
// to the nearest footer. A header without a footer after it ends the scan,
// since no later header has one either.
func redactPEM(s string, n *int, buf []byte) (string, []byte) {
	b := rewriter{buf: buf, size: len(s)}
	last := 0
	for i := 0; ; {
		k := indexFrom(s, i, pemBegin)
		if k < 0 {
			break
		}
		h := pemLabelEnd(s, k+len(pemBegin))
		if h < 0 {
			i = k + 1
			continue
		}
		e := -1
		for j := h; e < 0; {
			f := indexFrom(s, j, pemEnd)
			if f < 0 {
				break
			}
			e = pemLabelEnd(s, f+len(pemEnd))
			j = f + 1
		}
		if e < 0 {
			break
		}
		b.write(s[last:k])
		b.write(redactedPrivateKey)
		last, i = e, e
		*n++
	}
	return b.finish(s, last)
}

// isBearerTokenByte reports whether c may be part of a Bearer token:
// [A-Za-z0-9._~+/=-].
func isBearerTokenByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-'
}

// redactBearer replaces the token of every Bearer credential, keeping its
// prefix. It finds what
//
//	\b([Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9._~+/=-]{8,}
//
// matches (\s being JavaScript's whitespace), left to right: a
// word-bounded "bearer" in any ASCII case, all the whitespace after it (at
// least one character), and all the token characters after that (at least
// 8); neither run can give back a character to let the other match.
func redactBearer(s string, n *int, buf []byte) (string, []byte) {
	b := rewriter{buf: buf, size: len(s)}
	last := 0
	lower, upper := -2, -2 // the next 'b' and 'B' at or after i (-1: none left)
	for i := 0; ; {
		if lower != -1 && lower < i {
			lower = nextByte(s, i, 'b')
		}
		if upper != -1 && upper < i {
			upper = nextByte(s, i, 'B')
		}
		k := lower
		if k < 0 || (upper >= 0 && upper < k) {
			k = upper
		}
		if k < 0 {
			break
		}
		i = k + 1
		if !hasPrefixFoldASCII(s, k, "bearer") || (k > 0 && isWordByte(s[k-1])) {
			continue
		}
		j := skipJSSpace(s, k+len("bearer"))
		if j == k+len("bearer") {
			continue
		}
		e := j
		for e < len(s) && isBearerTokenByte(s[e]) {
			e++
		}
		if e-j < 8 {
			continue
		}
		b.write(s[last:j])
		b.write(redactedToken)
		last, i = e, e
		*n++
	}
	return b.finish(s, last)
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
func redactAssignments(s string, n *int, buf []byte) (string, []byte) {
	b := rewriter{buf: buf, size: len(s)}
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
		b.write(s[last:j])
		b.write(redactedSecret)
		if quote != 0 {
			b.writeByte(quote)
		}
		last = after
		*n++
	}
	return b.finish(s, last)
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
func redactCredentials(s string, n *int, buf []byte) (string, []byte) {
	b := rewriter{buf: buf, size: len(s)}
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
		b.write(s[last:i])
		b.write(redactedCredential)
		last = e
		i = e
		*n++
	}
	return b.finish(s, last)
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
	// Each anchor is found by its rarest byte: "sk-" by its hyphen, two
	// bytes in; "AKIA" by its K, one byte in; "gh?_" by its underscore,
	// three bytes in.
	if a.sk != -1 && a.sk < from {
		a.sk = anchorBy(s, from, '-', 2, func(i int) bool { return s[i] == 's' && s[i+1] == 'k' })
	}
	if a.akia != -1 && a.akia < from {
		a.akia = anchorBy(s, from, 'K', 1, func(i int) bool { return s[i] == 'A' && strings.HasPrefix(s[i+2:], "IA") })
	}
	if a.gh != -1 && a.gh < from {
		a.gh = anchorBy(s, from, '_', 3, func(i int) bool {
			return s[i] == 'g' && s[i+1] == 'h' && strings.IndexByte("pousr", s[i+2]) >= 0
		})
	}
	best := -1
	for _, i := range [3]int{a.sk, a.gh, a.akia} {
		if i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// anchorBy returns the first offset i at or after from where c is at
// s[i+at] and ok(i) holds, or -1.
func anchorBy(s string, from int, c byte, at int, ok func(i int) bool) int {
	for j := from + at; j < len(s); j++ {
		k := strings.IndexByte(s[j:], c)
		if k < 0 {
			return -1
		}
		j += k
		if ok(j - at) {
			return j - at
		}
	}
	return -1
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
