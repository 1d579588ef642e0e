package mutants

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// The mutants of bounds a default run never reaches: the 100 diagnostics
// SPEC §12 keeps, records of 1 MiB, raw JSON nested 64 deep, histories of
// 10,000 messages and more, tool results over 128 KiB, tens of local KV
// completions on one instance.
var pendingBounds = []Mutant{
	{
		// The model sees it when a sequence reaches 100 diagnostics (2 of
		// seeds 1–5), not with the catalogue's seed.
		Name: "diagnostics-keep-101", Family: FamilyBounds,
		Breaks: "the reference adapter keeps the newest 100 diagnostics (§12); this one keeps 101 (`len > 101` for `len > 100`)",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   func(a contract.Adapter, e *env) contract.Adapter { return newOwnLog(a, e, keepNewest(101)) },
	},
	{
		// The model sees it when a sequence reaches 100 diagnostics (2 of
		// seeds 1–5), not with the catalogue's seed.
		Name: "diagnostics-keep-99", Family: FamilyBounds,
		Breaks: "the reference adapter keeps the newest 100 diagnostics (§12); this one drops the oldest when the 100th comes (`len >= 100`)",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   func(a contract.Adapter, e *env) contract.Adapter { return newOwnLog(a, e, keepNewest(99)) },
	},
	{
		// The model sees it when a sequence reaches 100 diagnostics (2 of
		// seeds 1–5), not with the catalogue's seed.
		Name: "diagnostics-keep-oldest-100", Family: FamilyBounds,
		Breaks: "the reference adapter keeps the newest 100 diagnostics (§12); this one stops recording once it holds 100",
		Fails:  all(conformance.CheckModel),
		port:   watchReplays,
		wrap:   func(a contract.Adapter, e *env) contract.Adapter { return newOwnLog(a, e, keepOldest(100)) },
	},
	{
		Name: "history-line-buffer-1mib", Family: FamilyBounds,
		Breaks: "a valid history is read whatever the length of a record (§12 bounds the file, 64 MiB, and the message count only); " +
			"this one reads lines with a 1 MiB buffer (bufio.Scanner.Buffer) and fails on a longer record, recording canonical-history-read-failed",
		Fails: all(conformance.CheckModel),
		port:  watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.check = func(s *contract.HistorySnapshot) error {
				for i := range s.Messages {
					if recordLen(&s.Messages[i]) >= 1<<20 {
						return fmt.Errorf("history line %d: bufio.Scanner: token too long", i+2)
					}
				}
				return nil
			}
			return m
		},
	},
	{
		Name: "history-nesting-limit-32", Family: FamilyBounds,
		Breaks: "a message's raw JSON (tool call arguments, opaque values, unknown members) is any JSON, however deep (§2; the reference adapter reads 10,000 levels); " +
			"this one refuses a record nested deeper than 32 levels, recording canonical-history-read-failed",
		Fails: all(conformance.CheckModel),
		port:  watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.check = func(s *contract.HistorySnapshot) error {
				for i := range s.Messages {
					b, _ := contract.AppendMessageJSON(nil, &s.Messages[i])
					if jsonDepth(b)+1 > 32 {
						return fmt.Errorf("history line %d: nesting exceeds 32 levels", i+2)
					}
				}
				return nil
			}
			return m
		},
	},
	{
		Name: "history-capped-at-10000-messages", Family: FamilyBounds,
		Breaks: "a history of up to 100,000 messages is ordinary (§6, §12's default bound); this one refuses more than 10,000, recording canonical-history-read-failed",
		Awaits: all(conformance.CheckModel),
		port:   watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.check = func(s *contract.HistorySnapshot) error {
				if len(s.Messages) > 10_000 {
					return errors.New("history holds more than 10,000 messages")
				}
				return nil
			}
			return m
		},
	},
	{
		Name: "tool-results-capped-at-128kib", Family: FamilyBounds,
		Breaks: "a snapshot keeps every tool result's content whole, however long (§2); this one cuts it at 128 KiB",
		Fails:  all(conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				for i, b := range m.Blocks {
					if r, ok := b.(*contract.ToolResultBlock); ok && len(r.Content) > 128<<10 {
						c := *r
						c.Content = cutUTF8(r.Content, 128<<10)
						m.Blocks[i] = &c
					}
				}
			}}
		},
	},
	{
		// The model sees it when one instance makes more than 64 completions
		// and reads its counters after (1 of seeds 1–5), not with the
		// catalogue's seed.
		Name: "kv-counters-over-last-64-completions", Family: FamilyBounds,
		Breaks: "the local KV counters count every request since the adapter started, saturating only at 2^53−1 (§11); " +
			"this one counts them over its last 64 completions",
		Awaits: all(conformance.CheckModel),
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return &windowedCounters{decorator: decorator{a}} },
	},
}

// recordLen is the length of a message's line in the reference history
// file, newline included.
func recordLen(m *contract.Message) int {
	b, _ := contract.AppendMessageJSON(nil, m)
	return len(`{"type":"message","message":}`) + len(b) + 1
}

// jsonDepth is the deepest nesting of arrays and objects in the JSON text b.
func jsonDepth(b []byte) int {
	depth, most, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return most
}

// cutUTF8 cuts s to at most n bytes on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.Clone(s[:n])
}

// windowedCounters answers the local KV counters over its last 64
// completions: it keeps the counters as they stood after each of its last
// 65 completions and subtracts the oldest.
type windowedCounters struct {
	decorator
	mu    sync.Mutex
	marks []localkv.Diagnostics
}

// window is how many completions windowedCounters counts over.
const window = 64

func (m *windowedCounters) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if d, ok := m.decorator.LocalKVDiagnostics(); ok {
		m.mu.Lock()
		m.marks = append(m.marks, d)
		if len(m.marks) > window+1 {
			m.marks = append(m.marks[:0], m.marks[1:]...)
		}
		m.mu.Unlock()
	}
	return r
}

func (m *windowedCounters) LocalKVDiagnostics() (localkv.Diagnostics, bool) {
	d, ok := m.decorator.LocalKVDiagnostics()
	if !ok {
		return d, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.marks) <= window {
		return d, true
	}
	o := m.marks[0]
	d.Requests -= o.Requests
	d.EligibleRequests -= o.EligibleRequests
	d.BypassedRequests -= o.BypassedRequests
	d.Hits -= o.Hits
	d.Misses -= o.Misses
	d.Rejected -= o.Rejected
	d.Unavailable -= o.Unavailable
	d.FullReplays -= o.FullReplays
	d.TransportFailures -= o.TransportFailures
	d.PrefixTokens -= o.PrefixTokens
	d.ContextTokens -= o.ContextTokens
	d.SavedPrefillTokens -= o.SavedPrefillTokens
	d.ReplayPrefillTokens -= o.ReplayPrefillTokens
	d.ReplayPrefillLatencyMs -= o.ReplayPrefillLatencyMs
	return d, true
}
