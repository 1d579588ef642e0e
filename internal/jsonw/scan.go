package jsonw

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Kind is the kind of the next JSON value.
type Kind byte

// The JSON value kinds, named after their first byte.
const (
	Invalid Kind = 0
	Object  Kind = '{'
	Array   Kind = '['
	String  Kind = '"'
	Number  Kind = '0'
	Bool    Kind = 't'
	Null    Kind = 'n'
)

// String returns the JSON name of the kind, as used in error messages.
func (k Kind) String() string {
	switch k {
	case Object:
		return "object"
	case Array:
		return "array"
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "boolean"
	case Null:
		return "null"
	}
	return "invalid JSON"
}

// MaxDepth bounds the nesting of arrays and objects the scanner accepts.
const MaxDepth = 10000

// SyntaxError reports malformed JSON with the byte offset where it was found.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error describes the syntax error and its offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// TypeError reports a value of the wrong JSON kind.
type TypeError struct {
	Offset   int
	Expected Kind
	Found    Kind
}

// Error names the expected and the found kind.
func (e *TypeError) Error() string {
	return fmt.Sprintf("expected %s, found %s", e.Expected, e.Found)
}

// Scanner reads one JSON document from a byte slice. It is strict (RFC 8259,
// valid UTF-8 only) and reads object members in document order.
type Scanner struct {
	data    []byte
	pos     int
	scratch []byte
	names   map[string]string // decoded member names, shared to spare copies
	// bracket is set when the text of the string last read holds a '['.
	bracket bool
	// shared is set while data is the bytes of a string (ResetString):
	// String then returns values without escapes as parts of that
	// string instead of copies.
	shared bool
}

// NewScanner returns a scanner over data. The scanner does not copy data;
// Raw returns sub-slices of it.
func NewScanner(data []byte) *Scanner { return &Scanner{data: data} }

// Reset points the scanner at new data, keeping its buffers.
func (s *Scanner) Reset(data []byte) { s.data, s.pos, s.shared = data, 0, false }

// ResetString points the scanner at the document held in data, keeping
// its buffers. Until the next Reset, String returns a value that needs no
// unescaping as a part of data (sharing its memory, so keeping all of data
// alive) instead of a copy. Raw still returns parts of data's bytes, which
// the caller must not modify.
func (s *Scanner) ResetString(data string) {
	s.data, s.pos, s.shared = unsafe.Slice(unsafe.StringData(data), len(data)), 0, true
}

// maxKeptScratch bounds the unescape buffer Release keeps.
const maxKeptScratch = 64 << 10

// Release lets go of the scanner's data and of an unescape buffer grown
// past 64 KiB, before the scanner is kept for reuse. The table of member
// names stays: it holds only owned strings, never parts of data.
func (s *Scanner) Release() {
	s.data, s.pos, s.shared = nil, 0, false
	if cap(s.scratch) > maxKeptScratch {
		s.scratch = nil
	}
}

// Offset is the scanner's current byte offset.
func (s *Scanner) Offset() int { return s.pos }

func (s *Scanner) syntax(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

func (s *Scanner) skipWS() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// Peek returns the kind of the next value without consuming it.
func (s *Scanner) Peek() Kind {
	s.skipWS()
	if s.pos >= len(s.data) {
		return Invalid
	}
	switch c := s.data[s.pos]; c {
	case '{', '[', '"':
		return Kind(c)
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return Number
		}
	}
	return Invalid
}

func (s *Scanner) expect(k Kind) error {
	found := s.Peek()
	if found == k {
		return nil
	}
	if found == Invalid {
		if s.pos >= len(s.data) {
			return s.syntax("unexpected end of input")
		}
		return s.syntax(fmt.Sprintf("unexpected character %q", s.data[s.pos]))
	}
	return &TypeError{Offset: s.pos, Expected: k, Found: found}
}

// End reports an error unless only whitespace remains.
func (s *Scanner) End() error {
	s.skipWS()
	if s.pos != len(s.data) {
		return s.syntax("unexpected data after the JSON value")
	}
	return nil
}

// Object reads an object, calling fn for each member with its decoded name.
// The name is an ordinary string: it stays valid after fn returns, whatever
// the scanner reads meanwhile. fn must consume the member's value (with one
// of the scanner's reading methods).
func (s *Scanner) Object(fn func(name string) error) error { return s.object(fn, true) }

// object reads an object; it decodes member names only when named is set,
// and otherwise calls fn with "" after validating each name.
func (s *Scanner) object(fn func(name string) error, named bool) error {
	if empty, err := s.open(Object, '}'); empty || err != nil {
		return err
	}
	for {
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.syntax("expected a member name")
		}
		b, err := s.stringBytes()
		if err != nil {
			return err
		}
		name := ""
		if named {
			name = s.name(b)
		}
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.syntax("expected ':' after a member name")
		}
		s.pos++
		if err := fn(name); err != nil {
			return err
		}
		if more, err := s.more('}', "object"); !more || err != nil {
			return err
		}
	}
}

// open consumes the opening bracket of a value of kind k and reports
// whether the value is empty, in which case its closing bracket is
// consumed too.
func (s *Scanner) open(k Kind, closing byte) (bool, error) {
	if err := s.expect(k); err != nil {
		return false, err
	}
	s.pos++
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == closing {
		s.pos++
		return true, nil
	}
	return false, nil
}

// more consumes what follows a member or an element: a ',' (another one
// follows) or the closing bracket (the value ends).
func (s *Scanner) more(closing byte, in string) (bool, error) {
	s.skipWS()
	if s.pos >= len(s.data) {
		return false, s.syntax("unexpected end of input in " + in)
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		return false, nil
	}
	return false, s.syntax("expected ',' or '" + string(closing) + "' in " + in)
}

// Bounds of the member-name table: documents repeat a few short names
// ("type", "text", "content") many times.
const (
	maxSharedNames   = 512
	maxSharedNameLen = 64
)

// name returns b as a string that owns its bytes. Short names already seen
// are shared rather than copied again.
func (s *Scanner) name(b []byte) string {
	if len(b) > maxSharedNameLen {
		return string(b)
	}
	if n, ok := s.names[string(b)]; ok {
		return n
	}
	n := string(b)
	if s.names == nil {
		s.names = make(map[string]string, 16)
	}
	if len(s.names) < maxSharedNames {
		s.names[n] = n
	}
	return n
}

// Array reads an array, calling fn for each element with its index; fn must
// consume the element.
func (s *Scanner) Array(fn func(i int) error) error {
	if empty, err := s.open(Array, ']'); empty || err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := fn(i); err != nil {
			return err
		}
		if more, err := s.more(']', "array"); !more || err != nil {
			return err
		}
	}
}

// String reads a string value.
func (s *Scanner) String() (string, error) {
	if err := s.expect(String); err != nil {
		return "", err
	}
	start := s.pos + 1
	b, err := s.stringBytes()
	if err != nil {
		return "", err
	}
	if s.shared && len(b) > 0 && unsafe.SliceData(b) == &s.data[start] {
		// b is the literal itself, without escapes: a part of the
		// string s reads, which is immutable.
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	return string(b), nil
}

// Bool reads true or false.
func (s *Scanner) Bool() (bool, error) {
	if err := s.expect(Bool); err != nil {
		return false, err
	}
	if s.literal("true") {
		return true, nil
	}
	if s.literal("false") {
		return false, nil
	}
	return false, s.syntax("invalid literal")
}

// Null consumes a null literal if one is next and reports whether it did.
func (s *Scanner) Null() (bool, error) {
	if s.Peek() != Null {
		return false, nil
	}
	if !s.literal("null") {
		return false, s.syntax("invalid literal")
	}
	return true, nil
}

// Number reads a number as a float64.
func (s *Scanner) Number() (float64, error) {
	if err := s.expect(Number); err != nil {
		return 0, err
	}
	start := s.pos
	if err := s.skipNumber(); err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(s.data[start:s.pos]), 64)
	if err != nil {
		s.pos = start
		return 0, s.syntax("number out of range")
	}
	return f, nil
}

// Raw validates the next value and returns its bytes (a sub-slice of the
// input, without surrounding whitespace).
func (s *Scanner) Raw() ([]byte, error) {
	s.skipWS()
	start := s.pos
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return s.data[start:s.pos], nil
}

// Skip validates and discards the next value.
func (s *Scanner) Skip() error {
	s.skipWS()
	return s.skip(0)
}

func (s *Scanner) skip(depth int) error {
	if depth > MaxDepth {
		return s.syntax("nesting too deep")
	}
	switch s.Peek() {
	case Object:
		return s.object(func(string) error { s.skipWS(); return s.skip(depth + 1) }, false)
	case Array:
		return s.Array(func(int) error { s.skipWS(); return s.skip(depth + 1) })
	case String:
		_, err := s.stringBytes()
		return err
	case Number:
		return s.skipFiniteNumber()
	case Bool:
		_, err := s.Bool()
		return err
	case Null:
		_, err := s.Null()
		return err
	}
	return s.expect(Null) // produces the right syntax error
}

// skipFiniteNumber skips a number, rejecting one too large for a double as
// Number does, so that every value Raw or Skip accepts also parses (and
// Normalize accepts every Raw value). Only a literal with an exponent or
// of 309 digits or more can overflow, so others are not parsed.
func (s *Scanner) skipFiniteNumber() error {
	start := s.pos
	if err := s.skipNumber(); err != nil {
		return err
	}
	lit := s.data[start:s.pos]
	if len(lit) < 309 && !slices.ContainsFunc(lit, func(c byte) bool { return c == 'e' || c == 'E' }) {
		return nil
	}
	if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
		s.pos = start
		return s.syntax("number out of range")
	}
	return nil
}

func (s *Scanner) literal(lit string) bool {
	if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return true
	}
	return false
}

func (s *Scanner) skipNumber() error {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return s.syntax("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return s.syntax("invalid number")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return s.syntax("invalid number")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return nil
}

// stringBytes reads a string literal at s.pos and returns its decoded bytes.
// Without escapes the result aliases the input; otherwise it is the scanner's
// scratch buffer, valid until the next call.
func (s *Scanner) stringBytes() ([]byte, error) {
	d := s.data
	s.pos++ // opening quote
	start := s.pos
	i := start
	s.bracket = false
	for i < len(d) {
		i += plainLenNoBracket(d[i:])
		if i >= len(d) {
			break
		}
		c := d[i]
		if c == '"' {
			s.pos = i + 1
			return d[start:i], nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			s.pos = i
			return nil, s.syntax("control character in string")
		}
		if c < utf8.RuneSelf {
			s.bracket = s.bracket || c == '['
			i++
			continue
		}
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size == 1 {
			s.pos = i
			return nil, s.syntax("invalid UTF-8 in string")
		}
		i += size
	}
	if i >= len(d) {
		s.pos = i
		return nil, s.syntax("unterminated string")
	}
	// Slow path: unescape into scratch, copying the runs between escapes
	// whole.
	buf := append(s.scratch[:0], d[start:i]...)
	for i < len(d) {
		if k := plainLen(d[i:]); k > 0 {
			buf = append(buf, d[i:i+k]...)
			i += k
			if i >= len(d) {
				break
			}
		}
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			s.scratch = buf
			s.bracket = bytes.IndexByte(buf, '[') >= 0
			return buf, nil
		case c == '\\':
			if i+1 >= len(d) {
				s.pos = i
				return nil, s.syntax("unterminated string")
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
				i += 2
			case 'b':
				buf = append(buf, '\b')
				i += 2
			case 'f':
				buf = append(buf, '\f')
				i += 2
			case 'n':
				buf = append(buf, '\n')
				i += 2
			case 'r':
				buf = append(buf, '\r')
				i += 2
			case 't':
				buf = append(buf, '\t')
				i += 2
			case 'u':
				r, ok := hex4(d, i+2)
				if !ok {
					s.pos = i
					return nil, s.syntax("invalid \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(0), false
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						r2, ok2 = hex4(d, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						buf = appendSurrogate(buf, r)
						continue
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				s.pos = i
				return nil, s.syntax("invalid escape in string")
			}
		case c < 0x20:
			s.pos = i
			return nil, s.syntax("control character in string")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				s.pos = i
				return nil, s.syntax("invalid UTF-8 in string")
			}
			buf = append(buf, d[i:i+size]...)
			i += size
		}
	}
	s.pos = i
	return nil, s.syntax("unterminated string")
}

// appendSurrogate appends a lone surrogate code unit as WTF-8: the three
// bytes UTF-8 would give it if it were a character. They are not valid
// UTF-8, so no character collides with them, and AppendString writes them
// back as the \u escape they came from.
func appendSurrogate(buf []byte, r rune) []byte {
	return append(buf, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

// surrogateAt returns the surrogate code unit whose WTF-8 bytes start s[i:],
// or 0.
func surrogateAt[T string | []byte](s T, i int) rune {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
	}
	return 0
}

// HasLoneSurrogateEscape reports whether raw holds a \u escape of a surrogate
// that is not half of a high–low pair. Backslashes only occur inside strings
// in well-formed JSON, so every backslash starts an escape. The scanner
// reads such an escape as WTF-8 bytes: a Go string that is not valid UTF-8.
func HasLoneSurrogateEscape(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 >= len(raw) || raw[i+1] != 'u' {
			i++ // skip the escaped character
			continue
		}
		u, ok := hex4(raw, i+2)
		if !ok {
			return false // malformed; the parser reports it
		}
		i += 5
		switch {
		case u >= 0xDC00 && u <= 0xDFFF:
			return true
		case u >= 0xD800 && u <= 0xDBFF:
			if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return true
			}
			lo, ok := hex4(raw, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// plainLen returns the length of the longest prefix of s made of printable
// ASCII other than '"' and '\\': bytes a string literal holds verbatim. It
// tests eight bytes at a time.
func plainLen[T string | []byte](s T) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q, b := w^(ones*'"'), w^(ones*'\\')
		// Some byte is below 0x20, or is a zero byte of q or b (a quote
		// or a backslash in w), or has its high bit set.
		if ((w-ones*0x20)&^w|(q-ones)&^q|(b-ones)&^b|w)&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// plainLenNoBracket is plainLen that also stops at '[', so that the
// scanner notes brackets as it reads strings.
func plainLenNoBracket(s []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q, b, k := w^(ones*'"'), w^(ones*'\\'), w^(ones*'[')
		if ((w-ones*0x20)&^w|(q-ones)&^q|(b-ones)&^b|(k-ones)&^k|w)&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '[' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Seek moves the scanner to a byte offset previously returned by Offset.
func (s *Scanner) Seek(offset int) { s.pos = offset }
