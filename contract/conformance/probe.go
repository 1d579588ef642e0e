package conformance

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// The probe strings the privacy case hides in its payload. An adapter must
// never let them reach the transport, and nothing the kit writes (reports,
// errors, failure explanations) ever contains them.
const (
	ProbePrivateValue = "DS4_CONFORMANCE_PRIVATE_VALUE"
	ProbeCredential   = "sk-conformance-credential"
)

// privacyProbeText is the user content of the privacy case: a local-only
// segment holding the private probe, and a credential-shaped secret.
const privacyProbeText = "[ds4:local-only]" + ProbePrivateValue + "[/ds4:local-only] public " + ProbeCredential + "-123456"

// fallbackText is the user content of requests whose payload does not matter.
const fallbackText = "Summarise the conformance project."

// chatPayload is the payload shape the cases send: one user message.
type chatPayload struct {
	Messages []chatMessage `json:"messages"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// PrivacyPayload returns the privacy case's payload, holding both probes.
func PrivacyPayload() any {
	return chatPayload{Messages: []chatMessage{{Role: "user", Content: privacyProbeText}}}
}

// PlainPayload returns a payload with no private content, used where the
// payload is not what a check is about.
func PlainPayload() any {
	return chatPayload{Messages: []chatMessage{{Role: "user", Content: fallbackText}}}
}

// ErrHostilePayload is what HostilePayload's MarshalJSON returns.
var ErrHostilePayload = errors.New("conformance: payload refuses inspection")

// HostilePayload returns a payload whose inspection fails: it is a
// json.Marshaler that returns ErrHostilePayload, and its only field is a
// channel no encoder can represent. An adapter must fail closed on it.
func HostilePayload() any { return hostilePayload{} }

type hostilePayload struct {
	Messages chan string `json:"messages"`
}

func (hostilePayload) MarshalJSON() ([]byte, error) { return nil, ErrHostilePayload }

// ContainsProbe reports whether data holds either probe: verbatim, or inside
// any JSON string or member name once decoded (so escaped forms are found).
func ContainsProbe(data []byte) bool { return ContainsAny(data, ProbePrivateValue, ProbeCredential) }

// ContainsAny reports whether data holds any of the non-empty probes:
// verbatim, or, when data is JSON, inside any string or member name once
// decoded (so escaped forms are found).
func ContainsAny(data []byte, probes ...string) bool {
	has := func(s string) bool {
		for _, p := range probes {
			if p != "" && strings.Contains(s, p) {
				return true
			}
		}
		return false
	}
	if has(string(data)) {
		return true
	}
	if !mayBeJSON(data) {
		return false
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	return valueHas(v, has)
}

// mayBeJSON reports whether data starts, after JSON whitespace, as a JSON
// value does: text that does not (most diagnostics and errors) cannot
// decode, so it is not handed to the decoder, whose errors cost more than
// the search.
func mayBeJSON(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', '-', 't', 'f', 'n':
			return true
		}
		return '0' <= c && c <= '9'
	}
	return false
}

func valueHas(v any, has func(string) bool) bool {
	switch v := v.(type) {
	case string:
		return has(v)
	case []any:
		for _, e := range v {
			if valueHas(e, has) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if has(k) || valueHas(e, has) {
				return true
			}
		}
	}
	return false
}

// maxShown bounds the length of any adapter-provided text a failure shows.
const maxShown = 160

// redacted replaces each probe in shown text.
const redacted = "[probe redacted]"

// Redact makes adapter-provided text safe to show in a failure, a log or a
// report: it replaces the probes, the payload texts the kit sends and the
// recording transport's output, and cuts the result to a bounded length.
func Redact(s string) string { return scrub(s) }

// scrub makes one adapter-provided value safe to show: redactProbes, then
// cut to maxShown bytes on a rune boundary.
func scrub(s string) string {
	s = redactProbes(s)
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// redactProbes replaces the probes, the payload texts the kit sends and the
// recording transport's output.
func redactProbes(s string) string {
	for _, p := range []string{privacyProbeText, TransportOutput, fallbackText, ProbePrivateValue, ProbeCredential} {
		s = strings.ReplaceAll(s, p, redacted)
	}
	return strings.ReplaceAll(s, "conformance completion", "[output redacted]")
}
