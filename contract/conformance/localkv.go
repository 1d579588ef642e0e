package conformance

import (
	"bytes"
	"encoding/json"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// The local KV checks (capability local-kv-reuse) complete with a provider
// that the contract's default privacy configuration treats as local, and
// send payloads of one documented shape (see LocalKVPayload), so that a
// factory can tell its adapter where the reusable prefix is.
const (
	// LocalKVProvider is the provider of the local KV checks' local
	// completions: a local provider under the default privacy
	// configuration. An adapter under test must treat it as local.
	LocalKVProvider = "ollama"
	// LocalKVModel is the model of the local KV checks' completions.
	LocalKVModel = "conformance-local-model"
	// LocalKVRuntimeRevision and LocalKVModelRevision are revisions a
	// factory may configure when its adapter needs them.
	LocalKVRuntimeRevision = "conformance-runtime-revision"
	LocalKVModelRevision   = "conformance-model-revision"
)

// LocalKVPrompt is the "localKv" member of a local KV payload: the reusable
// prompt prefix, the options that shape its KV state, and the token counts.
// An absent option (nil) is omitted from the payload; JSON null is written
// json.RawMessage("null").
type LocalKVPrompt struct {
	Prefix        string          `json:"prefix"`
	SystemOptions json.RawMessage `json:"systemOptions,omitempty"`
	ToolOptions   json.RawMessage `json:"toolOptions,omitempty"`
	PrefixTokens  int64           `json:"prefixTokens"`
	ContextTokens int64           `json:"contextTokens"`
}

// localKVPayload is the payload shape of the local KV checks.
type localKVPayload struct {
	LocalKV  LocalKVPrompt    `json:"localKv"`
	Messages []localKVMessage `json:"messages"`
}

type localKVMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// localKVMessageText is the user message of every local KV payload.
const localKVMessageText = "Explain the reference project's entry point."

// LocalKVPayload returns the payload the local KV checks send for p:
//
//	{"localKv":{"prefix":…,"systemOptions":…,"toolOptions":…,"prefixTokens":…,"contextTokens":…},
//	 "messages":[{"role":"user","content":…}]}
//
// Privacy enforcement for a local provider leaves it unchanged (no marker,
// no redaction), so the sanitised payload an adapter prepares from is this
// one. ReadLocalKVPrompt reads it back.
func LocalKVPayload(p LocalKVPrompt) json.RawMessage {
	b, err := json.Marshal(localKVPayload{LocalKV: p, Messages: []localKVMessage{{Role: "user", Content: localKVMessageText}}})
	if err != nil {
		// Unreachable for options that are JSON documents; the checks only
		// build such prompts.
		panic("conformance: local KV payload does not encode: " + err.Error())
	}
	return b
}

// LocalKVMessageText returns the user message every local KV payload
// carries. Like the prefix, it must never appear in what an adapter
// reports.
func LocalKVMessageText() string { return localKVMessageText }

// ReadLocalKVPrompt reads the "localKv" member of a (sanitised) payload of
// the shape LocalKVPayload writes. It reports false when the payload is not
// a JSON object with such a member, or the member is malformed (a prefix
// that is not a string, token counts that are not integers, options that
// are not JSON documents). A factory's adapter uses it to find the reusable
// prefix; it never fails on other payloads, which then take the ordinary
// transport.
func ReadLocalKVPrompt(payload json.RawMessage) (LocalKVPrompt, bool) {
	var p struct {
		LocalKV *LocalKVPrompt `json:"localKv"`
	}
	if json.Unmarshal(payload, &p) != nil || p.LocalKV == nil {
		return LocalKVPrompt{}, false
	}
	kv := *p.LocalKV
	for _, o := range []json.RawMessage{kv.SystemOptions, kv.ToolOptions} {
		if o == nil {
			continue
		}
		s := jsonw.NewScanner(o)
		if s.Skip() != nil || s.End() != nil {
			return LocalKVPrompt{}, false
		}
	}
	kv.SystemOptions, kv.ToolOptions = bytes.Clone(kv.SystemOptions), bytes.Clone(kv.ToolOptions)
	return kv, true
}

// Options returns the prompt's system and tool options as eligibility
// inputs: nil when absent, the raw JSON otherwise (so that JSON null stays
// distinct from absent).
func (p LocalKVPrompt) Options() (system, tool any) {
	if p.SystemOptions != nil {
		system = p.SystemOptions
	}
	if p.ToolOptions != nil {
		tool = p.ToolOptions
	}
	return system, tool
}
