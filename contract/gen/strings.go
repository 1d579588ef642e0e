package gen

import (
	"strconv"
	"strings"

	"pgregory.net/rapid"
)

// SPEC writes the contract in JavaScript's string rules: blank means empty
// after String.prototype.trim, names are compared lower-cased by
// toLowerCase, lengths are counted and strings ordered in UTF-16 code
// units. Go's standard library follows other rules, and an adapter
// written with it slips exactly where the two disagree. stringClasses are
// the strings on which they disagree, or on which a normalising adapter
// changes what it must keep, one class each; the generators mix them into
// every string they draw that an adapter may trim, fold, count, compare or
// normalise — message, entry and tool call ids, session and runtime ids,
// providers, models, tool names, mime types, capability ids, versions and
// reasons, texts and payloads — often enough that every run of a check
// meets each class, seldom enough that ordinary strings stay the rule.
// A piece never makes blank what must not be blank: ids, entry ids and
// model descriptors stay valid.
//
// Lone surrogates are not drawn: a Go string holding one is not valid
// UTF-8 (SPEC requires valid UTF-8 of a history file), and encoding/json
// writes it as U+FFFD, so no adapter could be handed one.
var stringClasses = [...]stringClass{
	// JavaScript's trim removes U+FEFF (ZERO WIDTH NO-BREAK SPACE, the
	// byte order mark); Go's strings.TrimSpace keeps it: "\ufeffollama"
	// is the local provider ollama, "\ufeff" alone is blank.
	{"JavaScript-only space", []string{"\ufeff"}},
	// Go's strings.TrimSpace (and unicode.IsSpace) removes U+0085 (NEXT
	// LINE); JavaScript's trim keeps it: "\u0085" is not blank,
	// "ollama\u0085" is a remote provider.
	{"Go-only space", []string{"\u0085"}},
	// Characters neither trims that look like whitespace or nothing:
	// U+180E MONGOLIAN VOWEL SEPARATOR (a space separator before Unicode
	// 6.3, trimmed by older JavaScript engines and whitespace tables),
	// U+200B ZERO WIDTH SPACE and U+2060 WORD JOINER.
	{"space look-alike", []string{"\u180e", "\u200b", "\u2060"}},
	// Whitespace both trim beyond ASCII space, tab and newline: VT, FF,
	// NBSP, U+1680, U+2000, U+200A, U+2028, U+2029, U+202F, U+205F and
	// U+3000. A trim of ASCII whitespace keeps them.
	{"wide space", []string{"\v", "\f", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"}},
	// CRLF and a lone CR: whitespace for both trims, and what a
	// line-ending normaliser rewrites.
	{"carriage return", []string{"\r\n", "\r"}},
	// Characters that lower-case, upper-case or fold differently in
	// JavaScript's toLowerCase, Go's strings.ToLower and ToUpper,
	// strings.EqualFold and an ASCII lower-casing: the Kelvin sign U+212A
	// (k for toLowerCase, ToLower and EqualFold, itself for ASCII), long s
	// U+017F (itself for toLowerCase, s for EqualFold, S for ToUpper),
	// capital I with dot U+0130 ("i" + U+0307 for toLowerCase, i for
	// strings.ToLower), dotless i U+0131 (itself lower-cased, I for
	// ToUpper), sharp s ß (itself lower-cased, SS for toUpperCase, ss in
	// full case folding), capital sharp s U+1E9E (ß lower-cased by both)
	// and capital sigma Σ (final ς at the end of a word for toLowerCase,
	// σ for strings.ToLower; EqualFold folds Σ, σ and ς together).
	{"case trap", []string{"\u212a", "\u017f", "\u0130", "\u0131", "\u00df", "\u1e9e", "\u03a3"}},
	// Combining marks and what Unicode normalisation rewrites: e + U+0301
	// (NFC é), A + U+030A and the ANGSTROM SIGN U+212B (both NFC U+00C5),
	// and U+0308 and U+20DD with nothing to combine with.
	{"combining mark", []string{"e\u0301", "A\u030a", "\u212b", "\u0308", "\u20dd"}},
	// Noncharacters: valid in UTF-8, JSON and JavaScript strings alike,
	// and dropped or replaced by a sanitiser that thinks otherwise:
	// U+FDD0, U+FFFE, U+FFFF and U+10FFFF.
	{"noncharacter", []string{"\ufdd0", "\ufffe", "\uffff", "\U0010ffff"}},
	// Characters outside the Basic Multilingual Plane: one rune, two
	// UTF-16 code units, four bytes — a string's length differs in each
	// count (ModelDescriptor draws ids at the 256-unit bound of SPEC §11
	// in them, Reasons the 240-unit cut of §5).
	{"astral", []string{"\U00010000", "\U0001f600", "\U0001d400"}},
}

// stringClass is one class of adversarial strings: its name and pieces.
type stringClass struct {
	name   string
	pieces []string
}

// classPieces returns the pieces of the named classes, in table order.
func classPieces(names ...string) []string {
	var out []string
	for _, c := range stringClasses {
		for _, n := range names {
			if c.name == n {
				out = append(out, c.pieces...)
			}
		}
	}
	if len(out) == 0 {
		panic("gen: no string class named " + strings.Join(names, ", "))
	}
	return out
}

// classPiece draws a piece of stringClasses: a class, then one of its
// pieces, so that every class is drawn about as often as another
// whatever its number of pieces.
func classPiece(t *rapid.T, label string) string {
	c := stringClasses[rapid.IntRange(0, len(stringClasses)-1).Draw(t, label)]
	return c.pieces[rapid.IntRange(0, len(c.pieces)-1).Draw(t, label+"Piece")]
}

var (
	// edgeSpaces are the pieces of the whitespace-like classes, drawn at
	// the start or end of names, where trimming reaches them.
	edgeSpaces = classPieces("JavaScript-only space", "Go-only space", "space look-alike", "wide space", "carriage return")
)

// oneIn reports, about one time in n, that a rare choice is drawn: the
// top of a range of n, since shrinking moves towards its bottom. rapid
// draws the ends of a range more often than its middle: about one time in
// 9 for n = 8, one in 25 for n = 32.
func oneIn(t *rapid.T, label string, n int) bool {
	return rapid.IntRange(0, n-1).Draw(t, label) == n-1
}

// edge draws what follows a drawn name: mostly nothing, about one time in
// nine a piece of edgeSpaces.
func edge(t *rapid.T, label string) string {
	if !oneIn(t, label, 8) {
		return ""
	}
	return rapid.SampledFrom(edgeSpaces).Draw(t, label+"Piece")
}

// goBlankID returns the n-th id that only Go's strings.TrimSpace makes
// blank: U+0085, then n in binary written with U+2000 (0) and U+2001 (1),
// both whitespace to either trim. JavaScript's trim keeps the U+0085, so
// the id is valid; an adapter that checks blank ids with TrimSpace refuses
// it. Distinct n give distinct ids, and none holds a letter or digit, so
// they differ from every other id the generators draw.
func goBlankID(n int) string {
	var b strings.Builder
	b.WriteString("\u0085")
	for _, c := range strconv.FormatUint(uint64(n), 2) {
		if c == '0' {
			b.WriteString("\u2000")
		} else {
			b.WriteString("\u2001")
		}
	}
	return b.String()
}
