package gen

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"pgregory.net/rapid"
)

// textRunes mixes ASCII, JSON metacharacters, control characters, the
// characters JavaScript's trim removes and characters whose UTF-16 order
// differs from their byte order, so generated text exercises escaping and
// ordering without becoming unreadable in a failure report.
var textRunes = []rune{
	'a', 'b', 'z', 'A', '0', '9', ' ', '.', '-', '_', ':', '/',
	'"', '\\', '<', '>', '&', '\n', '\t', '\x00', '\x1f',
	'\u00a0', '\u2028', '\u2029', '\ufeff', '\u0085', 'é', 'ß', '中',
	'\ue000', '\uffff', '\U0001f600', '\U00010000',
}

// textPieces are textRunes as strings.
var textPieces = func() []string {
	out := make([]string, len(textRunes))
	for i, r := range textRunes {
		out[i] = string(r)
	}
	return out
}()

// tagRunes are the characters of the tags that make generated ids
// distinctive: ASCII, a precomposed letter, characters whose byte and
// UTF-16 orders differ, the case traps and a combining mark (which follows
// the e that starts an entry id) and a noncharacter of stringClasses. They
// hold no digit, so an id built as prefix, tag and decimal counter is
// unique per counter value.
var tagRunes = []rune{'a', 'x', 'Z', '_', '.', 'é', '\ue000', '\U0001f600',
	'\u0301', '\u212a', '\u017f', '\u0130', '\u0131', '\u03a3', '\ufdd0'}

// idLeads are the first characters of an id tag: U+E000 and U+1F600 are
// ordered one way by bytes and the other way in UTF-16.
var idLeads = []rune{'a', '\ue000', '\U0001f600', 'é'}

// idTag draws the distinctive, digit-free part of a generated message or
// tool call id, which comes before the id's counter: a lead from idLeads and
// a tag.
func idTag() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SampledFrom(idLeads).Draw(t, "idLead")) + tag().Draw(t, "tag")
	})
}

// textPiece draws one piece of a text: a character of textRunes, or,
// about one time in five, a piece of stringClasses.
var textPiece = rapid.Custom(func(t *rapid.T) string {
	if oneIn(t, "classPiece", 5) {
		return classPiece(t, "textClass")
	}
	return rapid.SampledFrom(textPieces).Draw(t, "textPiece")
})

// text draws a short string of up to 12 pieces of textPiece.
func text() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(textPiece, 0, 12).Draw(t, "text"), "")
	})
}

// plainText draws a short string over textRunes alone: the filler of
// payload strings, whose pieces carry the string classes there.
func plainText() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.SampledFrom(textRunes), 0, 12, -1)
}

// tag draws the distinctive, digit-free tail of a generated id.
func tag() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.SampledFrom(tagRunes), 0, 3, -1)
}

// nonBlank draws a string that is not blank after JavaScript trimming:
// the prefix, a tag and, about one time in nine, whitespace of stringClasses
// after it.
func nonBlank(prefix string) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return prefix + tag().Draw(t, "tag") + edge(t, "edge")
	})
}

// optString draws an optional string.
func optString(g *rapid.Generator[string]) *rapid.Generator[*string] {
	return rapid.Ptr(g, true)
}

// number draws a finite number that survives a round trip through its
// JavaScript text form: integers of every size JSON commonly carries and a
// few fractions.
func number() *rapid.Generator[float64] {
	return rapid.OneOf(
		rapid.Map(rapid.Int64Range(0, 1<<53), func(i int64) float64 { return float64(i) }),
		rapid.Map(rapid.IntRange(-1000, 1000), func(i int) float64 { return float64(i) / 8 }),
		rapid.SampledFrom([]float64{0.1, 1e21, 1e-7, -2.5e-300, 1.7976931348623157e308}),
	)
}

// RawJSON returns a generator of small JSON values (objects, arrays,
// strings, numbers, booleans and null, nested up to three levels) in the
// form JSON.stringify writes them, which is the form the contract's encoder
// writes raw values in: decoding a message that holds one and encoding it
// again gives the same bytes.
func RawJSON() *rapid.Generator[json.RawMessage] {
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		src := appendRaw(nil, t, 0)
		out, err := jsonw.Normalize(nil, src)
		if err != nil {
			panic("gen: generated invalid JSON: " + err.Error())
		}
		return out
	})
}

func appendRaw(dst []byte, t *rapid.T, depth int) []byte {
	max := 5
	if depth >= 3 {
		max = 3
	}
	switch rapid.IntRange(0, max).Draw(t, "kind") {
	case 0:
		return append(dst, "null"...)
	case 1:
		return strconv.AppendBool(dst, rapid.Bool().Draw(t, "bool"))
	case 2:
		b, _ := jsonw.AppendNumber(dst, number().Draw(t, "number"))
		return b
	case 3:
		return jsonw.AppendString(dst, text().Draw(t, "string"))
	case 4:
		n := rapid.IntRange(0, 3).Draw(t, "len")
		dst = append(dst, '[')
		for i := range n {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendRaw(dst, t, depth+1)
		}
		return append(dst, ']')
	default:
		n := rapid.IntRange(0, 3).Draw(t, "len")
		dst = append(dst, '{')
		for i := range n {
			if i > 0 {
				dst = append(dst, ',')
			}
			// Names include array indices ("0", "12"), which JavaScript
			// moves to the front of an object.
			name := rapid.SampledFrom([]string{"path", "q", "0", "12", "é", "a b", "__proto_"}).Draw(t, "name")
			dst = jsonw.AppendString(dst, name)
			dst = append(dst, ':')
			dst = appendRaw(dst, t, depth+1)
		}
		return append(dst, '}')
	}
}

// extraFields draws unknown members. Their names are distinct and differ from
// every member name the contract defines ("Id" and "ID" differ from "id"), so
// they survive a round trip. It draws nothing when unknown members are left
// out.
func extraFields(t *rapid.T, leave familySet) []contract.Field {
	if leave.has(FamilyUnknownMembers) {
		return nil
	}
	n := rapid.IntRange(0, 2).Draw(t, "extras")
	if n == 0 {
		return nil
	}
	names := []string{"x-note", "vendor", "Id", "ID", "_meta", "é"}
	var out []contract.Field
	for range n {
		name := rapid.SampledFrom(names).Draw(t, "extraName")
		if hasField(out, name) {
			continue
		}
		out = append(out, contract.Field{Name: name, Value: RawJSON().Draw(t, "extraValue")})
	}
	return out
}

func hasField(fs []contract.Field, name string) bool {
	for _, f := range fs {
		if f.Name == name {
			return true
		}
	}
	return false
}
