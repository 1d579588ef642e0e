package privacy

import "unsafe"

// placeholders are the texts that replace a segment whose class the
// destination does not allow, by rank.
var placeholders = func() (p [len(classOrder)]string) {
	for i, c := range classOrder {
		p[i] = "[DS4 " + string(c) + " content excluded by privacy policy]"
	}
	return p
}()

// placeholder is the text that replaces a segment of class c.
func placeholder(c Classification) string { return placeholders[c.Rank()] }

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
	// buf holds the text of the last string text sanitised with a marker
	// applied: the string text returns is a view of it, valid until the
	// next call. used is the most of it any call wrote.
	buf  []byte
	used int
	// secret and secretUsed are redactSecrets' buffers, which the string
	// text returns may be a view of too.
	secret     [2][]byte
	secretUsed [2]int
}

func (z *sanitizer) allows(c Classification) bool { return z.allowed[c.Rank()] }

// text sanitises one string and records the outcome in st; marked says
// whether s holds a marker (the floor pass records which strings do). The string it returns may be a
// view of z.buf, valid until the next call: a caller that keeps it copies
// it.
func (z *sanitizer) text(s string, marked bool, st *textStats) string {
	st.class = Max(st.class, z.def)
	if s == "" {
		return s
	}
	z.markers, z.pairs = z.markers[:0], z.pairs[:0]
	if marked {
		z.markers = findMarkers(z.markers, s)
		z.pairs = findPairs(z.pairs, z.markers, &z.next)
	}
	var out string
	applied := false
	switch {
	case len(z.pairs) > 0:
		applied = true
		z.buf = z.buf[:0]
		pos := 0
		for _, p := range z.pairs {
			z.segment(s[pos:p.open.start], z.def, false, st)
			z.segment(s[p.open.end:p.close.start], Max(z.def, p.open.class), true, st)
			pos = p.close.end
		}
		z.segment(s[pos:], z.def, false, st)
		out = z.view()
	default:
		if m, rest, ok := leadingMarker(s, z.markers); ok {
			applied = true
			z.buf = z.buf[:0]
			z.segment(rest, Max(z.def, m.class), true, st)
			out = z.view()
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

// segment appends one segment of class c to z.buf: verbatim when the
// class is allowed, else a placeholder. Empty text between pairs writes
// nothing; an empty pair or marked remainder (always set) still writes a
// placeholder.
func (z *sanitizer) segment(s string, c Classification, always bool, st *textStats) {
	st.class = Max(st.class, c)
	if s == "" && !always {
		return
	}
	if z.allows(c) {
		z.buf = append(z.buf, s...)
		return
	}
	z.buf = append(z.buf, placeholder(c)...)
	st.blocked++
}

// view returns z.buf as a string without copying it; it is valid until
// z.buf is next written.
func (z *sanitizer) view() string {
	z.used = max(z.used, len(z.buf))
	return unsafe.String(unsafe.SliceData(z.buf), len(z.buf))
}

func (z *sanitizer) secrets(s string, st *textStats) string {
	out, n := redactSecrets(s, &z.secret, &z.secretUsed)
	st.redactions += n
	return out
}
