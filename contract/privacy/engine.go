package privacy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/upstream"
)

// Engine enforces one privacy Config. It is immutable after New and safe
// for concurrent use.
type Engine struct {
	enabled       bool
	def           Classification
	redact        bool
	local         map[string]struct{}
	remoteDefault classMask
	remote        map[string]classMask
	// valuesOnly leaves member names out of the marker-structure floor,
	// as the TypeScript kit's engine does (see package upstream).
	valuesOnly bool
}

func init() {
	upstream.WithoutNameFloor = func(e any) any {
		c := *e.(*Engine)
		c.valuesOnly = true
		return &c
	}
}

// ErrBlankProvider is returned when a provider name is empty after
// trimming.
var ErrBlankProvider = errors.New("privacy: provider name is blank")

// ErrUninspectable is wrapped by every error that stops sanitisation
// because part of the payload cannot be fully inspected: an invalid JSON
// document, a json.Marshaler or encoding.TextMarshaler that fails or writes
// invalid JSON, a func, a channel, a complex number, a NaN or infinite
// float, an unsupported map key, a reference cycle, or nesting deeper than
// the JSON layer accepts. The error never contains payload text.
var ErrUninspectable = errors.New("privacy: payload cannot be fully inspected")

// New validates cfg and returns an engine for it. Every classification
// must be one of the four classes, and no two RemoteProviders names may
// normalise (trimmed, lower-cased) to the same provider; otherwise the
// error wraps ErrInvalidConfig.
func New(cfg Config) (*Engine, error) { return cfg.compile() }

// Policy is what the engine allows a provider to receive.
type Policy struct {
	// Provider is the normalised provider name (trimmed, lower-cased).
	Provider string
	// Destination is Local for a configured local provider, else Remote.
	Destination Destination
	// Allowed lists the classes the provider may receive, lowest first.
	Allowed []Classification
}

// Allows reports whether the policy allows class c.
func (p Policy) Allows(c Classification) bool {
	for _, a := range p.Allowed {
		if a == c {
			return true
		}
	}
	return false
}

// Policy returns the policy for provider. A local provider is allowed all
// four classes; a remote provider its RemoteProviders entry, or
// RemoteDefaultAllowed. A blank provider is an error wrapping
// ErrBlankProvider.
func (e *Engine) Policy(provider string) (Policy, error) {
	name, dest, mask, err := e.policy(provider)
	if err != nil {
		return Policy{}, err
	}
	return Policy{Provider: name, Destination: dest, Allowed: mask.list()}, nil
}

func (e *Engine) policy(provider string) (string, Destination, classMask, error) {
	if e == nil || !e.def.Valid() {
		// A zero Engine would behave as a disabled one: refuse instead.
		return "", "", classMask{}, fmt.Errorf("%w: the engine was not created by New", ErrInvalidConfig)
	}
	name := normalizeProvider(provider)
	if name == "" {
		return "", "", classMask{}, ErrBlankProvider
	}
	if _, ok := e.local[name]; ok {
		return name, Local, classMask{true, true, true, true}, nil
	}
	if m, ok := e.remote[name]; ok {
		return name, Remote, m, nil
	}
	return name, Remote, e.remoteDefault, nil
}

// Result is a sanitised payload and what sanitisation did.
type Result struct {
	// Value is the sanitised payload as JSON, written as JavaScript's
	// JSON.stringify writes it.
	Value json.RawMessage `json:"value"`
	// Classification is the highest class seen in the payload (at least
	// the effective default class).
	Classification Classification `json:"classification"`
	// Changed reports whether sanitisation altered the payload or applied
	// a marker.
	Changed bool `json:"changed"`
	// BlockedBlocks counts the segments and binary values withheld.
	BlockedBlocks int `json:"blockedBlocks"`
	// SecretRedactions counts the secrets replaced.
	SecretRedactions int `json:"secretRedactions"`
	// Destination is the provider's destination.
	Destination Destination `json:"destination"`
}

// ForProvider returns the result as an adapter's EnforcePrivacy reports it
// for provider.
func (r Result) ForProvider(provider string) contract.PrivacyResult {
	return contract.PrivacyResult{
		Provider:         provider,
		Destination:      r.Destination,
		Payload:          r.Value,
		Changed:          r.Changed,
		BlockedBlocks:    r.BlockedBlocks,
		SecretRedactions: r.SecretRedactions,
	}
}

// SanitizePayload sanitises payload for provider.
//
// A payload that is a byte slice (json.RawMessage, []byte, or a pointer to
// one) is read as one JSON document. Any other value is encoded as
// encoding/json encodes it, except that byte slices inside it are kept as
// binary data (see the package documentation). Objects are walked in
// JavaScript property order. Any part of the payload that cannot be
// fully inspected makes the call fail closed with an error wrapping
// ErrUninspectable; a blank provider is an error wrapping ErrBlankProvider.
func (e *Engine) SanitizePayload(provider string, payload any) (Result, error) {
	_, dest, mask, err := e.policy(provider)
	if err != nil {
		return Result{}, err
	}
	ws := getWork()
	defer ws.release()
	return e.sanitizeWith(ws, dest, mask, payload)
}

// sanitizeWith is SanitizePayload for a provider of destination dest
// allowed the classes in mask, in the working space ws.
func (e *Engine) sanitizeWith(ws *work, dest Destination, mask classMask, payload any) (Result, error) {
	toks, size, err := encodePayload(payload, ws)
	if err != nil {
		return Result{}, err
	}
	ws.toks = toks // what release clears
	// The payload is read once into tokens; the floor is a pass over
	// their strings, and the sanitised JSON is written in one more pass.
	// The output is about as long as the input JSON, when that is known.
	// The walker and the floor work on copies on the stack (writing their
	// slices there costs no write barrier) and go back to ws for reuse.
	w := ws.walker
	defer func() { ws.walker = w }()
	w.toks, w.out = toks, make([]byte, 0, size+size/16)
	if !e.enabled {
		w.write()
		return Result{Value: w.out, Classification: e.def, Destination: dest}, nil
	}
	w.allowed, w.redact = mask, e.redact && dest == Remote
	fl := ws.floor
	w.def = Max(e.def, fl.of(toks, !e.valuesOnly))
	ws.floor = fl
	w.marked = fl.marked
	w.st.class = w.def
	w.value(keyOther, false)
	return Result{
		Value:            w.out,
		Classification:   w.st.class,
		Changed:          w.st.changed,
		BlockedBlocks:    w.st.blocked,
		SecretRedactions: w.st.redactions,
		Destination:      dest,
	}, nil
}

// TextResult is a sanitised text and what sanitisation did.
type TextResult struct {
	// Text is the sanitised text.
	Text string `json:"text"`
	// Classification is the highest class seen in the text.
	Classification Classification `json:"classification"`
	// Changed reports whether sanitisation altered the text or applied a
	// marker.
	Changed bool `json:"changed"`
	// BlockedBlocks counts the segments withheld.
	BlockedBlocks int `json:"blockedBlocks"`
	// SecretRedactions counts the secrets replaced.
	SecretRedactions int `json:"secretRedactions"`
	// Destination is the provider's destination.
	Destination Destination `json:"destination"`
}

// SanitizeText sanitises one text for provider as content: exactly as
// SanitizePayload treats a payload {"content": text}, including the
// marker-structure floor of the text itself.
func (e *Engine) SanitizeText(provider, text string) (TextResult, error) {
	_, dest, mask, err := e.policy(provider)
	if err != nil {
		return TextResult{}, err
	}
	if !e.enabled {
		return TextResult{Text: text, Classification: e.def, Destination: dest}, nil
	}
	z := sanitizer{allowed: mask, redact: e.redact && dest == Remote}
	var fl floorState
	fl.value(text)
	z.def = Max(e.def, fl.finish())
	st := textStats{class: z.def}
	out := z.text(text, len(fl.markers) > 0, &st)
	return TextResult{
		Text:             out,
		Classification:   st.class,
		Changed:          st.changed,
		BlockedBlocks:    st.blocked,
		SecretRedactions: st.redactions,
		Destination:      dest,
	}, nil
}

// uninspectable builds an ErrUninspectable error from a description that
// holds no payload text.
func uninspectable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUninspectable}, args...)...)
}
