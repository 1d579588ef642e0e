package jsonw

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz the differential target with
//
//	go test ./internal/jsonw -run='^$' -fuzz=FuzzParseMatchesEncodingJSON -fuzztime=60s

// FuzzParseMatchesEncodingJSON decodes arbitrary bytes with Parse and with
// encoding/json: both accept the same valid UTF-8 documents, decode the
// same value (member names included, a repeated name keeping its last
// value), and Parse orders members as JavaScript does. Normalize writes a
// document both decoders read back as the same value, and is idempotent.
// The only intended difference is a lone surrogate escape, which
// encoding/json reads as U+FFFD and Parse keeps (as WTF-8), so that names
// which differ only there stay distinct.
func FuzzParseMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`null`, `true`, `-0`, `1e-400`, `1e400`, `0.1`, `"x"`, `[]`, `{}`, ` [1, "a", {"b": null}] `,
		`{"a\"bcdefgh":["x\ny"]}`,
		`{"note\n[ds4:local-only]P[/ds4:local-only]":{"v":"abcdefghijklmnopqr\n"}}`,
		`{"k\n2345678901234567890":{"content":"sk-ant-0123456789\n"}}`,
		`{"a\u0062":1,"ab":2,"\u0061b":{"x\ty":"\"","x\ty":"z"}}`,
		`{"b":1,"2":2,"a":3,"1":4,"01":5,"4294967295":6,"4294967294":7}`,
		`{"x":1,"x":{"y":"\n"},"x\n":2}`,
		`{"\ud83d\ude00":"\ud800","\udc00x":"do\ud800ne","\ud800\ud800":"\udfff\ud800"}`,
		`{"naïve":"tab\there","back\\slash":{"line\nbreak":"quote\"d"}}`,
		`{"\ud800":1,"\ufffd":2,"\ud800":3}`,
		`[1,2,]`, `{"a":1,}`, `{"a" 1}`, `"\x"`, `"a` + "\x01" + `"`, `01`, `1.`, `-`, `"\u12"`,
		"\"\xff\"", "[\"\xed\xa0\x80\"]", `{"a":1}x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		var std any
		stdErr := json.Unmarshal(data, &std)
		if !utf8.Valid(data) {
			if err == nil {
				t.Fatalf("Parse accepted invalid UTF-8: %q", data)
			}
			return
		}
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("Parse error %v, encoding/json error %v, for %q", err, stdErr, data)
		}
		if err != nil {
			return
		}
		// encoding/json merges names that differ only in a lone surrogate
		// and U+FFFD; Parse keeps them apart.
		collision := surrogateCollision(v)
		if !collision {
			if got := plain(v); !reflect.DeepEqual(got, std) {
				t.Fatalf("values differ for %q:\n jsonw %#v\n  json %#v", data, got, std)
			}
			checkOrder(t, data, v)
		}

		norm, err := Normalize(nil, data)
		if err != nil {
			t.Fatalf("Normalize refused what Parse accepted (%q): %v", data, err)
		}
		var stdNorm any
		if err := json.Unmarshal(norm, &stdNorm); err != nil || !collision && !reflect.DeepEqual(stdNorm, std) {
			t.Fatalf("Normalize changed the value (%v): %q -> %q", err, data, norm)
		}
		v2, err := Parse(norm)
		if err != nil || !reflect.DeepEqual(v2, v) {
			t.Fatalf("Parse(Normalize) differs from Parse (%v): %q -> %q", err, data, norm)
		}
		if again, _ := Normalize(nil, norm); !bytes.Equal(again, norm) {
			t.Fatalf("Normalize is not idempotent: %q -> %q", norm, again)
		}
	})
}

// plain converts v to what encoding/json decodes into an any, with every
// lone surrogate (held as WTF-8) read as U+FFFD as encoding/json reads it.
func plain(v Value) any {
	switch v.Kind {
	case Object:
		m := make(map[string]any, len(v.Members))
		for _, mb := range v.Members {
			m[replaceSurrogates(mb.Name)] = plain(mb.Value)
		}
		return m
	case Array:
		items := make([]any, len(v.Items))
		for i, item := range v.Items {
			items[i] = plain(item)
		}
		return items
	case String:
		return replaceSurrogates(v.Str)
	case Number:
		return v.Num
	case Bool:
		return v.Bool
	}
	return nil
}

// surrogateCollision reports whether two member names of one object of v
// become equal when their lone surrogates are read as U+FFFD.
func surrogateCollision(v Value) bool {
	switch v.Kind {
	case Object:
		seen := make(map[string]bool, len(v.Members))
		for _, m := range v.Members {
			n := replaceSurrogates(m.Name)
			if seen[n] || surrogateCollision(m.Value) {
				return true
			}
			seen[n] = true
		}
	case Array:
		for _, item := range v.Items {
			if surrogateCollision(item) {
				return true
			}
		}
	}
	return false
}

// replaceSurrogates replaces each WTF-8 encoded surrogate with U+FFFD.
func replaceSurrogates(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			b.WriteString("\uFFFD")
			i += 3
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// ordered is a JSON value with its members in order.
type ordered struct {
	scalar  any
	names   []string
	members []ordered
	items   []ordered
	array   bool
}

// checkOrder reads data again with encoding/json's tokenizer, keeping each
// object's members in the order JavaScript's JSON.parse gives them (the
// canonical array-index names ascending, then the others by first
// appearance, a repeated name keeping its last value), and compares that
// with v.
func checkOrder(t *testing.T, data []byte, v Value) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	want, err := readOrdered(dec)
	if err != nil {
		t.Fatalf("tokenizer: %v", err)
	}
	if got := toOrdered(v); !reflect.DeepEqual(got, want) {
		t.Fatalf("member order differs for %q:\n jsonw %+v\n  json %+v", data, got, want)
	}
}

func readOrdered(dec *json.Decoder) (ordered, error) {
	tok, err := dec.Token()
	if err != nil {
		return ordered{}, err
	}
	switch tok {
	case json.Delim('{'):
		o := ordered{names: []string{}, members: []ordered{}}
		pos := map[string]int{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return o, err
			}
			name := tok.(string)
			child, err := readOrdered(dec)
			if err != nil {
				return o, err
			}
			if i, ok := pos[name]; ok {
				o.members[i] = child
				continue
			}
			pos[name] = len(o.names)
			o.names = append(o.names, name)
			o.members = append(o.members, child)
		}
		_, err := dec.Token()
		var idx []uint64
		for _, n := range o.names {
			if k, ok := indexName(n); ok {
				idx = insertSorted(idx, k)
			}
		}
		out := ordered{names: []string{}, members: []ordered{}}
		for _, k := range idx {
			n := formatUint(k)
			out.names = append(out.names, n)
			out.members = append(out.members, o.members[pos[n]])
		}
		for i, n := range o.names {
			if _, ok := indexName(n); !ok {
				out.names = append(out.names, n)
				out.members = append(out.members, o.members[i])
			}
		}
		return out, err
	case json.Delim('['):
		o := ordered{array: true, items: []ordered{}}
		for dec.More() {
			child, err := readOrdered(dec)
			if err != nil {
				return o, err
			}
			o.items = append(o.items, child)
		}
		_, err := dec.Token()
		return o, err
	}
	if n, ok := tok.(json.Number); ok {
		f, err := n.Float64()
		return ordered{scalar: f}, err
	}
	return ordered{scalar: tok}, nil
}

func toOrdered(v Value) ordered {
	switch v.Kind {
	case Object:
		o := ordered{names: []string{}, members: []ordered{}}
		for _, m := range v.Members {
			o.names = append(o.names, replaceSurrogates(m.Name))
			o.members = append(o.members, toOrdered(m.Value))
		}
		return o
	case Array:
		o := ordered{array: true, items: []ordered{}}
		for _, item := range v.Items {
			o.items = append(o.items, toOrdered(item))
		}
		return o
	}
	return ordered{scalar: plain(v)}
}

// indexName reports whether name is a canonical array index below 2^32−1,
// written independently of ArrayIndex.
func indexName(name string) (uint64, bool) {
	if name == "" || (name != "0" && name[0] == '0') || len(name) > 10 {
		return 0, false
	}
	var n uint64
	for _, c := range []byte(name) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < 4294967295
}

func insertSorted(s []uint64, n uint64) []uint64 {
	i := 0
	for i < len(s) && s[i] < n {
		i++
	}
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = n
	return s
}

func formatUint(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
