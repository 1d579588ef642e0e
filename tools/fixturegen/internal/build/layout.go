package build

import (
	"bytes"
	"encoding/json"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// member is one member of an object under construction, with its value
// already encoded as compact JSON.
type member struct {
	name  string
	value []byte
}

// object encodes members, in order, as a compact JSON object.
func object(members ...member) []byte {
	b := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, m.name)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// str encodes s as a JSON string, written as JSON.stringify writes it.
func str(s string) []byte { return jsonw.AppendString(nil, s) }

// strs encodes a string array; nil is written as [].
func strs(ss []string) []byte {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, s)
	}
	return append(b, ']')
}

// array encodes already-encoded items as a compact JSON array.
func array(items [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']')
}

// marshal encodes v with encoding/json, without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// layout lays out compact JSON for reading and diffing: objects and arrays
// nested less than expandDepth deep are written one member or element per
// line, indented by two spaces per level; deeper ones, and empty ones, stay
// compact. Strings and numbers are copied byte for byte, so the layout
// changes whitespace only. The result ends with a newline.
func layout(compact []byte, expandDepth int) []byte {
	out := make([]byte, 0, len(compact)+len(compact)/8)
	var expanded []bool // one entry per open container
	newline := func() {
		out = append(out, '\n')
		for range expanded {
			out = append(out, ' ', ' ')
		}
	}
	inString, escaped := false, false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '{', '[':
			empty := i+1 < len(compact) && (compact[i+1] == '}' || compact[i+1] == ']')
			expand := len(expanded) < expandDepth && !empty
			out = append(out, c)
			expanded = append(expanded, expand)
			if expand {
				newline()
			}
		case '}', ']':
			expand := expanded[len(expanded)-1]
			expanded = expanded[:len(expanded)-1]
			if expand {
				newline()
			}
			out = append(out, c)
		case ',':
			out = append(out, c)
			if expanded[len(expanded)-1] {
				newline()
			}
		case ':':
			out = append(out, c)
			if expanded[len(expanded)-1] {
				out = append(out, ' ')
			}
		default:
			out = append(out, c)
		}
	}
	return append(out, '\n')
}
