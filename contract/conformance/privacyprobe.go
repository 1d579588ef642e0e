package conformance

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// This file generates the privacy probes: payloads whose private content,
// secrets and provider names an adapter cannot predict. A batch is
// deterministic for its seed, so a failure that names the seed can be
// reproduced, while the seed itself is drawn at check time. Each planted
// probe records its kind and where it was placed (a path built from fixed
// key names only), so failures can say what leaked without showing it.

// Probe kinds: what a planted token is and how it was hidden.
const (
	kindPublicText   = "public text"
	kindPublicKey    = "public member name"
	kindPairAllowed  = "allowed-class pair"
	kindPairBlocked  = "blocked-class pair"
	kindLeadBlocked  = "blocked-class leading marker"
	kindLeadAllowed  = "allowed-class leading marker"
	kindKeyPair      = "blocked-class pair in a member name"
	kindKeyLead      = "blocked-class leading marker in a member name"
	kindKeySecret    = "credential in a member name"
	kindAnomaly      = "blocked-class marker with broken structure"
	kindSplitPair    = "blocked-class pair split across two strings"
	kindOpenBelow    = "text under an outer marker that a close of an inner one leaves open, before a blocked-class pair"
	kindSecretPEM    = "PEM private key"
	kindSecretSK     = "sk- credential"
	kindSecretSKAnt  = "sk-ant- credential"
	kindSecretGitHub = "gh?_ credential"
	kindSecretAWS    = "AKIA access key"
	kindSecretBearer = "Bearer token"
	kindSecretAssign = "secret assignment"
)

// plantedProbe is one random token hidden in a payload.
type plantedProbe struct {
	token string
	kind  string
	// path is where the token was placed, from fixed key names only.
	path string
	// class is the marker class of marker kinds, "" otherwise: the class
	// of the token's segment is at least the higher of it and the
	// payload's default class.
	class string
	// secret is set on the body of a secret, which a remote provider
	// receives redacted when redaction is on.
	secret bool
	// sanitised is set when the string or member name holding the token is
	// sanitised (in content context under a key that is not structural,
	// or holding a marker); any other is sent as it is.
	sanitised bool
	// key is set when the token is (part of) a member name: when it must
	// reach the provider, it must come out as exactly that member name
	// (its markers removed).
	key bool
}

// probeCase is one payload of a batch, for one provider.
type probeCase struct {
	index int
	// shape says how the payload is given: raw JSON, JSON bytes, a Go map.
	shape    string
	provider string
	// canonical is the provider name before its case and surrounding
	// whitespace were varied: names of one canonical name are one provider.
	canonical string
	// valueFloor is the lowest class the marker structure of the
	// payload's string values raises its default class to ("" when it
	// raises none): a leading marker, broken structure, an outer marker
	// left open. The class it raises it to may be higher.
	valueFloor string
	// nameFloor is the class the payload's member names raise its default
	// class to under the Go kit's rule (SPEC §8, Go kit only), exactly: the
	// highest class of a leading marker in a member name ("" for none).
	nameFloor string
	// failing names the uninspectable value nested in the payload ("" for
	// an inspectable one) and failPath where it sits.
	failing, failPath string
	plants            []plantedProbe
	tree              *pnode
	raw               []byte // the rendered JSON of raw shapes
}

// payload returns a fresh copy of the case's payload value.
func (c *probeCase) payload() any {
	switch c.shape {
	case shapeRaw:
		return json.RawMessage(slices.Clone(c.raw))
	case shapeBytes:
		return slices.Clone(c.raw)
	}
	return c.tree.goValue()
}

// where describes the case as metadata: its number, shape, provider and
// the batch seed.
func (c *probeCase) where(seed uint64) string {
	return fmt.Sprintf("payload #%d (%s) for provider %s, seed %s", c.index, c.shape, q(c.provider), seedText(seed))
}

func seedText(seed uint64) string { return fmt.Sprintf("%#016x", seed) }

// Payload shapes.
const (
	shapeRaw   = "raw JSON"
	shapeBytes = "JSON bytes"
	shapeMap   = "Go map"
)

// probeBatch is a generated set of payloads.
type probeBatch struct {
	seed  uint64
	cases []*probeCase
	// providers lists every provider name the batch uses, and canonical
	// the name each one varies.
	providers []string
	canonical map[string]string
}

// tokens returns every token the batch planted.
func (b *probeBatch) tokens() []string {
	var out []string
	for _, c := range b.cases {
		for _, p := range c.plants {
			out = append(out, p.token)
		}
	}
	return out
}

// randomSeed draws a batch seed from crypto/rand.
func randomSeed() uint64 {
	var b [8]byte
	// crypto/rand.Read never returns an error; it aborts the program if the
	// operating system cannot supply randomness.
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// probeProvider is a provider name, the name it varies in case and
// surrounding whitespace, and whether the default privacy policy makes it
// local.
type probeProvider struct {
	name, canonical string
	local           bool
}

// splitProviders are names of the default local providers on which
// JavaScript's trim and toLowerCase, which SPEC §7 and §8 compare provider
// names with, and Go's string functions disagree (contract/gen's
// adversarial strings): remote names that strings.TrimSpace (U+0085), a
// whitespace table before Unicode 6.3 (U+180E), strings.EqualFold (long
// s), strings.ToLower (dotted capital I) or strings.ToUpper (dotless i)
// take for a local provider, and local names that strings.TrimSpace
// (U+FEFF) or an ASCII trim (U+2028, U+3000) takes for a remote one.
var splitProviders = []string{"ollama\u0085", "\u180eollama", "lm\u017ftudio", "LMSTUD\u0130O", "lmstud\u0131o", "\ufeffollama", "\u2028LLAMA-CPP\u3000"}

// probeProviders returns provider names for a batch: names that resemble
// the default local providers but are remote, the local providers with
// other case and surrounding whitespace, splitProviders, the fixture's
// provider, a random remote name, and the names in named (a declared
// configuration's) that none of those varies, as given and with other
// case and surrounding whitespace.
func (g *probeGen) probeProviders(fixtureProvider string, named []string) []probeProvider {
	remote := []string{
		"ollama-cloud.example", "ollama.remote", " ollama-proxy", "ollama2", "my-ollama",
		"llama-cpp.example", "llama.cpp", "lmstudio-cloud", "lm-studio", "ollama local",
	}
	local := []string{"ollama", "llama-cpp", "lmstudio"}
	spaces := []string{" ", "\t", "\n", "  ", "\u00a0", "\r\n"}
	var out []probeProvider
	for _, n := range remote {
		out = append(out, probeProvider{name: g.randCase(n), canonical: n})
	}
	for _, n := range local {
		out = append(out, probeProvider{name: pick(g.r, spaces) + strings.ToUpper(n) + pick(g.r, spaces), canonical: n, local: true})
		out = append(out, probeProvider{name: g.randCase(n), canonical: n, local: true})
	}
	for _, n := range splitProviders {
		out = append(out, probeProvider{name: n, canonical: canonicalProvider(n), local: defaultLocal(n)})
	}
	tok := "provider-" + g.token()
	out = append(out, probeProvider{name: tok, canonical: tok})
	if !contract.IsBlank(fixtureProvider) {
		out = append(out, probeProvider{name: fixtureProvider, canonical: fixtureProvider, local: defaultLocal(fixtureProvider)})
	}
	for _, n := range named {
		canonical := canonicalProvider(n)
		if contract.IsBlank(n) || slices.ContainsFunc(out, func(p probeProvider) bool { return canonicalProvider(p.canonical) == canonical }) {
			continue
		}
		out = append(out, probeProvider{name: n, canonical: n, local: defaultLocal(n)},
			probeProvider{name: " " + strings.ToUpper(n) + "\t", canonical: n, local: defaultLocal(n)})
	}
	return out
}

// canonicalProvider is the name the privacy policy compares for provider
// p: trimmed and lower-cased as JavaScript trims and lower-cases (SPEC §7,
// §8).
func canonicalProvider(p string) string { return jsstring.Lower(jsstring.Trim(p)) }

// defaultLocal reports whether the default privacy policy makes provider
// local.
func defaultLocal(provider string) bool {
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		return false
	}
	p, err := e.Policy(provider)
	return err == nil && p.Destination == privacy.Local
}

// probeGen draws the parts of a batch from one seeded generator.
type probeGen struct {
	r      *rand.Rand
	plants []plantedProbe
	// mode is the payload being built: modeClean, modeLeading,
	// modeAnomaly or modeStack.
	mode int
	// noQuote keeps secret assignments unquoted, for text that is itself
	// written into a JSON string (a quote there is preceded by a
	// backslash and no longer closes the value).
	noQuote bool
	// valueFloor and nameFloor are the payload's (see probeCase): the
	// lowest class its values' marker structure raises its default class
	// to, and the class its member names raise it to under the Go kit's
	// rule (SPEC §8, Go kit only: anywhere in the payload).
	valueFloor, nameFloor string
}

const (
	modeClean = iota
	modeLeading
	modeAnomaly
	// modeStack payloads hold one marker structure that only a stack of
	// open markers gets right, and nothing else that raises the floor.
	modeStack
	modeFailing
)

func newProbeGen(seed uint64) *probeGen {
	return &probeGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func (g *probeGen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// token returns a random probe token: 18 to 30 random alphanumerics, so it
// never equals a fixed probe and never looks like a secret or a marker.
func (g *probeGen) token() string { return g.chars(alnum, 18+g.r.IntN(13)) }

// randCase changes the case of each ASCII letter at random.
func (g *probeGen) randCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' && g.r.IntN(2) == 0 {
			b[i] = c - 'a' + 'A'
		} else if 'A' <= c && c <= 'Z' && g.r.IntN(2) == 0 {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// marker returns an opening or closing marker of class with random case.
func (g *probeGen) marker(class string, closing bool) string {
	slash := ""
	if closing {
		slash = "/"
	}
	return "[" + slash + g.randCase("ds4") + ":" + g.randCase(class) + "]"
}

var (
	blockedClasses = []string{"sensitive", "local-only"}
	allowedClasses = []string{"normal", "internal"}
	fillerWords    = []string{"review", "the", "module", "quarterly", "notes", "é", "中文", "😀", "draft", "plan", "x", "config", "and", "done."}
	// separators go between the parts of a text; each holds a character
	// that is not a word character, so secrets stay word-bounded, and
	// none ends with a backslash, so no marker is escaped.
	separators = []string{" ", "\n", " \"", "\" ", "\t", ", ", " é ", " — ", "\r\n", " / ", " {", "} "}
	// plainSeparators are the separators that strconv.Quote writes as they
	// are, for text written into a JSON string.
	plainSeparators = []string{" ", ", ", " é ", " — ", " / ", " {", "} "}
)

// sep returns a separator; ws selects whitespace only.
func (g *probeGen) sep(ws bool) string {
	switch {
	case ws && g.noQuote:
		return pick(g.r, []string{" ", "  "})
	case ws:
		return pick(g.r, []string{" ", "\n", "\t ", "  ", "\r\n"})
	case g.noQuote:
		return pick(g.r, plainSeparators)
	}
	return pick(g.r, separators)
}

func (g *probeGen) filler() string {
	n := 1 + g.r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = pick(g.r, fillerWords)
	}
	return strings.Join(parts, " ")
}

func (g *probeGen) plant(p plantedProbe) string {
	g.plants = append(g.plants, p)
	return p.token
}

// secret draws one secret of a random SPEC shape, plants its body and
// returns its text.
func (g *probeGen) secret(path string) string {
	switch g.r.IntN(7) {
	case 0:
		types := []string{"", "RSA ", "EC ", "OPENSSH ", "DSA "}
		l1, l2 := g.chars(alnum, 40+g.r.IntN(24)), g.chars(alnum+"+/", 20+g.r.IntN(20))+"=="
		g.plant(plantedProbe{token: l1, kind: kindSecretPEM, path: path, secret: true})
		g.plant(plantedProbe{token: l2[:len(l2)-2], kind: kindSecretPEM, path: path, secret: true})
		return "-----BEGIN " + pick(g.r, types) + "PRIVATE KEY-----\n" + l1 + "\n" + l2 + "\n-----END " + pick(g.r, types) + "PRIVATE KEY-----"
	case 1:
		s := "sk-" + g.chars(alnum, 2) + g.chars(alnum+"_-", 8+g.r.IntN(20)) + g.chars(alnum, 1)
		return g.plant(plantedProbe{token: s, kind: kindSecretSK, path: path, secret: true})
	case 2:
		s := "sk-ant-" + g.chars(alnum, 2) + g.chars(alnum+"_-", 10+g.r.IntN(30)) + g.chars(alnum, 1)
		return g.plant(plantedProbe{token: s, kind: kindSecretSKAnt, path: path, secret: true})
	case 3:
		s := "gh" + g.chars("pousr", 1) + "_" + g.chars(alnum, 12+g.r.IntN(30))
		return g.plant(plantedProbe{token: s, kind: kindSecretGitHub, path: path, secret: true})
	case 4:
		s := "AKIA" + g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16)
		return g.plant(plantedProbe{token: s, kind: kindSecretAWS, path: path, secret: true})
	case 5:
		body := g.chars(alnum, 4) + g.chars(alnum+"._~+/=-", 4+g.r.IntN(30)) + g.chars(alnum, 1)
		g.plant(plantedProbe{token: body, kind: kindSecretBearer, path: path, secret: true})
		return g.randCase("bearer") + g.sep(true) + body
	default:
		names := []string{"api_key", "api-key", "apikey", "access_token", "accesstoken", "auth-token", "client_secret", "client-secret", "password"}
		seps := []string{"=", ": ", " = ", ":" + g.sep(true), ":"}
		quote := pick(g.r, []string{"", "\"", "'"})
		if g.noQuote {
			quote = ""
		}
		body := g.chars(alnum, 6+g.r.IntN(24))
		g.plant(plantedProbe{token: body, kind: kindSecretAssign, path: path, secret: true})
		return g.randCase(pick(g.r, names)) + pick(g.r, seps) + quote + body + quote
	}
}

// text builds a string value at path from filler and drawn probes. ctx
// reports whether path is in content context below a key that is not
// structural: only there are secrets drawn, since only there are they
// redacted.
func (g *probeGen) text(path string, ctx bool) string {
	start := len(g.plants)
	defer func() { g.sanitised(start, ctx) }()
	var parts []string
	if g.mode == modeLeading && g.r.IntN(2) == 0 {
		// A leading marker classifies the rest of the text; left open, it
		// raises the payload's default class too.
		lead := g.maybe(g.sep(true))
		class, kind := pick(g.r, blockedClasses), kindLeadBlocked
		if g.r.IntN(4) == 0 {
			class, kind = pick(g.r, allowedClasses), kindLeadAllowed
		}
		tok := g.plant(plantedProbe{token: g.token(), kind: kind, path: path, class: class})
		g.raiseValues(class)
		return lead + g.marker(class, false) + g.maybe(g.sep(true)) + tok + " " + g.filler()
	}
	n := 1 + g.r.IntN(3)
	parts = append(parts, g.filler())
	for range n {
		switch d := g.r.IntN(10); {
		case d < 3:
			class := pick(g.r, blockedClasses)
			tok := g.plant(plantedProbe{token: g.token(), kind: kindPairBlocked, path: path, class: class})
			parts = append(parts, g.marker(class, false)+g.maybe(g.filler()+" ")+tok+g.maybe(" "+g.filler())+g.marker(class, true))
		case d < 5:
			class := pick(g.r, allowedClasses)
			tok := g.plant(plantedProbe{token: g.token(), kind: kindPairAllowed, path: path, class: class})
			parts = append(parts, g.marker(class, false)+tok+g.marker(class, true))
		case d < 7 && ctx:
			parts = append(parts, g.secret(path))
		case d < 8 && g.mode == modeAnomaly:
			parts = append(parts, g.anomaly(path))
		default:
			parts = append(parts, g.plant(plantedProbe{token: g.token(), kind: kindPublicText, path: path}))
		}
		parts = append(parts, g.filler())
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(g.sep(false))
		}
		b.WriteString(p)
	}
	return b.String()
}

// sanitised marks the plants from start on, all in one string, as
// sanitised when the string is in content context (ctx) or holds a
// marker (some of them has a class: every marker kind is planted with
// one).
func (g *probeGen) sanitised(start int, ctx bool) {
	marked := slices.ContainsFunc(g.plants[start:], func(p plantedProbe) bool { return p.class != "" })
	for i := start; i < len(g.plants); i++ {
		g.plants[i].sanitised = ctx || marked
	}
}

// raiseValues records that the payload's values raise its default class
// to class at least.
func (g *probeGen) raiseValues(class string) {
	g.valueFloor = maxClass(g.valueFloor, class)
}

// maxClass is the higher of two classes named as privacy names them; ""
// is below every class.
func maxClass(a, b string) string {
	return string(privacy.Max(privacy.Classification(a), privacy.Classification(b)))
}

func (g *probeGen) maybe(s string) string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return s
}

// anomaly returns marker structure that raises the payload's floor to a
// blocked class, with a token in it: an escaped opening marker (its close
// is then stray), a marker nested in a pair, an unclosed marker, a stray
// close, or a close of another class.
func (g *probeGen) anomaly(path string) string {
	class := pick(g.r, blockedClasses)
	tok := g.plant(plantedProbe{token: g.token(), kind: kindAnomaly, path: path, class: class})
	g.raiseValues(class)
	switch g.r.IntN(5) {
	case 0:
		return `\` + g.marker(class, false) + tok + g.marker(class, true)
	case 1:
		outer := pick(g.r, blockedClasses)
		return g.marker(outer, false) + "a " + g.marker(class, false) + tok + g.marker(class, true) + " b" + g.marker(outer, true)
	case 2:
		return g.filler() + " " + g.marker(class, true) + " " + tok
	case 3:
		other := pick(g.r, slices.DeleteFunc(slices.Clone(privacyClasses), func(c string) bool { return c == class }))
		return g.filler() + " " + g.marker(class, false) + tok + g.marker(other, true)
	default:
		return g.filler() + " " + g.marker(class, false) + tok
	}
}

var privacyClasses = []string{"normal", "internal", "sensitive", "local-only"}

// structureMessage returns a message whose content parts hold marker
// structure across two strings, at path messages[].content[].text. In
// modeStack: an allowed-class marker that stays open because a close
// pops the inner marker opened after it, then a blocked-class pair, which
// nests inside the open one and so raises the floor of the payload to its
// class, and a token at the payload's default class — in one string or
// the two. An engine that keeps one open slot instead of a stack forgets
// the outer marker after the close and sends the token. Otherwise: a
// blocked-class pair split across the two strings.
func (g *probeGen) structureMessage() *pnode {
	const path = "messages[].content[].text"
	var first, second string
	if g.mode == modeStack {
		outer, inner := pick(g.r, allowedClasses), pick(g.r, allowedClasses)
		blocked := pick(g.r, blockedClasses)
		tok := g.plant(plantedProbe{token: g.token(), kind: kindOpenBelow, path: path, class: blocked, sanitised: true})
		g.raiseValues(blocked)
		first = g.marker(outer, false) + g.filler() + " " + g.marker(inner, false) + g.filler() + g.marker(outer, true)
		second = g.marker(blocked, false) + g.filler() + g.marker(blocked, true) + g.sep(false) + tok + " " + g.filler()
		if g.r.IntN(2) == 0 {
			first, second = first+g.sep(false)+second, g.filler()
		}
	} else {
		class := pick(g.r, blockedClasses)
		tok := g.plant(plantedProbe{token: g.token(), kind: kindSplitPair, path: path, class: class, sanitised: true})
		g.raiseValues(class)
		first = g.filler() + " " + g.marker(class, false) + g.filler()
		second = tok + g.marker(class, true) + " " + g.filler()
	}
	part := func(text string) *pnode { return pobj(pmember{"type", pstr("text")}, pmember{"text", pstr(text)}) }
	return pobj(pmember{"role", pstr("user")}, pmember{"content", parr(part(first), part(second))})
}

// keyName returns a member name at path in content context: a plain
// public name, or one hiding a blocked-class token or a credential.
func (g *probeGen) keyName(path string, ctx bool) string {
	d := g.r.IntN(10)
	switch {
	case d < 2:
		class := pick(g.r, blockedClasses)
		tok := g.plant(plantedProbe{token: g.token(), kind: kindKeyPair, path: path, class: class, sanitised: true, key: true})
		return g.marker(class, false) + tok + g.marker(class, true)
	case d < 4 && g.mode != modeStack:
		class := pick(g.r, blockedClasses)
		tok := g.plant(plantedProbe{token: g.token(), kind: kindKeyLead, path: path, class: class, sanitised: true, key: true})
		g.nameFloor = maxClass(g.nameFloor, class)
		return g.marker(class, false) + tok
	case d < 5 && ctx:
		var s string
		switch g.r.IntN(3) {
		case 0:
			s = "sk-" + g.chars(alnum, 20)
		case 1:
			s = "ghp_" + g.chars(alnum, 30)
		default:
			s = "AKIA" + g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16)
		}
		return g.plant(plantedProbe{token: s, kind: kindKeySecret, path: path, secret: true, sanitised: true, key: true})
	}
	return g.plant(plantedProbe{token: g.token(), kind: kindPublicKey, path: path, sanitised: ctx, key: true})
}

// pnode is a payload tree in document order.
type pnode struct {
	kind    byte // 's' string, 'o' object, 'a' array, 'n' number, 'b' bool, 'z' null, 'x' an uninspectable Go value
	str     string
	num     float64
	items   []*pnode
	members []pmember
	bad     func() any
}

type pmember struct {
	name string
	val  *pnode
}

func pstr(s string) *pnode      { return &pnode{kind: 's', str: s} }
func pnum(f float64) *pnode     { return &pnode{kind: 'n', num: f} }
func pobj(ms ...pmember) *pnode { return &pnode{kind: 'o', members: ms} }
func parr(xs ...*pnode) *pnode  { return &pnode{kind: 'a', items: xs} }

// set appends member name to an object node.
func (n *pnode) set(name string, v *pnode) *pnode {
	n.members = append(n.members, pmember{name: name, val: v})
	return v
}

// goValue builds a fresh Go value for the tree: maps, slices, strings,
// float64s, bools and nil, with any uninspectable value in place.
func (n *pnode) goValue() any {
	switch n.kind {
	case 's':
		return n.str
	case 'n':
		return n.num
	case 'b':
		return true
	case 'z':
		return nil
	case 'x':
		return n.bad()
	case 'a':
		out := make([]any, len(n.items))
		for i, x := range n.items {
			out[i] = x.goValue()
		}
		return out
	}
	out := make(map[string]any, len(n.members))
	for _, m := range n.members {
		out[m.name] = m.val.goValue()
	}
	return out
}

// appendRaw writes the tree as JSON, escaping characters at random: a
// character may be written as \u00XX (or a surrogate pair), '/' as \/,
// control characters by name or number, so that only a decoder sees the
// text.
func (g *probeGen) appendRaw(dst []byte, n *pnode) []byte {
	switch n.kind {
	case 's':
		return g.appendRawString(dst, n.str)
	case 'n':
		return strconv.AppendFloat(dst, n.num, 'g', -1, 64)
	case 'b':
		return append(dst, "true"...)
	case 'z':
		return append(dst, "null"...)
	case 'a':
		dst = append(dst, '[')
		for i, x := range n.items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = g.appendSpace(dst)
			dst = g.appendRaw(dst, x)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, m := range n.members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = g.appendSpace(dst)
		dst = g.appendRawString(dst, m.name)
		dst = append(dst, ':')
		dst = g.appendSpace(dst)
		dst = g.appendRaw(dst, m.val)
	}
	return append(dst, '}')
}

func (g *probeGen) appendSpace(dst []byte) []byte {
	if g.r.IntN(4) == 0 {
		return append(dst, pick(g.r, []string{" ", "\n", "\n  ", "\t"})...)
	}
	return dst
}

func (g *probeGen) appendRawString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef0123456789ABCDEF"
	esc := func(dst []byte, u uint16) []byte {
		h := hex
		if g.r.IntN(2) == 0 {
			h = hex[16:]
		}
		return append(dst, '\\', 'u', h[u>>12], h[u>>8&15], h[u>>4&15], h[u&15])
	}
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"':
			dst = append(dst, '\\', '"')
		case r == '\\':
			dst = append(dst, '\\', '\\')
		case r == '\n' && g.r.IntN(2) == 0:
			dst = append(dst, '\\', 'n')
		case r == '\t' && g.r.IntN(2) == 0:
			dst = append(dst, '\\', 't')
		case r == '\r' && g.r.IntN(2) == 0:
			dst = append(dst, '\\', 'r')
		case r == '/' && g.r.IntN(2) == 0:
			dst = append(dst, '\\', '/')
		case r < 0x20 || g.r.IntN(6) == 0:
			if r > 0xFFFF {
				a, b := utf16.EncodeRune(r)
				dst = esc(esc(dst, uint16(a)), uint16(b))
			} else {
				dst = esc(dst, uint16(r))
			}
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// Uninspectable values a partly inspectable payload hides beside probes.
var errProbeRefusal = errors.New("conformance: nested value refuses inspection")

// refusingValue is a json.Marshaler that always fails.
type refusingValue struct{}

func (refusingValue) MarshalJSON() ([]byte, error) { return nil, errProbeRefusal }

var uninspectableValues = []struct {
	name string
	make func() any
}{
	{"a func", func() any { return func() {} }},
	{"a channel", func() any { return make(chan string) }},
	{"a failing json.Marshaler", func() any { return refusingValue{} }},
	{"a reference cycle", func() any { s := []any{"x", nil}; s[1] = s; return s }},
	{"a NaN number", func() any { return math.NaN() }},
	{"a complex number", func() any { return complex(1, 2) }},
}

// newProbeBatch generates n payloads from seed, spread over the batch's
// providers so that each appears once n reaches their number. Of every
// eight payloads, four are clean, two have leading markers, one has broken
// marker structure (in turn, anomalies of every kind with a pair split
// across two strings, or only an outer marker left open by an inner close
// under a later blocked pair, sent to a remote provider) and one is partly
// uninspectable; every name of splitProviders gets one holding content a
// remote provider is denied (blockSplitProviders).
// fixtureProvider is one of the providers.
func newProbeBatch(seed uint64, n int, fixtureProvider string, named ...string) *probeBatch {
	g := newProbeGen(seed)
	providers := g.probeProviders(fixtureProvider, named)
	b := &probeBatch{seed: seed, canonical: map[string]string{}}
	for _, p := range providers {
		b.providers = append(b.providers, p.name)
		b.canonical[p.name] = p.canonical
	}
	order := g.r.Perm(len(providers))
	// Failing payloads take the uninspectable values in turn, so a batch
	// with at least as many failing payloads as values holds each.
	bad := g.r.Perm(len(uninspectableValues))
	failing := 0
	for i := range n {
		p := providers[order[i%len(order)]]
		if i%len(order) == len(order)-1 {
			order = g.r.Perm(len(providers))
		}
		mode := modeClean
		switch d := i % 8; {
		case d == 3 || d == 6:
			mode = modeLeading
		case d == 5 && i/8%2 == 0:
			mode = modeAnomaly
		case d == 5:
			mode = modeStack
			// Only a remote provider is denied the token the stack
			// withholds: a local provider trades its place with the next
			// remote one of the round, so that it still gets a payload.
			k := i % len(order)
			for j := k + 1; p.local && j < len(order); j++ {
				if !providers[order[j]].local {
					order[k], order[j] = order[j], order[k]
					p = providers[order[k]]
				}
			}
			for p.local {
				p = providers[g.r.IntN(len(providers))]
			}
		case d == 7:
			mode = modeFailing
		}
		u := bad[failing%len(bad)]
		if mode == modeFailing {
			failing++
		}
		b.cases = append(b.cases, g.payloadCase(i, p, mode, u))
	}
	g.blockSplitProviders(b, providers)
	return b
}

// blockSplitProviders sees that every name of splitProviders gets an
// inspectable payload holding content a remote provider is denied: only
// there does an adapter that compares provider names as Go does, not as
// JavaScript does, show it (the content sent on, or withheld); a payload
// it must refuse whole shows nothing. When none of a name's payloads is
// one, one of its inspectable ones is drawn again until it is — or, when
// all of them are uninspectable, the batch gets one more payload for the
// name. A batch that holds one for each name draws nothing more.
func (g *probeGen) blockSplitProviders(b *probeBatch, providers []probeProvider) {
	for _, p := range providers {
		if !slices.Contains(splitProviders, p.name) || slices.ContainsFunc(b.cases, func(c *probeCase) bool { return c.provider == p.name && holdsBlocked(c) }) {
			continue
		}
		i := slices.IndexFunc(b.cases, func(c *probeCase) bool { return c.provider == p.name && c.failing == "" })
		if i < 0 {
			i = len(b.cases)
			b.cases = append(b.cases, nil)
		}
		for range 64 {
			if b.cases[i] = g.payloadCase(i, p, modeLeading, 0); holdsBlocked(b.cases[i]) {
				break
			}
		}
	}
}

// holdsBlocked reports whether c is inspectable and holds a probe of a
// class a remote provider is denied.
func holdsBlocked(c *probeCase) bool {
	return c.failing == "" && slices.ContainsFunc(c.plants, func(p plantedProbe) bool {
		return p.kind == kindPairBlocked || p.kind == kindLeadBlocked
	})
}

// payloadCase builds one payload in mode for provider p.
func (g *probeGen) payloadCase(index int, p probeProvider, mode, bad int) *probeCase {
	g.plants, g.mode, g.valueFloor, g.nameFloor = nil, mode, "", ""
	root := pobj()
	c := &probeCase{index: index, provider: p.name, canonical: p.canonical}
	// Each slot places text under a content key at some depth; a payload
	// holds a random selection of them, always with one message.
	slots := g.r.Perm(len(probeSlots))
	k := 3 + g.r.IntN(len(probeSlots)-5)
	used := map[int]bool{}
	for _, s := range slots[:k] {
		used[s] = true
	}
	used[0] = true
	for i, slot := range probeSlots {
		if used[i] {
			slot.fill(g, root)
		}
	}
	root.set("model", pstr(FixtureModelID))
	root.set("temperature", pnum(float64(g.r.IntN(10))/10))
	if mode == modeFailing {
		u := uninspectableValues[bad]
		c.failing = u.name
		c.failPath = g.nestBad(root, u.make)
	}
	c.tree, c.plants = root, g.plants
	c.valueFloor, c.nameFloor = g.valueFloor, g.nameFloor
	switch {
	case mode == modeFailing:
		c.shape = shapeMap
	default:
		c.shape = pick(g.r, []string{shapeRaw, shapeBytes, shapeMap})
	}
	if c.shape != shapeMap {
		c.raw = g.appendRaw(nil, root)
	}
	return c
}

// nestBad places an uninspectable value deep inside the payload, beside
// the probes, and returns its path.
func (g *probeGen) nestBad(root *pnode, bad func() any) string {
	x := &pnode{kind: 'x', bad: bad}
	switch g.r.IntN(3) {
	case 0:
		md := root.set("requestMetadata", pobj())
		md.set("trace", parr(pstr(g.filler()), pobj(pmember{"hook", x})))
		return "requestMetadata.trace[1].hook"
	case 1:
		msgs := root.members[0].val // slot 0 always fills "messages" first
		msgs.items = append(msgs.items, pobj(pmember{"role", pstr("user")}, pmember{"content", x}))
		return "messages[].content"
	default:
		root.set("extensions", pobj(pmember{"options", parr(pnum(1), x)}))
		return "extensions.options[1]"
	}
}

// probeSlot places probes at one family of paths.
type probeSlot struct {
	fill func(g *probeGen, root *pnode)
}

// probeSlots are the placements. Slot 0 (messages) is always used and is
// filled first.
var probeSlots = []probeSlot{
	{func(g *probeGen, root *pnode) {
		msgs := root.set("messages", parr())
		for range 1 + g.r.IntN(2) {
			m := pobj(pmember{"role", pstr(pick(g.r, []string{"user", "assistant", "system"}))})
			if g.r.IntN(2) == 0 {
				m.set("content", pstr(g.text("messages[].content", true)))
			} else {
				parts := parr()
				for range 1 + g.r.IntN(2) {
					parts.items = append(parts.items, pobj(pmember{"type", pstr("text")}, pmember{"text", pstr(g.text("messages[].content[].text", true))}))
				}
				m.set("content", parts)
			}
			if g.r.IntN(3) == 0 {
				m.set("name", pstr(g.text("messages[].name", false)))
			}
			msgs.items = append(msgs.items, m)
		}
		if g.mode == modeAnomaly || g.mode == modeStack {
			msgs.items = append(msgs.items, g.structureMessage())
		}
		if g.r.IntN(2) == 0 {
			g.noQuote = true
			args := `{"path":"` + g.filler() + `","note":` + strconv.Quote(g.text("messages[].tool_calls[].function.arguments", true)) + `}`
			g.noQuote = false
			call := pobj(pmember{"id", pstr("call-" + strconv.Itoa(g.r.IntN(1000)))}, pmember{"type", pstr("function")},
				pmember{"function", pobj(pmember{"name", pstr("read")}, pmember{"arguments", pstr(args)})})
			msgs.items = append(msgs.items, pobj(pmember{"role", pstr("assistant")}, pmember{"tool_calls", parr(call)}))
		}
	}},
	{func(g *probeGen, root *pnode) { root.set("system", pstr(g.text("system", true))) }},
	{func(g *probeGen, root *pnode) { root.set("prompt", pstr(g.text("prompt", true))) }},
	{func(g *probeGen, root *pnode) { root.set("instructions", pstr(g.text("instructions", true))) }},
	{func(g *probeGen, root *pnode) {
		tools := root.set("tools", parr())
		for range 1 + g.r.IntN(2) {
			props := pobj()
			for range 1 + g.r.IntN(2) {
				props.set(g.keyName("tools[].function.parameters.properties.<member name>", true),
					pobj(pmember{"type", pstr("string")}, pmember{"description", pstr(g.text("tools[].function.parameters.properties.<member>.description", true))}))
			}
			tools.items = append(tools.items, pobj(
				pmember{"type", pstr("function")},
				pmember{"description", pstr(g.text("tools[].description", true))},
				pmember{"function", pobj(pmember{"name", pstr("lookup")}, pmember{"parameters", pobj(pmember{"type", pstr("object")}, pmember{"properties", props})})},
			))
		}
	}},
	{func(g *probeGen, root *pnode) {
		args := pobj(pmember{"query", pstr(g.text("arguments.query", true))})
		args.set("filters", parr(pstr(g.text("arguments.filters[]", true)), pnum(3)))
		root.set("arguments", args)
	}},
	{func(g *probeGen, root *pnode) {
		contents := root.set("contents", parr())
		parts := parr(pobj(pmember{"text", pstr(g.text("contents[].parts[].text", true))}), pstr(g.text("contents[].parts[]", true)))
		contents.items = append(contents.items, pobj(pmember{"role", pstr("user")}, pmember{"parts", parts}))
		root.set("system_instruction", pobj(pmember{"parts", parr(pobj(pmember{"text", pstr(g.text("system_instruction.parts[].text", true))}))}))
	}},
	{func(g *probeGen, root *pnode) {
		// Nested objects and arrays below a content key, with member names
		// in content context.
		md := root.set("metadata", pobj())
		cur := md
		path := "metadata"
		for range 1 + g.r.IntN(3) {
			if g.r.IntN(2) == 0 {
				next := pobj()
				cur.set(pick(g.r, []string{"detail", "extra", "notes"}), parr(pnum(1), next))
				path += ".<fixed>[1]"
				cur = next
			} else {
				next := pobj()
				cur.set(pick(g.r, []string{"scope", "origin", "trace"}), next)
				path += ".<fixed>"
				cur = next
			}
		}
		cur.set(g.keyName(path+".<member name>", true), pstr(g.text(path+".<member>", true)))
		cur.set("summary", pstr(g.text(path+".summary", true)))
		// A name strings.EqualFold takes for the structural stop_reason
		// and toLowerCase does not (long s): in content context, its text
		// is sanitised and the secret it holds redacted.
		k := pick(g.r, foldedStructuralNames)
		start := len(g.plants)
		folded := g.text(path+"."+k, true) + " " + g.secret(path+"."+k)
		g.sanitised(start, true)
		cur.set(k, pstr(folded))
	}},
	{func(g *probeGen, root *pnode) {
		root.set("input", parr(pobj(pmember{"role", pstr("user")},
			pmember{"content", parr(pobj(pmember{"type", pstr("input_text")}, pmember{"text", pstr(g.text("input[].content[].text", true))}))})))
		root.set("thinking", pstr(g.text("thinking", true)))
		root.set("context", pobj(pmember{"history", parr(pstr(g.text("context.history[]", true)))}))
	}},
	{func(g *probeGen, root *pnode) {
		// Outside content context: only text holding a marker is
		// sanitised; plain member names and text are kept as they are.
		route := root.set("routing", pobj())
		route.set("label", pstr(g.outsideText("routing.label")))
		route.set(g.keyName("routing.<member name>", false), pnum(1))
	}},
}

// foldedStructuralNames are member names that fold onto structural keys
// of SPEC §8 (strings.EqualFold) but do not lower-case to them as
// toLowerCase does: no structural keys.
var foldedStructuralNames = []string{"\u017ftop_reason", "stoprea\u017fon"}

// outsideText is a string outside content context: a public token, or a
// blocked-class pair (a string holding a marker is always sanitised).
func (g *probeGen) outsideText(path string) string {
	if g.r.IntN(2) == 0 {
		return g.filler() + " " + g.plant(plantedProbe{token: g.token(), kind: kindPublicText, path: path})
	}
	class := pick(g.r, blockedClasses)
	tok := g.plant(plantedProbe{token: g.token(), kind: kindPairBlocked, path: path, class: class, sanitised: true})
	return g.filler() + " " + g.marker(class, false) + tok + g.marker(class, true)
}
