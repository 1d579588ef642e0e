package jsonw

import (
	"strconv"
	"unsafe"
)

// Name is the Kind of a Token holding a member name.
const Name Kind = ':'

// Token is one item of a flattened document: the values in document order,
// each container before its contents, and each object member as a Name
// token followed by the tokens of its value.
type Token struct {
	Kind Kind
	// Verbatim is set on a String or Name whose JSON literal in the
	// document is '"' + Text + '"': it held no escape, so the literal is
	// already written as JSON.stringify writes Text.
	Verbatim bool
	// Bracket is set on a String or Name whose text holds a '[', so that a
	// reader looking for bracketed tags can pass over the others.
	Bracket bool
	// N is the number of members of an Object or items of an Array.
	N int
	// Text is the decoded text of a String or Name, the literal JavaScript
	// writes for a Number, and "true", "false" or "null".
	Text string
}

// Flatten appends the tokens of the JSON document doc to dst, validating
// it as Parse does (the same errors). Strings without escapes are
// substrings of doc, not copies. Numbers are given as JSON.stringify
// writes them after JSON.parse: 1.0 as "1", 1e2 as "100".
//
// ordered reports whether the tokens are also in JavaScript property order
// with unique names, as JSON.parse would leave the document; when some
// object holds an array-index name or a repeated name, it is false and the
// document should be read with Parse instead, which orders members.
func Flatten(dst []Token, doc string) (toks []Token, ordered bool, err error) {
	var f Flattener
	return f.Flatten(dst, doc)
}

// A Flattener flattens documents as Flatten does, keeping its working
// space (the names of the objects being read, the unescape buffer) from
// one document to the next, so that flattening many documents allocates
// little beyond the tokens. Its zero value is ready to use; it is not safe
// for concurrent use, and it keeps no part of a document after Flatten
// returns.
type Flattener struct {
	names   []int
	scratch []byte
}

// Flatten is Flatten, using f's working space.
func (f *Flattener) Flatten(dst []Token, doc string) (toks []Token, ordered bool, err error) {
	// The scanner only reads its data, so viewing the (immutable) string as
	// bytes is safe.
	fl := flattener{s: Scanner{data: unsafe.Slice(unsafe.StringData(doc), len(doc)), scratch: f.scratch}, doc: doc, toks: dst, ordered: true, names: f.names[:0]}
	defer func() {
		f.names, f.scratch = fl.names[:0], fl.s.scratch
		if cap(f.scratch) > maxKeptScratch {
			f.scratch = nil
		}
	}()
	if err := fl.value(0); err != nil {
		return dst, false, err
	}
	if err := fl.s.End(); err != nil {
		return dst, false, err
	}
	return fl.toks, fl.ordered, nil
}

type flattener struct {
	s       Scanner
	doc     string
	toks    []Token
	ordered bool
	// names holds the name tokens (indexes into toks) of the objects being
	// read, outermost first: indexes rather than the names themselves, so
	// that keeping them stores no pointer.
	names []int
}

// maxLinearNames is the size up to which an object's names are checked for
// repeats by comparison rather than with a map.
const maxLinearNames = 8

func (f *flattener) value(depth int) error {
	s := &f.s
	if depth > MaxDepth {
		return s.syntax("nesting too deep")
	}
	switch k := s.Peek(); k {
	case Object:
		// The object's names are dropped from f.names when it is read.
		base := len(f.names)
		err := f.object(depth, base)
		f.names = f.names[:base]
		return err
	case Array:
		at := len(f.toks)
		f.toks = append(f.toks, Token{Kind: Array})
		empty, err := s.open(Array, ']')
		if empty || err != nil {
			return err
		}
		for n := 1; ; n++ {
			if err := f.value(depth + 1); err != nil {
				return err
			}
			more, err := s.more(']', "array")
			if err != nil {
				return err
			}
			if !more {
				f.toks[at].N = n
				return nil
			}
		}
	case String:
		_, err := f.str(String)
		return err
	case Number:
		start := s.pos
		if err := s.skipNumber(); err != nil {
			return err
		}
		lit := f.doc[start:s.pos]
		if !plainInteger(lit) {
			v, err := strconv.ParseFloat(lit, 64)
			if err != nil {
				s.pos = start
				return s.syntax("number out of range")
			}
			b, _ := AppendNumber(nil, v) // finite: ParseFloat succeeded
			lit = string(b)
		}
		f.toks = append(f.toks, Token{Kind: Number, Text: lit})
		return nil
	case Bool:
		b, err := s.Bool()
		f.toks = append(f.toks, Token{Kind: Bool, Text: strconv.FormatBool(b)})
		return err
	case Null:
		_, err := s.Null()
		f.toks = append(f.toks, Token{Kind: Null, Text: "null"})
		return err
	}
	return s.expect(Null)
}

// object reads an object at the scanner's offset, whose names go after
// f.names[base].
func (f *flattener) object(depth, base int) error {
	s := &f.s
	at := len(f.toks)
	f.toks = append(f.toks, Token{Kind: Object})
	empty, err := s.open(Object, '}')
	if empty || err != nil {
		return err
	}
	var seen map[string]struct{}
	for n := 1; ; n++ {
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.syntax("expected a member name")
		}
		name, err := f.str(Name)
		if err != nil {
			return err
		}
		if f.ordered {
			f.checkName(name, len(f.toks)-1, base, &seen)
		}
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.syntax("expected ':' after a member name")
		}
		s.pos++
		if err := f.value(depth + 1); err != nil {
			return err
		}
		more, err := s.more('}', "object")
		if err != nil {
			return err
		}
		if !more {
			f.toks[at].N = n
			return nil
		}
	}
}

// str reads the string literal at the scanner's offset as a token of kind
// k and returns its text.
func (f *flattener) str(k Kind) (string, error) {
	s := &f.s
	start := s.pos + 1
	b, err := s.stringBytes()
	if err != nil {
		return "", err
	}
	t := Token{Kind: k, Bracket: s.bracket}
	if s.pos-1-start == len(b) {
		// The literal's content is as long as its text: it held no escape
		// (every escape is longer than what it stands for), and b is the
		// document's own bytes.
		t.Text, t.Verbatim = f.doc[start:s.pos-1], true
	} else {
		t.Text = string(b)
	}
	f.toks = append(f.toks, t)
	return t.Text, nil
}

// checkName clears f.ordered when name, the text of token at, is an array
// index or repeats a name of the object whose names start at
// f.names[base].
func (f *flattener) checkName(name string, at, base int, seen *map[string]struct{}) {
	if _, ok := ArrayIndex(name); ok {
		f.ordered = false
		return
	}
	if *seen != nil {
		if _, dup := (*seen)[name]; dup {
			f.ordered = false
		}
		(*seen)[name] = struct{}{}
		return
	}
	for _, n := range f.names[base:] {
		if f.toks[n].Text == name {
			f.ordered = false
			return
		}
	}
	f.names = append(f.names, at)
	if len(f.names)-base > maxLinearNames {
		*seen = make(map[string]struct{}, 2*maxLinearNames)
		for _, n := range f.names[base:] {
			(*seen)[f.toks[n].Text] = struct{}{}
		}
	}
}

// plainInteger reports whether a valid JSON number literal is an integer
// that JavaScript writes back exactly as it is: no fraction or exponent,
// at most 15 digits (below 2^53), and not negative zero.
func plainInteger(lit string) bool {
	digits := lit
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 15 || lit == "-0" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// ParseString is Parse of a document held in a string.
func ParseString(doc string) (Value, error) {
	return Parse(unsafe.Slice(unsafe.StringData(doc), len(doc)))
}
