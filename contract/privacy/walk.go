package privacy

import (
	"strconv"

	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// kindBinary marks a Value holding binary data (a Go []byte) in Str. It
// is written as base64, as encoding/json writes []byte.
const kindBinary jsonw.Kind = 'b'

// keyClass is how an object key steers the walk.
type keyClass uint8

const (
	keyOther keyClass = iota
	keyStructural
	keyContent
)

// classifyKey classifies a key, compared lower-cased.
func classifyKey(name string) keyClass {
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
	strings int // strings scanned so far: the index of the next one
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

// name feeds a member name in content context: every opening marker that
// does not begin a closed pair of the name (an unclosed or leading marker,
// or one nested inside another pair) raises the floor to its class. A
// name's markers do not enter the stack.
func (f *floorState) name(s string) {
	f.markers = findMarkers(f.markers[:0], s)
	if len(f.markers) == 0 {
		return
	}
	f.pairs = findPairs(f.pairs[:0], f.markers)
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

// markerFloor computes the marker-structure floor of a payload: the
// highest class involved in nesting, a stray or mismatched close, a pair
// split across strings or a marker left open, or held by an opening
// marker outside a closed pair in a member name in content context; ""
// when there is none.
func markerFloor(root jsonw.Value) Classification {
	var f floorState
	var walk func(v jsonw.Value, ctx bool)
	walk = func(v jsonw.Value, ctx bool) {
		switch v.Kind {
		case jsonw.String:
			f.value(v.Str)
		case jsonw.Array:
			for _, item := range v.Items {
				walk(item, ctx)
			}
		case jsonw.Object:
			for _, m := range v.Members {
				kc := classifyKey(m.Name)
				if ctx {
					f.name(m.Name)
				}
				walk(m.Value, ctx || kc == keyContent)
			}
		}
	}
	walk(root, false)
	return f.finish()
}

// walker sanitises a payload tree.
type walker struct {
	sanitizer
	st textStats
}

// value returns v sanitised, reusing v's storage. key classifies the
// member name v is the value of (array items inherit their array's); ctx
// reports content context.
func (w *walker) value(v jsonw.Value, key keyClass, ctx bool) jsonw.Value {
	switch v.Kind {
	case jsonw.String:
		if (ctx && key != keyStructural) || hasMarker(v.Str) {
			v.Str = w.text(v.Str, &w.st)
		}
	case kindBinary:
		if ctx && !w.allows(w.def) {
			v.Str = ""
			w.st.blocked++
			w.st.changed = true
		}
	case jsonw.Array:
		for i, item := range v.Items {
			v.Items[i] = w.value(item, key, ctx)
		}
	case jsonw.Object:
		v.Members = w.object(v.Members, ctx)
	}
	return v
}

// object sanitises the members of an object in content context ctx. It
// rewrites ms in place: the tree belongs to the call being served.
func (w *walker) object(ms []jsonw.Member, ctx bool) []jsonw.Member {
	out := ms[:0]
	var names map[string]struct{} // built once a name has changed
	for idx, m := range ms {
		kc := classifyKey(m.Name)
		name := m.Name
		if (ctx && kc == keyOther) || hasMarker(name) {
			name = w.text(name, &w.st)
		}
		child := w.value(m.Value, kc, ctx || kc == keyContent)
		if names == nil && name != m.Name {
			names = make(map[string]struct{}, len(ms))
			for _, o := range out {
				names[o.Name] = struct{}{}
			}
		}
		if names != nil {
			_, taken := names[name]
			for taken {
				name += "_" + strconv.Itoa(idx)
				_, taken = names[name]
			}
			names[name] = struct{}{}
		}
		out = append(out, jsonw.Member{Name: name, Value: child})
	}
	if names != nil {
		jsonw.OrderMembers(out)
	}
	return out
}
