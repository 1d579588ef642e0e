package mutants

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// The mutants of errors, reasons and diagnostics outside privacy
// enforcement: SPEC §4 keeps every one of them free of prompts, history
// text and payloads, but the kit reads the errors of EnforcePrivacy only.
// Those that change a reason or a diagnostic message stand for an adapter
// of their own name: the reference adapter's reasons and messages are
// SPEC's words (§9, §12), which any change would break first.
var pendingErrors = []Mutant{
	{
		Name: "snapshot-error-quotes-last-message", Family: FamilyErrors,
		Breaks: "errors never contain history text (§4); a failed snapshot's error quotes the newest message it read before, to say where the history broke",
		Fails:  all(conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &quotingReads{decorator: decorator{a}, snapshot: true}
		},
	},
	{
		Name: "rebuild-error-quotes-last-message", Family: FamilyErrors,
		Breaks: "errors never contain history text (§4); a failed rebuild's error quotes the newest message it read before",
		Fails:  all(conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return &quotingReads{decorator: decorator{a}, rebuild: true}
		},
	},
	{
		Name: "invalid-request-reason-quotes-prompt", Family: FamilyErrors,
		Breaks: "a fallback reason is metadata only (§4, §9); an adapter of its own name whose invalid-request reason quotes the start of the prompt",
		// The model catches it when the quoted start holds one of the
		// secrets its payloads plant (2 of seeds 1–5).
		Fails:         all(conformance.CheckInvalidRequests),
		ModelByChance: true,
		wrap: named(func(a contract.Adapter, _ *env) contract.Adapter {
			return reasonAppender{decorator{a}, contract.FallbackInvalidRequest, func(req contract.CompletionRequest) string {
				if s := firstContent(req.Payload); s != "" {
					return " (prompt " + cutUTF8(s, 24) + "…)"
				}
				return ""
			}}
		}),
	},
	{
		Name: "privacy-reason-names-payload-member", Family: FamilyErrors,
		Breaks: "a fallback reason is metadata only (§4, §9); an adapter of its own name whose privacy-enforcement-failed reason names the payload member it could not inspect",
		Fails:  all(conformance.CheckModel),
		wrap: named(func(a contract.Adapter, _ *env) contract.Adapter {
			return reasonAppender{decorator{a}, contract.FallbackPrivacyEnforcementFail, func(req contract.CompletionRequest) string {
				if path := uninspectable(req.Payload, nil); path != nil {
					return " at " + strings.Join(path, ".")
				}
				return ""
			}}
		}),
	},
}

// quotingReads remembers the newest message of its last good read and
// quotes its text in the error of a read that fails (not for a closed
// adapter or an ended context), for snapshots, rebuilds or both.
type quotingReads struct {
	decorator
	snapshot, rebuild bool
	mu                sync.Mutex
	last              string
}

func (m *quotingReads) quote(s contract.HistorySnapshot, err error, quote bool) (contract.HistorySnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		if n := len(s.Messages); n > 0 {
			m.last = messageText(&s.Messages[n-1])
		}
		return s, nil
	}
	if quote && !closedOrCancelled(err) {
		return s, fmt.Errorf("%w (after the record %q)", err, m.last)
	}
	return s, err
}

func (m *quotingReads) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	return m.quote(s, err, m.snapshot)
}

func (m *quotingReads) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	return m.quote(s, err, m.rebuild)
}

// messageText is the text a message holds (its text, thinking and tool
// result blocks), or its wire JSON when it holds none.
func messageText(m *contract.Message) string {
	var parts []string
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *contract.TextBlock:
			parts = append(parts, b.Text)
		case *contract.ThinkingBlock:
			parts = append(parts, b.Thinking)
		case *contract.ToolResultBlock:
			parts = append(parts, b.Content)
		}
	}
	if len(parts) == 0 {
		raw, _ := contract.AppendMessageJSON(nil, m)
		return string(raw)
	}
	return strings.Join(parts, " ")
}

// namingReadFailures names, in the message of every
// canonical-history-read-failed diagnostic, the id of the last message its
// good reads held.
type namingReadFailures struct {
	decorator
	mu   sync.Mutex
	last string
}

func (m *namingReadFailures) keep(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if n := len(s.Messages); err == nil && n > 0 {
		m.mu.Lock()
		m.last = s.Messages[n-1].ID
		m.mu.Unlock()
	}
	return s, err
}

func (m *namingReadFailures) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.keep(m.Adapter.SnapshotHistory(ctx))
}

func (m *namingReadFailures) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return m.keep(m.Adapter.RebuildDerivedState(ctx))
}

func (m *namingReadFailures) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range ds {
		if ds[i].Code == reference.CodeHistoryReadFailed {
			ds[i].Message = "Canonical history is corrupt after message " + m.last
		}
	}
	return ds
}

// reasonAppender adds what more returns to the reason of every fallback
// of one code.
type reasonAppender struct {
	decorator
	code contract.FallbackCode
	more func(req contract.CompletionRequest) string
}

func (m reasonAppender) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusFallback && r.Code == m.code {
		r.Reason += m.more(req)
	}
	return r
}

// firstContent is the first string under a "content" member of a
// payload, in the payload's JSON encoding.
func firstContent(payload any) string {
	raw, err := toJSON(payload)
	if err != nil {
		return ""
	}
	v, err := decodeAny(raw)
	if err != nil {
		return ""
	}
	var find func(v any) string
	find = func(v any) string {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				if s := find(x); s != "" {
					return s
				}
			}
		case map[string]any:
			if s, ok := v["content"].(string); ok && s != "" {
				return s
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s := find(v[k]); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return find(v)
}

// uninspectable returns the path of member names to the first value of a
// payload that encoding/json cannot encode, or nil.
func uninspectable(v any, path []string) []string {
	if len(path) > 64 {
		return nil
	}
	if _, err := json.Marshal(v); err == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := uninspectable(x[k], append(slices.Clone(path), k)); p != nil {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := uninspectable(e, append(slices.Clone(path), fmt.Sprint(i))); p != nil {
				return p
			}
		}
	default:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct {
			for i := range rv.NumField() {
				if f := rv.Type().Field(i); f.IsExported() {
					if p := uninspectable(rv.Field(i).Interface(), append(slices.Clone(path), f.Name)); p != nil {
						return p
					}
				}
			}
		}
	}
	if len(path) == 0 {
		return nil
	}
	return path
}
