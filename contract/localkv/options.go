package localkv

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// ErrNotPlainJSON reports a value that has no single, faithful JSON form:
// a function, channel, binary data, a non-finite number, a cycle, a struct or
// pointer, an integer a JSON number cannot carry exactly, a string that is not
// valid UTF-8, or raw JSON that is malformed.
var ErrNotPlainJSON = errors.New("localkv: value is not plain JSON")

// JSONNull is the JSON null value. Use it (or json.RawMessage("null")) to give
// an option the value null, which hashes differently from leaving it absent.
type JSONNull struct{}

// cycleCheckDepth is the nesting depth after which containers are tracked to
// detect cycles. A cycle always nests without bound, so checking only deep
// paths finds every cycle while keeping ordinary options free of bookkeeping.
const cycleCheckDepth = 512

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// container identifies a map or slice on the current path: its data pointer
// and, for slices, its length (a slice and its prefix share the pointer).
type container struct {
	ptr uintptr
	len int
}

type converter struct {
	path map[container]struct{}
}

// plainJSON converts a plain JSON Go value into a JSON value tree, or fails
// with ErrNotPlainJSON.
func plainJSON(v any) (jsonw.Value, error) {
	var c converter
	return c.value(v, 0)
}

func (c *converter) value(v any, depth int) (jsonw.Value, error) {
	if depth > jsonw.MaxDepth {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	switch x := v.(type) {
	case nil, JSONNull:
		return jsonw.Value{Kind: jsonw.Null}, nil
	case bool:
		return jsonw.Value{Kind: jsonw.Bool, Bool: x}, nil
	case string:
		return stringValue(x)
	case float64:
		return floatValue(x)
	case int:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case json.Number:
		return numberValue(x)
	case json.RawMessage:
		return rawValue(x)
	case []byte:
		return jsonw.Value{}, ErrNotPlainJSON // binary
	case map[string]any:
		if x == nil {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		if depth >= cycleCheckDepth {
			return c.object(reflect.ValueOf(x), depth)
		}
		// Shallow, the common case: no reflection and no cycle bookkeeping.
		ms := make([]jsonw.Member, 0, len(x))
		for name, elem := range x {
			if !utf8.ValidString(name) {
				return jsonw.Value{}, ErrNotPlainJSON
			}
			child, err := c.value(elem, depth+1)
			if err != nil {
				return jsonw.Value{}, err
			}
			ms = append(ms, jsonw.Member{Name: name, Value: child})
		}
		return jsonw.Value{Kind: jsonw.Object, Members: ms}, nil
	case []any:
		if x == nil {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		if depth >= cycleCheckDepth {
			return c.array(reflect.ValueOf(x), depth)
		}
		items := make([]jsonw.Value, len(x))
		for i, elem := range x {
			child, err := c.value(elem, depth+1)
			if err != nil {
				return jsonw.Value{}, err
			}
			items[i] = child
		}
		return jsonw.Value{Kind: jsonw.Array, Items: items}, nil
	}
	return c.reflected(reflect.ValueOf(v), depth)
}

// reflected handles the plain JSON kinds under other Go types: named basic
// types, typed maps with string keys, typed slices and arrays.
func (c *converter) reflected(rv reflect.Value, depth int) (jsonw.Value, error) {
	t := rv.Type()
	// A type with its own JSON or text form would hash as its Go value while
	// encoding/json writes something else: not faithful, so not plain.
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	switch rv.Kind() {
	case reflect.Bool:
		return jsonw.Value{Kind: jsonw.Bool, Bool: rv.Bool()}, nil
	case reflect.String:
		return stringValue(rv.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intValue(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return uintValue(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return floatValue(rv.Float())
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return jsonw.Value{}, ErrNotPlainJSON
		}
		if rv.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		return c.object(rv, depth)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return jsonw.Value{}, ErrNotPlainJSON // binary
		}
		if rv.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		return c.array(rv, depth)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return jsonw.Value{}, ErrNotPlainJSON // binary
		}
		return c.array(rv, depth)
	}
	// Func, Chan, Complex, Pointer, Struct, UnsafePointer, Uintptr, Interface
	// holding nothing representable.
	return jsonw.Value{}, ErrNotPlainJSON
}

func (c *converter) enter(rv reflect.Value, depth int) (container, bool) {
	if depth < cycleCheckDepth || rv.Kind() == reflect.Array {
		return container{}, true
	}
	k := container{ptr: uintptr(rv.UnsafePointer())}
	if rv.Kind() == reflect.Slice {
		k.len = rv.Len()
	}
	if _, seen := c.path[k]; seen {
		return k, false
	}
	if c.path == nil {
		c.path = make(map[container]struct{})
	}
	c.path[k] = struct{}{}
	return k, true
}

func (c *converter) leave(k container, depth int) {
	if depth >= cycleCheckDepth && c.path != nil {
		delete(c.path, k)
	}
}

func (c *converter) object(rv reflect.Value, depth int) (jsonw.Value, error) {
	k, ok := c.enter(rv, depth)
	if !ok {
		return jsonw.Value{}, ErrNotPlainJSON // cycle
	}
	defer c.leave(k, depth)
	ms := make([]jsonw.Member, 0, rv.Len())
	it := rv.MapRange()
	for it.Next() {
		name := it.Key().String()
		if !utf8.ValidString(name) {
			return jsonw.Value{}, ErrNotPlainJSON
		}
		child, err := c.value(it.Value().Interface(), depth+1)
		if err != nil {
			return jsonw.Value{}, err
		}
		ms = append(ms, jsonw.Member{Name: name, Value: child})
	}
	// Map order is random; the stable writer sorts members by name.
	return jsonw.Value{Kind: jsonw.Object, Members: ms}, nil
}

func (c *converter) array(rv reflect.Value, depth int) (jsonw.Value, error) {
	k, ok := c.enter(rv, depth)
	if !ok {
		return jsonw.Value{}, ErrNotPlainJSON // cycle
	}
	defer c.leave(k, depth)
	n := rv.Len()
	items := make([]jsonw.Value, n)
	for i := range n {
		child, err := c.value(rv.Index(i).Interface(), depth+1)
		if err != nil {
			return jsonw.Value{}, err
		}
		items[i] = child
	}
	return jsonw.Value{Kind: jsonw.Array, Items: items}, nil
}

func stringValue(s string) (jsonw.Value, error) {
	if !utf8.ValidString(s) {
		// Invalid bytes would be written as U+FFFD and collide with it.
		return jsonw.Value{}, ErrNotPlainJSON
	}
	return jsonw.Value{Kind: jsonw.String, Str: s}, nil
}

func floatValue(f float64) (jsonw.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	return jsonw.Value{Kind: jsonw.Number, Num: f}, nil
}

// intValue accepts integers a double carries exactly: a Go integer that
// JSON would round is a different value and must not share its hash.
func intValue(i int64) (jsonw.Value, error) {
	f := float64(i)
	if f >= 0x1p63 || int64(f) != i {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	return jsonw.Value{Kind: jsonw.Number, Num: f}, nil
}

func uintValue(u uint64) (jsonw.Value, error) {
	f := float64(u)
	if f >= 0x1p64 || uint64(f) != u {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	return jsonw.Value{Kind: jsonw.Number, Num: f}, nil
}

// numberValue reads a json.Number as JSON text is read: strict JSON number
// syntax, rounded to the nearest double (as JSON.parse does), finite.
func numberValue(n json.Number) (jsonw.Value, error) {
	if n == "" || (n[0] != '-' && (n[0] < '0' || n[0] > '9')) {
		return jsonw.Value{}, ErrNotPlainJSON // also refuses leading whitespace
	}
	s := jsonw.NewScanner([]byte(n))
	f, err := s.Number()
	if err != nil || s.Offset() != len(n) {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	return floatValue(f)
}

// rawValue parses raw JSON text strictly. Text with a lone surrogate escape
// ("\ud800") is refused: it has no UTF-8 form, so it cannot be hashed as the
// UTF-8 a valid string option hashes as.
func rawValue(raw json.RawMessage) (jsonw.Value, error) {
	if jsonw.HasLoneSurrogateEscape(raw) {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	v, err := jsonw.Parse(raw)
	if err != nil {
		return jsonw.Value{}, ErrNotPlainJSON
	}
	return v, nil
}
