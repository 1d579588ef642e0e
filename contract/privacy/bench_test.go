package privacy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// chatPayload builds a provider request like a coding agent sends: a system
// prompt, two tool definitions and n messages with tool calls, tool results,
// a few markers and a few secrets.
func chatPayload(n int, filler string) map[string]any {
	messages := make([]any, 0, n)
	for i := range n {
		switch i % 4 {
		case 0:
			messages = append(messages, map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": fmt.Sprintf("Please look at step %d. %s", i, filler)},
			}})
		case 1:
			messages = append(messages, map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "I will read the file first. " + filler},
				map[string]any{"type": "tool_use", "id": fmt.Sprintf("call_%d", i), "name": "read",
					"input": map[string]any{"path": "src/main.go", "limit": 200}},
			}})
		case 2:
			messages = append(messages, map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("call_%d", i-1),
					"content": "package main\n// config: api_key=abcd1234efgh\nfunc main() {}\n" + filler},
			}})
		default:
			messages = append(messages, map[string]any{"role": "assistant", "content": "[ds4:internal]internal design notes[/ds4:internal] and [ds4:local-only]customer data[/ds4:local-only] " + filler})
		}
	}
	return map[string]any{
		"model":      "claude-sonnet",
		"max_tokens": 4096,
		"system":     "You are a careful coding agent. Never print credentials such as sk-abcdefgh12345678.",
		"tools": []any{
			map[string]any{"name": "read", "description": "Read a file from the workspace.",
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{
					"path": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}}},
			map[string]any{"name": "bash", "description": "Run a shell command.",
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{
					"command": map[string]any{"type": "string"}}}},
		},
		"messages": messages,
	}
}

// redactionSecrets are secrets of every shape SPEC §8 redacts, one per
// secret message of redactionPayload in turn.
var redactionSecrets = []string{
	"sk-proj%06dabcdefgh",
	"ghp_%06dabcdefghijklmnop",
	"AKIA%016d",
	"Authorization: Bearer eyJ%06d.abcdefghij",
	"password = \"hunter%06d\"",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIE%06dabcdefghijklmnopqrstuvwxyz\n-----END RSA PRIVATE KEY-----",
}

// redactionPayload builds a provider request of n messages of prose, a
// fourth of them holding a withheld pair (local-only or sensitive, one
// blocked block each) and a fourth a secret of each shape in turn (one
// redaction each), and a system prompt holding one more secret.
func redactionPayload(n int) map[string]any {
	prose := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 8)
	messages := make([]any, 0, n)
	for i := range n {
		text := fmt.Sprintf("Step %d. %s", i, prose)
		switch i % 4 {
		case 1:
			class := []string{"local-only", "sensitive"}[i/4%2]
			text += " [ds4:" + class + "]customer record " + strconv.Itoa(i) + "[/ds4:" + class + "] done."
		case 3:
			text += " see " + fmt.Sprintf(redactionSecrets[i/4%len(redactionSecrets)], i) + " in the log."
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		messages = append(messages, map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": text}}})
	}
	return map[string]any{
		"model":    "claude-sonnet",
		"system":   "You are a careful coding agent. Never print credentials such as sk-abcdefgh12345678.",
		"messages": messages,
	}
}

func benchPayload(b *testing.B, payload any) {
	e := mustEngine(b, DefaultConfig())
	if _, err := e.SanitizePayload("remote", payload); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.SanitizePayload("remote", payload); err != nil {
			b.Fatal(err)
		}
	}
}

// benchValid is the floor a raw figure is compared with: validating the
// same bytes with encoding/json.
func benchValid(b *testing.B, doc []byte) {
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(doc) {
			b.Fatal("invalid JSON")
		}
	}
}

// BenchmarkSanitizePayload measures sanitisation of raw JSON beside its
// floor, json.Valid on the same bytes (<payload>/raw and
// <payload>/json.Valid), for three payloads of the chat shape: small (3
// messages, about 1 kB), large (400 messages, about 1 MB) and redactions
// (2,000 shorter messages, about 1 MB, 500 of them with a withheld
// local-only segment and 501 secrets redacted); and Go maps.
func BenchmarkSanitizePayload(b *testing.B) {
	chat := chatPayload(20, "Some ordinary prose that explains the change in a sentence or two.")
	chatJSON, _ := json.Marshal(chat)
	big := chatPayload(400, strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 40))
	bigJSON, _ := json.Marshal(big)
	smallJSON, _ := json.Marshal(chatPayload(3, "Some ordinary prose that explains the change in a sentence or two."))
	redactJSON, _ := json.Marshal(redactionPayload(2000))
	e := mustEngine(b, DefaultConfig())
	if r, err := e.SanitizePayload("remote", json.RawMessage(redactJSON)); err != nil || r.BlockedBlocks != 500 || r.SecretRedactions != 501 {
		b.Fatalf("the redactions payload: %d blocked blocks, %d redactions (%v); want 500 and 501", r.BlockedBlocks, r.SecretRedactions, err)
	}
	for _, p := range []struct {
		name string
		doc  []byte
	}{{"small", smallJSON}, {"large", bigJSON}, {"redactions", redactJSON}} {
		b.Run(fmt.Sprintf("%s/raw-%dB", p.name, len(p.doc)), func(b *testing.B) {
			b.SetBytes(int64(len(p.doc)))
			benchPayload(b, json.RawMessage(p.doc))
		})
		b.Run(p.name+"/json.Valid", func(b *testing.B) { benchValid(b, p.doc) })
	}
	b.Run(fmt.Sprintf("chat20/raw-%dB", len(chatJSON)), func(b *testing.B) { benchPayload(b, json.RawMessage(chatJSON)) })
	b.Run("chat20/go-map", func(b *testing.B) { benchPayload(b, chat) })
	b.Run("large/go-map", func(b *testing.B) {
		b.SetBytes(int64(len(bigJSON)))
		benchPayload(b, big)
	})
}
