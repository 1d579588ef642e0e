package mutants

import (
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// upstreamEngine is an adapter with its own privacy engine that keeps
// every rule SPEC §8 states for both kits and leaves out the one it marks
// "Go kit only", as the TypeScript kit's engine does: its marker-structure
// floor counts string values only, so a member name holding an opening
// marker outside a closed pair raises nothing (the name itself is still
// sanitised, as every name holding a marker is). Where its floor equals
// the Go kit's it answers what the correct engine answers; elsewhere it
// walks the payload itself under its own lower default class. The privacy
// checks accept it and show the limit member-name-floor, unless they are
// strict.
func upstreamEngine(provider string, payload any) (contract.PrivacyResult, error) {
	return ownFloor(provider, payload, &slotFloor{stack: true, valuesOnly: true})
}

// oneSlotFloor is an adapter with its own privacy engine whose
// marker-structure floor keeps one open marker instead of a stack: after
// a close pops an inner marker it forgets the outer one, so a pair opened
// later is not seen to nest inside it and the floor stays lower. Where its
// floor equals the stack's it answers what the correct engine answers;
// elsewhere it walks the payload itself, applying the text rules under its
// own lower default class, with the correct engine's secret redaction.
func oneSlotFloor(provider string, payload any) (contract.PrivacyResult, error) {
	return ownFloor(provider, payload, &slotFloor{})
}

// ownFloor is the enforcement of an adapter whose engine computes the
// floor as own does: the correct engine's result where the floors agree,
// else its own walk under the default class own's floor gives.
func ownFloor(provider string, payload any, own *slotFloor) (contract.PrivacyResult, error) {
	res, err := sanitise(provider, payload)
	if err != nil {
		return res, err
	}
	raw, err := toJSON(payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	root, err := jsonw.Parse(raw)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	stack := &slotFloor{stack: true}
	own.walk(root)
	stack.walk(root)
	if own.finish() == stack.finish() {
		return res, nil
	}
	pol, err := defaultEngine.Policy(provider)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	w := slotWalk{pol: pol, def: privacy.Max(privacy.DefaultConfig().DefaultClassification, own.finish()),
		res: contract.PrivacyResult{Provider: provider, Destination: res.Destination}}
	out, err := jsonw.AppendValue(nil, w.value(root, keyOther, false))
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	w.res.Payload = out
	return w.res, nil
}

// A slotMarker is one unescaped marker of a string.
type slotMarker struct {
	start, end int
	class      privacy.Classification
	closing    bool
}

// slotMarkers lists the markers of s: [ds4:CLASS] or [/ds4:CLASS], ASCII
// case-insensitive, not preceded by a backslash.
func slotMarkers(s string) []slotMarker {
	var out []slotMarker
	for i := 0; i < len(s); i++ {
		if s[i] != '[' || (i > 0 && s[i-1] == '\\') {
			continue
		}
		j, closing := i+1, false
		if j < len(s) && s[j] == '/' {
			j, closing = j+1, true
		}
		for _, c := range privacy.Classifications() {
			tag := "ds4:" + string(c) + "]"
			if len(s)-j >= len(tag) && asciiLower(s[j:j+len(tag)]) == tag {
				out = append(out, slotMarker{start: i, end: j + len(tag), class: c, closing: closing})
				i = j + len(tag) - 1
				break
			}
		}
	}
	return out
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// slotFloor computes the floor with a stack of open markers (stack set)
// or, as the one-slot mutant does, with one open slot; valuesOnly leaves
// member names out, as the TypeScript kit's engine does.
type slotFloor struct {
	stack      bool
	valuesOnly bool
	floor      privacy.Classification
	open       []slotMarker // at most one entry without stack
	in         []int        // the string each open marker is in
	index      int
}

func (f *slotFloor) raise(cs ...privacy.Classification) {
	for _, c := range cs {
		f.floor = privacy.Max(f.floor, c)
	}
}

func (f *slotFloor) value(s string) {
	for _, m := range slotMarkers(s) {
		n := len(f.open)
		switch {
		case !m.closing:
			for _, o := range f.open {
				f.raise(o.class, m.class)
			}
			if !f.stack {
				f.open, f.in = f.open[:0], f.in[:0]
			}
			f.open, f.in = append(f.open, m), append(f.in, f.index)
		case n == 0:
			f.raise(m.class)
		default:
			top, in := f.open[n-1], f.in[n-1]
			f.open, f.in = f.open[:n-1], f.in[:n-1]
			if top.class != m.class || in != f.index {
				f.raise(top.class, m.class)
			}
		}
	}
	f.index++
}

// name applies the rule for member names, anywhere in the payload: an
// opening marker outside a closed pair raises the floor.
func (f *slotFloor) name(s string) {
	ms := slotMarkers(s)
	for i := 0; i < len(ms); i++ {
		if ms[i].closing {
			continue
		}
		j := i + 1
		for j < len(ms) && !(ms[j].closing && ms[j].class == ms[i].class) {
			j++
		}
		if j == len(ms) {
			f.raise(ms[i].class)
			continue
		}
		for k := i + 1; k < j; k++ {
			if !ms[k].closing {
				f.raise(ms[k].class) // nested inside the pair
			}
		}
		i = j
	}
}

func (f *slotFloor) walk(v jsonw.Value) {
	switch v.Kind {
	case jsonw.String:
		f.value(v.Str)
	case jsonw.Array:
		for _, item := range v.Items {
			f.walk(item)
		}
	case jsonw.Object:
		for _, m := range v.Members {
			if !f.valuesOnly {
				f.name(m.Name)
			}
			f.walk(m.Value)
		}
	}
}

func (f *slotFloor) finish() privacy.Classification {
	for _, o := range f.open {
		f.raise(o.class)
	}
	return f.floor
}

type keyKind int

const (
	keyOther keyKind = iota
	keyStructural
	keyContent
)

func classifyKey(name string) keyKind {
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

// slotWalk is the mutant's payload walk: the contract's, with every text
// sanitised under the mutant's default class def.
type slotWalk struct {
	pol privacy.Policy
	def privacy.Classification
	res contract.PrivacyResult
}

// text applies the text rules: closed pairs (shortest match), else a
// leading marker, else the default class; then the engine's redaction.
func (w *slotWalk) text(s string) string {
	if s == "" {
		return s
	}
	ms := slotMarkers(s)
	var b strings.Builder
	segment := func(text string, c privacy.Classification, always bool) {
		if text == "" && !always {
			return
		}
		if w.pol.Allows(c) {
			b.WriteString(text)
			return
		}
		b.WriteString("[DS4 " + string(c) + " content excluded by privacy policy]")
		w.res.BlockedBlocks++
	}
	applied := false
	pos := 0
	for i := 0; i < len(ms); i++ {
		if ms[i].closing {
			continue
		}
		j := i + 1
		for j < len(ms) && !(ms[j].closing && ms[j].class == ms[i].class) {
			j++
		}
		if j == len(ms) {
			continue
		}
		applied = true
		segment(s[pos:ms[i].start], w.def, false)
		segment(s[ms[i].end:ms[j].start], privacy.Max(w.def, ms[i].class), true)
		pos = ms[j].end
		i = j
	}
	switch {
	case applied:
		segment(s[pos:], w.def, false)
	case len(ms) > 0 && !ms[0].closing && jsstring.TrimLeft(s[:ms[0].start]) == "":
		applied = true
		segment(jsstring.TrimLeft(s[ms[0].end:]), privacy.Max(w.def, ms[0].class), true)
	default:
		segment(s, w.def, true)
	}
	out := w.redact(b.String())
	w.res.Changed = w.res.Changed || applied || out != s
	return out
}

// redact has the correct engine redact the secrets of s. The markers s
// still holds are broken with a character s does not contain, which the
// engine reads as no marker and which changes no secret match, and the
// character is removed again afterwards.
func (w *slotWalk) redact(s string) string {
	ms := slotMarkers(s)
	mark := ""
	for _, c := range []string{"\x00", "\ue000", "\ue001"} {
		if !strings.Contains(s, c) {
			mark = c
			break
		}
	}
	if len(ms) > 0 && mark == "" {
		return s // not in any payload the kit generates
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last : m.start+1])
		b.WriteString(mark)
		last = m.start + 1
	}
	b.WriteString(s[last:])
	t, err := defaultEngine.SanitizeText(w.pol.Provider, b.String())
	if err != nil {
		return s // cannot happen: the provider was accepted above
	}
	w.res.SecretRedactions += t.SecretRedactions
	if mark == "" {
		return t.Text
	}
	return strings.ReplaceAll(t.Text, mark, "")
}

func (w *slotWalk) value(v jsonw.Value, key keyKind, ctx bool) jsonw.Value {
	switch v.Kind {
	case jsonw.String:
		if (ctx && key != keyStructural) || len(slotMarkers(v.Str)) > 0 {
			v.Str = w.text(v.Str)
		}
	case jsonw.Array:
		for i, item := range v.Items {
			v.Items[i] = w.value(item, key, ctx)
		}
	case jsonw.Object:
		taken := map[string]bool{}
		for i, m := range v.Members {
			kc := classifyKey(m.Name)
			name := m.Name
			if (ctx && kc == keyOther) || len(slotMarkers(name)) > 0 {
				name = w.text(name)
			}
			for taken[name] {
				name += "_" + strconv.Itoa(i)
			}
			taken[name] = true
			v.Members[i] = jsonw.Member{Name: name, Value: w.value(m.Value, kc, ctx || kc == keyContent)}
		}
		jsonw.OrderMembers(v.Members)
	}
	return v
}
