package jsonw

import (
	"slices"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// Value is a parsed JSON value, shaped as JavaScript's JSON.parse builds it:
// numbers are doubles, an object's members are in JavaScript property order
// (array-index names first in ascending numeric order, then the other names in
// document order) and a repeated name keeps its first position and its last
// value.
type Value struct {
	Kind    Kind
	Bool    bool
	Num     float64
	Str     string
	Items   []Value  // elements of an Array
	Members []Member // members of an Object, in JavaScript property order
}

// Member is one member of an object Value.
type Member struct {
	Name  string
	Value Value
}

// Parse parses one complete JSON document.
func Parse(data []byte) (Value, error) {
	s := NewScanner(data)
	v, err := s.Value()
	if err != nil {
		return Value{}, err
	}
	return v, s.End()
}

// Value reads the next value as a Value tree.
func (s *Scanner) Value() (Value, error) { return s.value(0) }

func (s *Scanner) value(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, s.syntax("nesting too deep")
	}
	switch k := s.Peek(); k {
	case Object:
		v := Value{Kind: Object, Members: []Member{}}
		index := map[string]int(nil)
		err := s.Object(func(key string) error {
			child, err := s.value(depth + 1)
			if err != nil {
				return err
			}
			if len(v.Members) >= 8 && index == nil {
				index = make(map[string]int, 16)
				for i, m := range v.Members {
					index[m.Name] = i
				}
			}
			if index != nil {
				if i, ok := index[key]; ok {
					v.Members[i].Value = child
					return nil
				}
				index[key] = len(v.Members)
			} else {
				for i := range v.Members {
					if v.Members[i].Name == key {
						v.Members[i].Value = child
						return nil
					}
				}
			}
			v.Members = append(v.Members, Member{Name: key, Value: child})
			return nil
		})
		if err != nil {
			return Value{}, err
		}
		OrderMembers(v.Members)
		return v, nil
	case Array:
		v := Value{Kind: Array, Items: []Value{}}
		err := s.Array(func(int) error {
			child, err := s.value(depth + 1)
			if err != nil {
				return err
			}
			v.Items = append(v.Items, child)
			return nil
		})
		return v, err
	case String:
		str, err := s.String()
		return Value{Kind: String, Str: str}, err
	case Number:
		n, err := s.Number()
		return Value{Kind: Number, Num: n}, err
	case Bool:
		b, err := s.Bool()
		return Value{Kind: Bool, Bool: b}, err
	case Null:
		_, err := s.Null()
		return Value{Kind: Null}, err
	}
	return Value{}, s.expect(Null)
}

// ArrayIndex reports whether name is a canonical array index as JavaScript
// defines it ("0", "17"; not "01" or "4294967295") and returns its value.
func ArrayIndex(name string) (uint32, bool) {
	if name == "" || len(name) > 10 || (len(name) > 1 && name[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n >= 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}

// OrderMembers puts members in JavaScript property order, as an object built
// by assigning them in turn holds them: array-index names first in ascending
// numeric order, then the others in their order (a stable partition).
func OrderMembers(ms []Member) {
	hasIndex := false
	for _, m := range ms {
		if _, ok := ArrayIndex(m.Name); ok {
			hasIndex = true
			break
		}
	}
	if !hasIndex {
		return
	}
	slices.SortStableFunc(ms, func(a, b Member) int {
		ai, aok := ArrayIndex(a.Name)
		bi, bok := ArrayIndex(b.Name)
		switch {
		case aok && bok:
			return int(int64(ai) - int64(bi))
		case aok:
			return -1
		case bok:
			return 1
		}
		return 0
	})
}

// AppendValue appends v as JSON.stringify writes it: compact, members in the
// Value's (JavaScript property) order.
func AppendValue(dst []byte, v Value) ([]byte, error) { return appendValue(dst, v, false) }

// AppendSorted appends v as stable JSON: like AppendValue, but every object's
// members sorted by their names' UTF-16 code units, as JavaScript's default
// sort orders strings.
func AppendSorted(dst []byte, v Value) ([]byte, error) { return appendValue(dst, v, true) }

func appendValue(dst []byte, v Value, sorted bool) ([]byte, error) {
	var err error
	switch v.Kind {
	case Object:
		ms := v.Members
		if sorted && len(ms) > 1 {
			ms = slices.Clone(ms)
			slices.SortStableFunc(ms, func(a, b Member) int { return jsstring.Compare(a.Name, b.Name) })
		}
		dst = append(dst, '{')
		for i, m := range ms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.Name)
			dst = append(dst, ':')
			if dst, err = appendValue(dst, m.Value, sorted); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case Array:
		dst = append(dst, '[')
		for i, item := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendValue(dst, item, sorted); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case String:
		return AppendString(dst, v.Str), nil
	case Number:
		return AppendNumber(dst, v.Num)
	case Bool:
		if v.Bool {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case Null:
		return append(dst, "null"...), nil
	}
	return dst, &SyntaxError{Msg: "invalid value kind"}
}

// Normalize rewrites raw JSON exactly as JSON.stringify(JSON.parse(raw))
// would: compact, JavaScript property order, JavaScript escapes and numbers.
func Normalize(dst, raw []byte) ([]byte, error) {
	v, err := Parse(raw)
	if err != nil {
		return dst, err
	}
	return AppendValue(dst, v)
}
