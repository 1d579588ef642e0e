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

// floorState tracks marker structure across the strings of a payload, in
// walk order. One marker may be open at a time; a pair must open and close
// in the same string.
type floorState struct {
	floor     Classification // "" while no anomaly was seen
	open      Classification // "" when no marker is open
	openIn    int            // index of the string the open marker is in
	markers   []marker
	stringIdx int
}

func (f *floorState) raise(cs ...Classification) {
	for _, c := range cs {
		f.floor = Max(f.floor, c)
	}
}

// scan feeds the markers of string number idx.
func (f *floorState) scan(s string, idx int) {
	f.markers = findMarkers(f.markers[:0], s)
	for _, m := range f.markers {
		switch {
		case !m.closing:
			if f.open != "" {
				f.raise(f.open, m.class) // nesting
			}
			f.open, f.openIn = m.class, idx
		case f.open == "":
			f.raise(m.class) // stray close
		case f.open != m.class:
			f.raise(f.open, m.class) // mismatched close
			f.open = ""
		default:
			if f.openIn != idx {
				f.raise(m.class) // pair split across strings
			}
			f.open = ""
		}
	}
}

// finish returns the floor, counting a marker left open at the end.
func (f *floorState) finish() Classification {
	if f.open != "" {
		f.raise(f.open)
	}
	return f.floor
}

// markerFloor computes the marker-structure floor of a payload: the
// highest class involved in nesting, a stray or mismatched close, a pair
// split across strings or a marker left open; "" when there is none. Only
// string values count, not keys.
func markerFloor(root jsonw.Value) Classification {
	var f floorState
	var walk func(v jsonw.Value)
	walk = func(v jsonw.Value) {
		switch v.Kind {
		case jsonw.String:
			f.scan(v.Str, f.stringIdx)
			f.stringIdx++
		case jsonw.Array:
			for _, item := range v.Items {
				walk(item)
			}
		case jsonw.Object:
			for _, m := range v.Members {
				walk(m.Value)
			}
		}
	}
	walk(root)
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
