package privacy

import "strings"

// placeholder is the text that replaces a segment whose class the
// destination does not allow.
func placeholder(c Classification) string {
	return "[DS4 " + string(c) + " content excluded by privacy policy]"
}

// textStats accumulates what text sanitisation did.
type textStats struct {
	class      Classification // highest class seen
	changed    bool
	blocked    int
	redactions int
}

// sanitizer applies one policy with one default class.
type sanitizer struct {
	allowed [len(classOrder)]bool
	def     Classification
	redact  bool // remote destination with redaction on
	markers []marker
	pairs   []pair
	next    []int32 // findPairs' scratch
}

func (z *sanitizer) allows(c Classification) bool { return z.allowed[c.Rank()] }

// text sanitises one string and records the outcome in st.
func (z *sanitizer) text(s string, st *textStats) string {
	st.class = Max(st.class, z.def)
	if s == "" {
		return s
	}
	z.markers = findMarkers(z.markers[:0], s)
	z.pairs = findPairs(z.pairs[:0], z.markers, &z.next)
	var out string
	applied := false
	switch {
	case len(z.pairs) > 0:
		applied = true
		var b strings.Builder
		b.Grow(len(s))
		pos := 0
		for _, p := range z.pairs {
			z.segment(&b, s[pos:p.open.start], z.def, false, st)
			z.segment(&b, s[p.open.end:p.close.start], Max(z.def, p.open.class), true, st)
			pos = p.close.end
		}
		z.segment(&b, s[pos:], z.def, false, st)
		out = b.String()
	default:
		if m, rest, ok := leadingMarker(s, z.markers); ok {
			applied = true
			var b strings.Builder
			z.segment(&b, rest, Max(z.def, m.class), true, st)
			out = b.String()
		} else if z.allows(z.def) {
			out = s
		} else {
			out = placeholder(z.def)
			st.blocked++
		}
	}
	if z.redact {
		out = z.secrets(out, st)
	}
	if applied || out != s {
		st.changed = true
	}
	return out
}

// segment writes one segment of class c: verbatim when the class is
// allowed, else a placeholder. Empty text between pairs writes nothing; an
// empty pair or marked remainder (always set) still writes a placeholder.
func (z *sanitizer) segment(b *strings.Builder, s string, c Classification, always bool, st *textStats) {
	st.class = Max(st.class, c)
	if s == "" && !always {
		return
	}
	if z.allows(c) {
		b.WriteString(s)
		return
	}
	b.WriteString(placeholder(c))
	st.blocked++
}

func (z *sanitizer) secrets(s string, st *textStats) string {
	out, n := redactSecrets(s)
	st.redactions += n
	return out
}
