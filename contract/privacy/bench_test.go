package privacy

import (
	"encoding/json"
	"fmt"
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

func BenchmarkSanitizePayload(b *testing.B) {
	chat := chatPayload(20, "Some ordinary prose that explains the change in a sentence or two.")
	chatJSON, _ := json.Marshal(chat)
	big := chatPayload(400, strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 40))
	bigJSON, _ := json.Marshal(big)
	b.Run(fmt.Sprintf("chat20/raw-%dB", len(chatJSON)), func(b *testing.B) { benchPayload(b, json.RawMessage(chatJSON)) })
	b.Run("chat20/go-map", func(b *testing.B) { benchPayload(b, chat) })
	b.Run(fmt.Sprintf("large/raw-%dB", len(bigJSON)), func(b *testing.B) {
		b.SetBytes(int64(len(bigJSON)))
		benchPayload(b, json.RawMessage(bigJSON))
	})
	// The floor the raw figure is compared with: validating the same bytes.
	b.Run("large/json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(bigJSON)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(bigJSON) {
				b.Fatal("invalid JSON")
			}
		}
	})
	b.Run("large/go-map", func(b *testing.B) {
		b.SetBytes(int64(len(bigJSON)))
		benchPayload(b, big)
	})
}
