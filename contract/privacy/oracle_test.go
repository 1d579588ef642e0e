package privacy_test

// This file is an independent statement of SPEC §8 for the payloads its
// generator makes: an oracle written from the SPEC's text alone, in the
// plainest way, sharing no code with the engine (it is in another package
// and calls only the engine's exported API). It parses the document with
// encoding/json, finds markers by trying every position, keeps the open
// markers of the floor on a plain stack, and writes JSON itself. It
// handles everything the generator produces: marker classes in every
// casing, nested, mismatched, stray and split markers, escaped markers,
// markers in member names, array-index and repeated names, name
// collisions, JSON escapes, JavaScript whitespace, and the sk- credential
// (the one secret shape the generator writes).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Classes by rank; -1 is "no class".
var oracleClasses = [4]string{"normal", "internal", "sensitive", "local-only"}

// oracleConfig is a policy as the oracle sees it.
type oracleConfig struct {
	enabled bool
	def     int
	allowed [4]bool // for the provider at hand
	remote  bool
	redact  bool
	// valuesOnly leaves member names out of the floor, as the TypeScript
	// kit's engine does (SPEC §8: the name rule is the Go kit's only).
	valuesOnly bool
}

// oracleResult is what the oracle computes for a payload.
type oracleResult struct {
	value    []byte
	class    int
	changed  bool
	blocked  int
	redacted int
	floor    int // -1 when the marker structure raises none
}

// ---- JSON in -----------------------------------------------------------

// onode is a JSON value with its object members in JavaScript property
// order, as JSON.parse leaves them.
type onode struct {
	kind  byte // 's' string, 'n' number, 'b' bool, 'z' null, 'a' array, 'o' object
	text  string
	items []*onode
	names []string
	vals  []*onode
}

func oracleParse(doc []byte) (*onode, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	n, err := oracleValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the value")
	}
	return n, nil
}

func oracleValue(d *json.Decoder) (*onode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case string:
		return &onode{kind: 's', text: t}, nil
	case json.Number:
		return &onode{kind: 'n', text: t.String()}, nil
	case bool:
		return &onode{kind: 'b', text: strconv.FormatBool(t)}, nil
	case nil:
		return &onode{kind: 'z', text: "null"}, nil
	case json.Delim:
		if t == '[' {
			n := &onode{kind: 'a'}
			for d.More() {
				item, err := oracleValue(d)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			_, err := d.Token()
			return n, err
		}
		n := &onode{kind: 'o'}
		for d.More() {
			tok, err := d.Token()
			if err != nil {
				return nil, err
			}
			name := tok.(string)
			val, err := oracleValue(d)
			if err != nil {
				return nil, err
			}
			// A repeated name keeps its first place and takes the last value.
			dup := false
			for i, old := range n.names {
				if old == name {
					n.vals[i], dup = val, true
				}
			}
			if !dup {
				n.names, n.vals = append(n.names, name), append(n.vals, val)
			}
		}
		_, err := d.Token()
		n.names, n.vals = jsOrder(n.names, n.vals)
		return n, err
	}
	return nil, fmt.Errorf("unexpected token")
}

// isArrayIndex reports whether name is a canonical array index below
// 2^32-1, and its value.
func isArrayIndex(name string) (uint64, bool) {
	if name == "" || (len(name) > 1 && name[0] == '0') {
		return 0, false
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(name, 10, 64)
	return v, err == nil && v < 1<<32-1
}

// jsOrder puts array-index names first in ascending order, then the others
// in their order.
func jsOrder(names []string, vals []*onode) ([]string, []*onode) {
	var inames, onames []string
	var ivals, ovals []*onode
	for i, n := range names {
		if _, ok := isArrayIndex(n); ok {
			// Insertion sort keeps it obvious.
			v, _ := isArrayIndex(n)
			j := len(inames)
			for j > 0 {
				w, _ := isArrayIndex(inames[j-1])
				if w < v {
					break
				}
				j--
			}
			inames = append(inames[:j], append([]string{n}, inames[j:]...)...)
			ivals = append(ivals[:j], append([]*onode{vals[i]}, ivals[j:]...)...)
			continue
		}
		onames, ovals = append(onames, n), append(ovals, vals[i])
	}
	return append(inames, onames...), append(ivals, ovals...)
}

// ---- markers -----------------------------------------------------------

type omarker struct {
	start, end int
	class      int
	closing    bool
}

// asciiLower lowers A-Z only, as the markers' case-insensitivity does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// oracleMarkers lists the markers of s: at every '[' not preceded by a
// backslash, "[ds4:CLASS]" or "[/ds4:CLASS]" in any ASCII casing. The
// search goes on after a marker's end.
func oracleMarkers(s string) []omarker {
	var out []omarker
	for i := 0; i < len(s); i++ {
		if s[i] != '[' || (i > 0 && s[i-1] == '\\') {
			continue
		}
		for c, name := range oracleClasses {
			for _, closing := range []bool{false, true} {
				tag := "[ds4:" + name + "]"
				if closing {
					tag = "[/ds4:" + name + "]"
				}
				if len(s)-i >= len(tag) && asciiLower(s[i:i+len(tag)]) == tag {
					out = append(out, omarker{start: i, end: i + len(tag), class: c, closing: closing})
				}
			}
		}
		if n := len(out); n > 0 && out[n-1].start == i {
			i = out[n-1].end - 1
		}
	}
	return out
}

// oraclePairs finds the closed pairs: from the left, an opening marker and
// the nearest following closing marker of its class; the search resumes
// after the close.
func oraclePairs(ms []omarker) [][2]omarker {
	var out [][2]omarker
	for i := 0; i < len(ms); i++ {
		if ms[i].closing {
			continue
		}
		for j := i + 1; j < len(ms); j++ {
			if ms[j].closing && ms[j].class == ms[i].class {
				out = append(out, [2]omarker{ms[i], ms[j]})
				i = j
				break
			}
		}
	}
	return out
}

// ---- the floor ---------------------------------------------------------

type ofloor struct {
	floor int
	stack []struct{ class, in int }
	index int
}

func (f *ofloor) raise(c int) { f.floor = max(f.floor, c) }

// value is one string value, in walk order.
func (f *ofloor) value(s string) {
	for _, m := range oracleMarkers(s) {
		if !m.closing {
			for _, o := range f.stack {
				f.raise(o.class)
				f.raise(m.class)
			}
			f.stack = append(f.stack, struct{ class, in int }{m.class, f.index})
			continue
		}
		if len(f.stack) == 0 {
			f.raise(m.class)
			continue
		}
		top := f.stack[len(f.stack)-1]
		f.stack = f.stack[:len(f.stack)-1]
		if top.class != m.class || top.in != f.index {
			f.raise(top.class)
			f.raise(m.class)
		}
	}
	f.index++
}

// name is a member name, anywhere in the payload: each opening marker that
// does not begin one of its closed pairs raises the floor.
func (f *ofloor) name(s string) {
	ms := oracleMarkers(s)
	pairs := oraclePairs(ms)
	for _, m := range ms {
		begins := false
		for _, p := range pairs {
			begins = begins || p[0].start == m.start
		}
		if !m.closing && !begins {
			f.raise(m.class)
		}
	}
}

func (f *ofloor) end() int {
	for _, o := range f.stack {
		f.raise(o.class)
	}
	return f.floor
}

// ---- keys --------------------------------------------------------------

const (
	okeyOther = iota
	okeyStructural
	okeyContent
)

// oracleKey classifies a member name lower-cased as JavaScript's
// toLowerCase does. The names it is compared with are ASCII, and the only
// characters toLowerCase and Go's strings.ToLower take to different places
// on the way there are U+0130, which becomes "i" + U+0307 (not "i"), and
// a final capital sigma (no ASCII name holds a sigma either way).
func oracleKey(name string) int {
	switch strings.ToLower(strings.ReplaceAll(name, "\u0130", "i\u0307")) {
	case "api", "id", "model", "name", "role", "stopreason", "stop_reason", "toolcallid", "tool_call_id", "type":
		return okeyStructural
	case "arguments", "content", "contents", "context", "description", "input", "instructions", "messages",
		"metadata", "parts", "prompt", "requestmetadata", "system", "system_instruction", "systeminstruction",
		"systemprompt", "text", "thinking", "toolconfig", "tools":
		return okeyContent
	}
	return okeyOther
}

// oracleFloor walks values and, unless valuesOnly, member names in walk
// order.
func oracleFloor(n *onode, f *ofloor, valuesOnly bool) {
	switch n.kind {
	case 's':
		f.value(n.text)
	case 'a':
		for _, item := range n.items {
			oracleFloor(item, f, valuesOnly)
		}
	case 'o':
		for i, name := range n.names {
			if !valuesOnly {
				f.name(name)
			}
			oracleFloor(n.vals[i], f, valuesOnly)
		}
	}
}

// ---- text --------------------------------------------------------------

// isJSSpace is JavaScript's whitespace (String.prototype.trim).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

func trimJSLeft(s string) string {
	for s != "" {
		r, size := utf8.DecodeRuneInString(s)
		if !isJSSpace(r) {
			break
		}
		s = s[size:]
	}
	return s
}

// isWord is a JavaScript \w character.
func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// redactSK replaces word-bounded sk- credentials: "sk-" and 8 or more of
// [A-Za-z0-9_-], the match ending at a word boundary (so a trailing '-'
// stays outside). It is the only secret shape the generator writes.
func redactSK(s string, n *int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "sk-") && (i == 0 || !isWord(s[i-1])) {
			run := i + 3
			for run < len(s) && (isWord(s[run]) || s[run] == '-') {
				run++
			}
			end := -1
			for e := run; e >= i+11; e-- {
				if (e > 0 && isWord(s[e-1])) != (e < len(s) && isWord(s[e])) {
					end = e
					break
				}
			}
			if end > 0 {
				b.WriteString("[DS4 REDACTED CREDENTIAL]")
				*n++
				i = end
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

type otext struct {
	cfg *oracleConfig
	def int
	res *oracleResult
	// off writes the document as it is (a disabled configuration).
	off bool
}

func (z *otext) segment(b *strings.Builder, s string, c int, always bool) {
	z.res.class = max(z.res.class, c)
	if s == "" && !always {
		return
	}
	if z.cfg.allowed[c] {
		b.WriteString(s)
		return
	}
	b.WriteString("[DS4 " + oracleClasses[c] + " content excluded by privacy policy]")
	z.res.blocked++
}

func (z *otext) sanitize(s string) string {
	z.res.class = max(z.res.class, z.def)
	if s == "" {
		return s
	}
	ms := oracleMarkers(s)
	pairs := oraclePairs(ms)
	var b strings.Builder
	applied := false
	switch {
	case len(pairs) > 0:
		applied = true
		pos := 0
		for _, p := range pairs {
			z.segment(&b, s[pos:p[0].start], z.def, false)
			z.segment(&b, s[p[0].end:p[1].start], max(z.def, p[0].class), true)
			pos = p[1].end
		}
		z.segment(&b, s[pos:], z.def, false)
	case len(ms) > 0 && !ms[0].closing && trimJSLeft(s[:ms[0].start]) == "":
		applied = true
		z.segment(&b, trimJSLeft(s[ms[0].end:]), max(z.def, ms[0].class), true)
	default:
		z.segment(&b, s, z.def, true)
	}
	out := b.String()
	if z.cfg.remote && z.cfg.redact {
		out = redactSK(out, &z.res.redacted)
	}
	if applied || out != s {
		z.res.changed = true
	}
	return out
}

// ---- the walk and JSON out -------------------------------------------------

func oracleString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func (z *otext) walk(b *bytes.Buffer, n *onode, key int, ctx bool) {
	switch n.kind {
	case 's':
		s := n.text
		if !z.off && ((ctx && key != okeyStructural) || len(oracleMarkers(s)) > 0) {
			s = z.sanitize(s)
		}
		oracleString(b, s)
	case 'a':
		b.WriteByte('[')
		for i, item := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			z.walk(b, item, key, ctx)
		}
		b.WriteByte(']')
	case 'o':
		var names []string
		var vals [][]byte
		for i, orig := range n.names {
			kc := oracleKey(orig)
			name := orig
			if !z.off && ((ctx && kc == okeyOther) || len(oracleMarkers(orig)) > 0) {
				name = z.sanitize(orig)
			}
			var child bytes.Buffer
			z.walk(&child, n.vals[i], kc, ctx || kc == okeyContent)
			for taken := true; taken; {
				taken = false
				for _, o := range names {
					taken = taken || o == name
				}
				if taken {
					name += "_" + strconv.Itoa(i)
				}
			}
			names, vals = append(names, name), append(vals, child.Bytes())
		}
		// The result is an object built by assigning the names in turn.
		vs := make([]*onode, len(vals))
		for i, v := range vals {
			vs[i] = &onode{text: string(v)}
		}
		names, vs = jsOrder(names, vs)
		b.WriteByte('{')
		for i, name := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			oracleString(b, name)
			b.WriteByte(':')
			b.WriteString(vs[i].text)
		}
		b.WriteByte('}')
	default:
		b.WriteString(n.text)
	}
}

// oracleSanitize sanitises the JSON document doc under cfg.
func oracleSanitize(cfg oracleConfig, doc []byte) (oracleResult, error) {
	root, err := oracleParse(doc)
	if err != nil {
		return oracleResult{}, err
	}
	res := oracleResult{class: cfg.def, floor: -1}
	var b bytes.Buffer
	if !cfg.enabled {
		(&otext{cfg: &cfg, res: &res, off: true}).walk(&b, root, okeyOther, false)
		res.value = b.Bytes()
		return res, nil
	}
	f := ofloor{floor: -1}
	oracleFloor(root, &f, cfg.valuesOnly)
	res.floor = f.end()
	z := &otext{cfg: &cfg, def: max(cfg.def, res.floor), res: &res}
	res.class = z.def
	z.walk(&b, root, okeyOther, false)
	res.value = b.Bytes()
	return res, nil
}
