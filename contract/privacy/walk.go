package privacy

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// kindBinary marks a Value (in Str) or a Token (in Text) holding binary
// data, a Go []byte. It is written as base64, as encoding/json writes
// []byte.
const kindBinary jsonw.Kind = 'b'

// keyClass is how an object key steers the walk.
type keyClass uint8

const (
	keyOther keyClass = iota
	keyStructural
	keyContent
)

// longestKey is the length of the longest structural or content key,
// system_instruction.
const longestKey = 18

// classifyKey classifies a key, compared lower-cased.
func classifyKey(name string) keyClass {
	// Lower-casing shrinks a character by at most a factor of 3 (the
	// Kelvin sign to k): a longer name is no key of the lists.
	if len(name) > 3*longestKey {
		return keyOther
	}
	switch jsstring.Lower(name) {
	case "api", "id", "model", "name", "role", "stopreason", "stop_reason", "toolcallid", "tool_call_id", "type":
		return keyStructural
	case "arguments", "content", "contents", "context", "description", "input", "instructions", "messages",
		"metadata", "parts", "prompt", "requestmetadata", "system", "system_instruction", "systeminstruction",
		"systemprompt", "text", "thinking", "toolconfig", "tools":
		return keyContent
	}
	return keyOther
}

// openMarker is one entry of the marker stack: the class of an opening
// marker, the string it is in, and the highest class of it and every entry
// below it.
type openMarker struct {
	class, upto Classification
	in          int
}

// floorState tracks marker structure across the strings of a payload, in
// walk order. Open markers form a stack: an opening marker while others
// are open raises the floor to every open class and its own and is
// pushed; a closing marker pops the top entry, and raises the floor to
// both classes unless the entry is of its class and in the same string;
// markers still open at the end raise the floor to their classes.
type floorState struct {
	floor   Classification // "" while no anomaly was seen
	open    []openMarker
	markers []marker
	pairs   []pair
	next    []int32 // findPairs' scratch
	strings int     // strings scanned so far: the index of the next one
	// marked has a bit set for each token (by index) that is a string or
	// a member name holding a marker, once of has run.
	marked []uint64
}

func (f *floorState) raise(cs ...Classification) {
	for _, c := range cs {
		f.floor = Max(f.floor, c)
	}
}

// value feeds the markers of the next string value.
func (f *floorState) value(s string) {
	idx := f.strings
	f.strings++
	f.markers = findMarkers(f.markers[:0], s)
	for _, m := range f.markers {
		n := len(f.open)
		switch {
		case !m.closing:
			upto := m.class
			if n > 0 {
				upto = Max(upto, f.open[n-1].upto)
				f.raise(upto) // nesting
			}
			f.open = append(f.open, openMarker{class: m.class, upto: upto, in: idx})
		case n == 0:
			f.raise(m.class) // stray close
		default:
			top := f.open[n-1]
			f.open = f.open[:n-1]
			if top.class != m.class || top.in != idx {
				f.raise(top.class, m.class) // mismatched close, or a pair split across strings
			}
		}
	}
}

// name feeds a member name, anywhere in the payload: every opening marker
// that does not begin a closed pair of the name (an unclosed or leading
// marker, or one nested inside another pair) raises the floor to its
// class. A name's markers do not enter the stack.
func (f *floorState) name(s string) {
	f.markers = findMarkers(f.markers[:0], s)
	if len(f.markers) == 0 {
		return
	}
	f.pairs = findPairs(f.pairs[:0], f.markers, &f.next)
	p := 0
	for _, m := range f.markers {
		if m.closing {
			continue
		}
		for p < len(f.pairs) && f.pairs[p].open.start < m.start {
			p++
		}
		if p < len(f.pairs) && f.pairs[p].open.start == m.start {
			continue // opens a closed pair
		}
		f.raise(m.class)
	}
}

// finish returns the floor, counting every marker left open at the end.
func (f *floorState) finish() Classification {
	if n := len(f.open); n > 0 {
		f.raise(f.open[n-1].upto)
	}
	return f.floor
}

// markerFloor computes the marker-structure floor of a flattened payload:
// the highest class involved in nesting, a stray or mismatched close, a
// pair split across strings or a marker left open, or held by an opening
// marker outside a closed pair in a member name (anywhere in the payload);
// "" when there is none. The tokens are in walk order, so one pass over
// them feeds the strings in the order the stack needs. Without names, the
// member names are left out, as the TypeScript kit's floor leaves them.
func markerFloor(toks []jsonw.Token, names bool) Classification {
	var f floorState
	return f.of(toks, names)
}

// of is markerFloor, using f's working space; f must be fresh or reset.
// It also records in f.marked which strings and names hold a marker.
func (f *floorState) of(toks []jsonw.Token, names bool) Classification {
	f.marked = slices.Grow(f.marked[:0], (len(toks)+63)/64)[:(len(toks)+63)/64]
	clear(f.marked)
	for i := range toks {
		switch t := &toks[i]; {
		case t.Kind == jsonw.String && !t.Bracket:
			f.strings++ // no marker starts without a '['
			continue
		case t.Kind == jsonw.String:
			f.value(t.Text)
		case t.Kind == jsonw.Name && t.Bracket && names:
			f.name(t.Text)
		case t.Kind == jsonw.Name && t.Bracket:
			f.markers = findMarkers(f.markers[:0], t.Text)
		default:
			continue
		}
		// value and name leave the token's markers in f.markers.
		if len(f.markers) > 0 {
			f.marked[i/64] |= 1 << (i % 64)
		}
	}
	return f.finish()
}

// isMarked reports whether token i holds a marker, by marked as of
// records it.
func isMarked(marked []uint64, i int) bool { return marked[i/64]&(1<<(i%64)) != 0 }

// work is the working space of one sanitisation: the tokens, the floor's
// and the walker's. It is kept in a pool between sanitisations, so that
// sanitising many payloads allocates little beyond each result; release
// lets go of everything that refers to a payload before it goes back.
type work struct {
	walker
	floor floorState
	flat  jsonw.Flattener
	doc   []byte // the engine's copy of a payload given as JSON
}

var workPool = sync.Pool{New: func() any { return new(work) }}

// maxKeptTokens, maxKeptText and maxKeptDoc bound the token buffer, the
// text buffers and the document copy a released work keeps: a huge
// payload's are left to the collector.
const (
	maxKeptTokens = 1 << 16
	maxKeptText   = 64 << 10
	maxKeptDoc    = 4 << 20
)

func getWork() *work { return workPool.Get().(*work) }

// oversized reports whether a buffer of capacity c, of which this
// sanitisation used n, is not worth keeping: above max, or above small and
// more than eight times what was used. A buffer a large payload grew is
// given back once smaller ones follow: the token buffer holds pointers,
// and the collector scans all of it while it is kept.
func oversized(c, n, max, small int) bool {
	return c > max || (c > small && c > 8*n)
}

// release resets w and puts it back in the pool.
func (w *work) release() {
	w.reset()
	workPool.Put(w)
}

// reset readies w for another sanitisation. The tokens and names refer to
// the payload, and the sanitiser's buffer holds its text: the parts of
// them this sanitisation used are cleared (the rest already is); the
// result (w.out) belongs to the caller and is let go of.
func (w *work) reset() {
	clear(w.toks)
	toks := w.toks
	if oversized(cap(toks), len(toks), maxKeptTokens, 1<<10) {
		toks = nil
	}
	names := w.names[:cap(w.names)]
	clear(names)
	clear(w.buf[:w.used])
	buf := w.buf
	if cap(buf) > maxKeptText {
		buf = nil
	}
	var secret [2][]byte
	for i, b := range w.secret {
		clear(b[:w.secretUsed[i]])
		if cap(b) <= maxKeptText {
			secret[i] = b[:0]
		}
	}
	clear(w.doc)
	doc := w.doc[:0]
	if oversized(cap(w.doc), len(w.doc), maxKeptDoc, 64<<10) {
		doc = nil
	}
	*w = work{
		walker: walker{toks: toks[:0], names: names[:0], spans: w.spans[:0], nameToks: w.nameToks[:0],
			sanitizer: sanitizer{markers: w.markers[:0], pairs: w.pairs[:0], next: w.sanitizer.next, buf: buf[:0], secret: secret}},
		floor: floorState{open: w.floor.open[:0], markers: w.floor.markers[:0], pairs: w.floor.pairs[:0], next: w.floor.next, marked: w.floor.marked[:0]},
		flat:  w.flat,
		doc:   doc,
	}
}

// walker sanitises a flattened payload and writes the result as
// JSON.stringify writes it, in one pass over the tokens.
type walker struct {
	sanitizer
	st     textStats
	toks   []jsonw.Token
	marked []uint64 // which tokens hold a marker (floorState.marked)
	next   int      // the token to read next
	out    []byte   // the JSON written so far
	// The objects being written, outermost first: each member's offset
	// in out and name token, and the names written from an object's first
	// changed one on.
	spans    []int
	nameToks []int
	names    []string
}

// value sanitises and writes the next value. key classifies the member
// name it is the value of (array items inherit their array's); ctx
// reports content context.
func (w *walker) value(key keyClass, ctx bool) {
	i := w.next
	t := &w.toks[i]
	w.next++
	switch t.Kind {
	case jsonw.String:
		s := t.Text
		if marked := isMarked(w.marked, i); (ctx && key != keyStructural) || marked {
			s = w.text(s, marked, &w.st)
		}
		w.str(s, t)
	case kindBinary:
		data := t.Text
		if ctx && !w.allows(w.def) {
			data = ""
			w.st.blocked++
			w.st.changed = true
		}
		w.out = append(w.out, '"')
		w.out = base64.StdEncoding.AppendEncode(w.out, []byte(data))
		w.out = append(w.out, '"')
	case jsonw.Array:
		w.out = append(w.out, '[')
		for i := range t.N {
			if i > 0 {
				w.out = append(w.out, ',')
			}
			w.value(key, ctx)
		}
		w.out = append(w.out, ']')
	case jsonw.Object:
		w.object(t.N, ctx)
	default:
		w.out = append(w.out, t.Text...)
	}
}

// str writes s, the sanitised text of token t: t's own literal when s is
// its text unchanged and the literal held no escape, else s written as
// JSON.stringify writes it.
func (w *walker) str(s string, t *jsonw.Token) {
	// One store of w.out per string (each store of a pointer costs a
	// write barrier while the collector marks).
	out := w.out
	if t.Verbatim && s == t.Text {
		out = append(out, '"')
		out = append(out, s...)
		w.out = append(out, '"')
		return
	}
	w.out = jsonw.AppendString(out, s)
}

// object sanitises and writes an object of n members in content context
// ctx. A name that collides with an earlier one after sanitising gets
// "_<index>" appended until it is unique; when a sanitised name is an
// array index, the members written are put back in JavaScript property
// order. Until a name changes, the names are read from the tokens; from
// the first change on, the names written are kept in w.names.
func (w *walker) object(n int, ctx bool) {
	start := len(w.out)
	w.out = append(w.out, '{')
	base, baseNames := len(w.spans), len(w.names)
	var taken map[string]struct{} // built once a name has changed
	for idx := range n {
		ni := w.next
		nt := &w.toks[ni]
		w.next++
		kc := classifyKey(nt.Text)
		name := nt.Text
		if marked := isMarked(w.marked, ni); (ctx && kc == keyOther) || marked {
			// The name is kept until the object is written: a copy, not a
			// view of the sanitiser's buffers.
			if name = w.text(name, marked, &w.st); unsafe.StringData(name) != unsafe.StringData(nt.Text) {
				name = strings.Clone(name)
			}
		}
		if taken == nil && name != nt.Text {
			taken = make(map[string]struct{}, n)
			for _, t := range w.nameToks[base:] {
				taken[w.toks[t].Text] = struct{}{}
			}
		}
		if taken != nil {
			_, dup := taken[name]
			for dup {
				name += "_" + strconv.Itoa(idx)
				_, dup = taken[name]
			}
			taken[name] = struct{}{}
			w.names = append(w.names, name)
		}
		if idx > 0 {
			w.out = append(w.out, ',')
		}
		w.spans = append(w.spans, len(w.out))
		w.nameToks = append(w.nameToks, ni)
		w.str(name, nt)
		w.out = append(w.out, ':')
		w.value(kc, ctx || kc == keyContent)
	}
	w.out = append(w.out, '}')
	if taken != nil {
		names := w.names[baseNames:]
		all := make([]string, 0, n)
		for _, t := range w.nameToks[base : len(w.spans)-len(names)] {
			all = append(all, w.toks[t].Text)
		}
		w.order(start, append(all, names...), w.spans[base:])
	}
	w.spans, w.nameToks, w.names = w.spans[:base], w.nameToks[:base], w.names[:baseNames]
}

// order puts the members of the object written at w.out[start:] in
// JavaScript property order, as an object built by assigning them in turn
// holds them: array-index names first in ascending order, then the others
// in their order. names and spans hold each member's name and offset.
func (w *walker) order(start int, names []string, spans []int) {
	if !slices.ContainsFunc(names, func(n string) bool { _, ok := jsonw.ArrayIndex(n); return ok }) {
		return // already in order: only the names written changed
	}
	// Each member's JSON (name, colon and value) rides in Value.Str, so
	// that OrderMembers can sort the members by name.
	ms := make([]jsonw.Member, len(names))
	for i, name := range names {
		end := len(w.out) - 1 // the closing brace
		if i+1 < len(spans) {
			end = spans[i+1] - 1 // the comma
		}
		ms[i] = jsonw.Member{Name: name, Value: jsonw.Value{Str: string(w.out[spans[i]:end])}}
	}
	jsonw.OrderMembers(ms)
	w.out = append(w.out[:start], '{')
	for i, m := range ms {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		w.out = append(w.out, m.Value.Str...)
	}
	w.out = append(w.out, '}')
}

// write writes the next value as it is (a disabled configuration), binary
// data as base64.
func (w *walker) write() {
	t := &w.toks[w.next]
	w.next++
	switch t.Kind {
	case jsonw.String:
		w.str(t.Text, t)
	case kindBinary:
		w.out = append(w.out, '"')
		w.out = base64.StdEncoding.AppendEncode(w.out, []byte(t.Text))
		w.out = append(w.out, '"')
	case jsonw.Array, jsonw.Object:
		open, closing := byte('['), byte(']')
		if t.Kind == jsonw.Object {
			open, closing = '{', '}'
		}
		w.out = append(w.out, open)
		for i := range t.N {
			if i > 0 {
				w.out = append(w.out, ',')
			}
			if t.Kind == jsonw.Object {
				w.str(w.toks[w.next].Text, &w.toks[w.next])
				w.next++
				w.out = append(w.out, ':')
			}
			w.write()
		}
		w.out = append(w.out, closing)
	default:
		w.out = append(w.out, t.Text...)
	}
}
