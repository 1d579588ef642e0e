package privacy

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unsafe"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// encodePayload turns a payload into the tokens the engine walks, in
// JavaScript property order. A payload that is a byte slice
// (json.RawMessage, []byte, a named byte-slice type, or a pointer to one)
// is one JSON document and is read as such; anything else is encoded by
// reflection, where a byte slice inside the value is binary data.
//
// Reading a top-level byte slice as JSON rather than as binary data is a
// fail-closed choice: a Go program's []byte payload is almost always an
// encoded request body, and binary data outside content context is passed
// through uninspected. Bytes that are not JSON are an error.
//
// A document is copied once into a buffer the engine owns (ws.doc), and
// read from that copy alone, as a string: every pass sees the same bytes
// whatever the caller does with its slice meanwhile, and nothing the
// engine returns refers to the copy. A document already in JavaScript property
// order with unique names (the usual case) is flattened in one scan; any
// other is parsed into a tree, which orders its members, and the tree is
// flattened. It also returns the length of the payload's JSON when it was
// given as JSON, else 0.
//
// The tokens are appended to ws's token buffer, with ws's working space;
// on an error the buffer is cleared whole, since tokens may have been
// written into it.
func encodePayload(payload any, ws *work) (toks []jsonw.Token, size int, err error) {
	defer func() {
		if err != nil {
			clear(ws.toks[:cap(ws.toks)])
		}
	}()
	if raw, ok := jsonw.Document(payload); ok {
		ws.doc = append(ws.doc[:0], raw...)
		doc := unsafe.String(unsafe.SliceData(ws.doc), len(ws.doc))
		toks, ordered, err := ws.flat.Flatten(ws.toks[:0], doc)
		if err != nil {
			// jsonw errors carry an offset and a description, never the text.
			return nil, 0, uninspectable("invalid JSON: %v", err)
		}
		if !ordered {
			v, err := jsonw.ParseString(doc)
			if err != nil {
				return nil, 0, uninspectable("invalid JSON: %v", err)
			}
			clear(toks) // the tree's tokens may be fewer: leave nothing behind
			toks, err = flattenTree(toks[:0], v)
			if err != nil {
				return nil, 0, err
			}
		}
		return toks, len(doc), nil
	}
	e := encoder{path: map[visit]struct{}{}}
	root, err := e.encode(reflect.ValueOf(payload), 0)
	if err != nil {
		return nil, 0, err
	}
	toks, err = flattenTree(ws.toks[:0], root)
	return toks, 0, err
}

// parseJSON parses one JSON document in JavaScript property order.
func parseJSON(raw []byte) (jsonw.Value, error) {
	v, err := jsonw.Parse(raw)
	if err != nil {
		// jsonw errors carry an offset and a description, never the text.
		return jsonw.Value{}, uninspectable("invalid JSON: %v", err)
	}
	return v, nil
}

// flattenTree appends the tokens of a tree to dst: numbers encoded from Go
// values keep their exact literal, binary data is a kindBinary token
// holding the bytes.
func flattenTree(dst []jsonw.Token, v jsonw.Value) ([]jsonw.Token, error) {
	var err error
	switch v.Kind {
	case jsonw.Object:
		dst = append(dst, jsonw.Token{Kind: jsonw.Object, N: len(v.Members)})
		for _, m := range v.Members {
			dst = append(dst, jsonw.Token{Kind: jsonw.Name, Text: m.Name, Bracket: strings.IndexByte(m.Name, '[') >= 0})
			if dst, err = flattenTree(dst, m.Value); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case jsonw.Array:
		dst = append(dst, jsonw.Token{Kind: jsonw.Array, N: len(v.Items)})
		for _, item := range v.Items {
			if dst, err = flattenTree(dst, item); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case jsonw.Number:
		lit := v.Str
		if lit == "" {
			b, err := jsonw.AppendNumber(nil, v.Num)
			if err != nil {
				return dst, uninspectable("non-finite number")
			}
			lit = string(b)
		}
		return append(dst, jsonw.Token{Kind: jsonw.Number, Text: lit}), nil
	case jsonw.String, kindBinary:
		return append(dst, jsonw.Token{Kind: v.Kind, Text: v.Str, Bracket: strings.IndexByte(v.Str, '[') >= 0}), nil
	case jsonw.Bool:
		return append(dst, jsonw.Token{Kind: jsonw.Bool, Text: strconv.FormatBool(v.Bool)}), nil
	case jsonw.Null:
		return append(dst, jsonw.Token{Kind: jsonw.Null, Text: "null"}), nil
	}
	return dst, uninspectable("invalid value")
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// visit identifies a pointer, map or slice on the current encoding path.
type visit struct {
	ptr uintptr
	typ reflect.Type
	n   int
}

// encoder converts a Go value into a tree the way encoding/json would
// encode it, keeping []byte as binary data and refusing anything it cannot
// inspect.
type encoder struct {
	path map[visit]struct{}
}

func (e *encoder) enter(v reflect.Value, n int) (visit, error) {
	k := visit{ptr: uintptr(v.UnsafePointer()), typ: v.Type(), n: n}
	if _, seen := e.path[k]; seen {
		return k, uninspectable("reference cycle through %s", v.Type())
	}
	e.path[k] = struct{}{}
	return k, nil
}

func (e *encoder) encode(v reflect.Value, depth int) (out jsonw.Value, err error) {
	if !v.IsValid() {
		return jsonw.Value{Kind: jsonw.Null}, nil
	}
	if depth > jsonw.MaxDepth {
		return out, uninspectable("nesting deeper than %d", jsonw.MaxDepth)
	}
	t := v.Type()
	if t.Implements(marshalerType) {
		if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		return callMarshalJSON(v, t)
	}
	if t.Kind() != reflect.Pointer && v.CanAddr() && reflect.PointerTo(t).Implements(marshalerType) {
		return callMarshalJSON(v.Addr(), t)
	}
	if t.Implements(textMarshalerType) {
		if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		return callMarshalText(v, t)
	}
	if t.Kind() != reflect.Pointer && v.CanAddr() && reflect.PointerTo(t).Implements(textMarshalerType) {
		return callMarshalText(v.Addr(), t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return jsonw.Value{Kind: jsonw.Bool, Bool: v.Bool()}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := v.Int()
		return jsonw.Value{Kind: jsonw.Number, Num: float64(n), Str: strconv.FormatInt(n, 10)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n := v.Uint()
		return jsonw.Value{Kind: jsonw.Number, Num: float64(n), Str: strconv.FormatUint(n, 10)}, nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return out, uninspectable("non-finite %s", t)
		}
		return jsonw.Value{Kind: jsonw.Number, Num: f, Str: formatFloat(f, t.Bits())}, nil
	case reflect.String:
		if t == numberType {
			return encodeNumber(v.String())
		}
		return jsonw.Value{Kind: jsonw.String, Str: v.String()}, nil
	case reflect.Interface:
		if v.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		return e.encode(v.Elem(), depth+1)
	case reflect.Pointer:
		if v.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		k, err := e.enter(v, 0)
		if err != nil {
			return out, err
		}
		defer delete(e.path, k)
		return e.encode(v.Elem(), depth+1)
	case reflect.Map:
		if v.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		k, err := e.enter(v, 0)
		if err != nil {
			return out, err
		}
		defer delete(e.path, k)
		return e.encodeMap(v, depth)
	case reflect.Slice:
		if v.IsNil() {
			return jsonw.Value{Kind: jsonw.Null}, nil
		}
		if isByteSlice(t) {
			return jsonw.Value{Kind: kindBinary, Str: string(v.Bytes())}, nil
		}
		if v.Len() > 0 {
			k, err := e.enter(v, v.Len())
			if err != nil {
				return out, err
			}
			defer delete(e.path, k)
		}
		return e.encodeList(v, depth)
	case reflect.Array:
		return e.encodeList(v, depth)
	case reflect.Struct:
		return e.encodeStruct(v, depth)
	}
	return out, uninspectable("unsupported type %s", t)
}

// isByteSlice reports whether encoding/json would write t as base64: a
// slice of a byte kind whose pointer is neither kind of marshaler.
func isByteSlice(t reflect.Type) bool {
	if t.Elem().Kind() != reflect.Uint8 {
		return false
	}
	p := reflect.PointerTo(t.Elem())
	return !p.Implements(marshalerType) && !p.Implements(textMarshalerType)
}

func callMarshalJSON(v reflect.Value, t reflect.Type) (out jsonw.Value, err error) {
	defer func() {
		if recover() != nil {
			err = uninspectable("json.Marshaler of %s panicked", t)
		}
	}()
	b, merr := v.Interface().(json.Marshaler).MarshalJSON()
	if merr != nil {
		// The marshaler's own error may quote payload text: leave it out.
		return out, uninspectable("json.Marshaler of %s failed", t)
	}
	return parseJSON(b)
}

func callMarshalText(v reflect.Value, t reflect.Type) (out jsonw.Value, err error) {
	defer func() {
		if recover() != nil {
			err = uninspectable("encoding.TextMarshaler of %s panicked", t)
		}
	}()
	b, merr := v.Interface().(encoding.TextMarshaler).MarshalText()
	if merr != nil {
		return out, uninspectable("encoding.TextMarshaler of %s failed", t)
	}
	return jsonw.Value{Kind: jsonw.String, Str: string(b)}, nil
}

// encodeNumber encodes a json.Number: its literal, which must be a JSON
// number ("" is written as 0, as encoding/json does).
func encodeNumber(s string) (jsonw.Value, error) {
	if s == "" {
		s = "0"
	}
	v, err := jsonw.Parse([]byte(s))
	if err != nil || v.Kind != jsonw.Number {
		return jsonw.Value{}, uninspectable("json.Number is not a JSON number")
	}
	v.Str = s
	return v, nil
}

// formatFloat writes f as encoding/json does (the shortest decimal that
// round-trips at the float's own size, exponent form outside [1e-6, 1e21)).
func formatFloat(f float64, bits int) string {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, bits)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}

func (e *encoder) encodeList(v reflect.Value, depth int) (jsonw.Value, error) {
	items := make([]jsonw.Value, v.Len())
	for i := range items {
		item, err := e.encode(v.Index(i), depth+1)
		if err != nil {
			return jsonw.Value{}, err
		}
		items[i] = item
	}
	return jsonw.Value{Kind: jsonw.Array, Items: items}, nil
}

// mapKey returns the member name encoding/json gives a map key.
func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if k.Type().Implements(textMarshalerType) {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		v, err := callMarshalText(k, k.Type())
		return v.Str, err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", uninspectable("unsupported map key type %s", k.Type())
}

// encodeMap encodes a map with its keys sorted as encoding/json sorts
// them, then puts the members in JavaScript property order.
func (e *encoder) encodeMap(v reflect.Value, depth int) (jsonw.Value, error) {
	type kv struct {
		name string
		val  reflect.Value
	}
	entries := make([]kv, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		name, err := mapKey(it.Key())
		if err != nil {
			return jsonw.Value{}, err
		}
		entries = append(entries, kv{name, it.Value()})
	}
	slices.SortFunc(entries, func(a, b kv) int { return strings.Compare(a.name, b.name) })
	ms := make([]jsonw.Member, 0, len(entries))
	for _, en := range entries {
		val, err := e.encode(en.val, depth+1)
		if err != nil {
			return jsonw.Value{}, err
		}
		ms = append(ms, jsonw.Member{Name: en.name, Value: val})
	}
	return jsonw.Value{Kind: jsonw.Object, Members: jsMembers(ms)}, nil
}

// jsMembers gives members the shape JSON.parse gives them: a repeated name
// keeps its first position and its last value, and array-index names come
// first.
func jsMembers(ms []jsonw.Member) []jsonw.Member {
	if len(ms) > 1 {
		seen := make(map[string]int, len(ms))
		out := ms[:0]
		for _, m := range ms {
			if i, dup := seen[m.Name]; dup {
				out[i].Value = m.Value
				continue
			}
			seen[m.Name] = len(out)
			out = append(out, m)
		}
		ms = out
	}
	jsonw.OrderMembers(ms)
	return ms
}

// field is one encoded struct field, resolved as encoding/json resolves
// field names, tags and embedding.
type field struct {
	name      string
	tagged    bool
	index     []int
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
	quoted    bool
}

var fieldCache sync.Map // reflect.Type -> []field

func (e *encoder) encodeStruct(v reflect.Value, depth int) (jsonw.Value, error) {
	fields := cachedFields(v.Type())
	ms := make([]jsonw.Member, 0, len(fields))
fields:
	for i := range fields {
		f := &fields[i]
		fv := v
		for _, x := range f.index {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue fields
				}
				fv = fv.Elem()
			}
			fv = fv.Field(x)
		}
		if f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZeroValue(fv) {
			continue
		}
		val, err := e.encode(fv, depth+1)
		if err != nil {
			return jsonw.Value{}, err
		}
		if f.quoted {
			val = quote(val)
		}
		ms = append(ms, jsonw.Member{Name: f.name, Value: val})
	}
	return jsonw.Value{Kind: jsonw.Object, Members: jsMembers(ms)}, nil
}

// quote applies the ",string" option: scalars are written inside a string.
func quote(v jsonw.Value) jsonw.Value {
	switch v.Kind {
	case jsonw.String:
		return jsonw.Value{Kind: jsonw.String, Str: string(jsonw.AppendString(nil, v.Str))}
	case jsonw.Number:
		return jsonw.Value{Kind: jsonw.String, Str: v.Str}
	case jsonw.Bool:
		return jsonw.Value{Kind: jsonw.String, Str: strconv.FormatBool(v.Bool)}
	}
	return v
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

func isZeroValue(v reflect.Value) bool {
	if !v.CanInterface() {
		return v.IsZero()
	}
	t := v.Type()
	if t.Implements(isZeroerType) {
		if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
			return true
		}
		return v.Interface().(isZeroer).IsZero()
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(isZeroerType) {
		if v.CanAddr() {
			return v.Addr().Interface().(isZeroer).IsZero()
		}
		c := reflect.New(t)
		c.Elem().Set(v)
		return c.Interface().(isZeroer).IsZero()
	}
	return v.IsZero()
}

func cachedFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	f, _ := fieldCache.LoadOrStore(t, typeFields(t))
	return f.([]field)
}

// typeFields lists the fields encoding/json encodes for struct type t:
// exported fields and the fields promoted from embedded structs, named by
// their tags, with Go's rules for hiding and for ambiguous names.
func typeFields(t reflect.Type) []field {
	type item struct {
		typ   reflect.Type
		index []int
	}
	var current []item
	next := []item{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []field
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, it := range current {
			if visited[it.typ] {
				continue
			}
			visited[it.typ] = true
			for i := 0; i < it.typ.NumField(); i++ {
				sf := it.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Name() == "" && ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clone(it.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				quoted := false
				if hasOption(opts, "string") {
					switch ft.Kind() {
					case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
						reflect.Float32, reflect.Float64, reflect.String:
						quoted = true
					}
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					tagged := name != ""
					if name == "" {
						name = sf.Name
					}
					f := field{name: name, tagged: tagged, index: index, typ: ft,
						omitEmpty: hasOption(opts, "omitempty"), omitZero: hasOption(opts, "omitzero"), quoted: quoted}
					fields = append(fields, f)
					if count[it.typ] > 1 {
						// Two embeddings of the same type at this depth
						// annihilate each other's fields.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, item{typ: ft, index: index})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if len(a.index) != len(b.index) {
			return len(a.index) - len(b.index)
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if f, ok := dominantField(fields[i:j]); ok {
			out = append(out, f)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominantField picks the field that wins among fields of one name (sorted
// by depth, tagged first): the only shallowest one, or else none.
func dominantField(fs []field) (field, bool) {
	if len(fs) > 1 && len(fs[0].index) == len(fs[1].index) && fs[0].tagged == fs[1].tagged {
		return field{}, false
	}
	return fs[0], true
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// validTagName reports whether encoding/json accepts name as a field name.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
