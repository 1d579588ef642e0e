package mutants_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// A trigger shows what a pending mutant or a legal variant does that the
// reference adapter does not, on input the checks do not draw yet: it sets
// up an instance (setup), drives it (drive) and returns what it observed.
// The test drives the mutant and the reference adapter alike and requires
// the observations to differ — so no pending mutant is the reference
// adapter in disguise, and each shows the input a check must draw to catch
// it (for a legal variant, where it takes its latitude).
type trigger struct {
	setup func(s *conformance.Setup)
	// transport answers the instance's completions (nil: an object).
	transport func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error)
	kv        bool
	drive     func(t *testing.T, inst conformance.Instance, port *conformance.RecordingKVPort) string
}

// triggers are the triggers, by mutant or variant name.
var triggers = map[string]trigger{
	"diagnostics-keep-101":        {transport: failing, drive: manyFailures},
	"diagnostics-keep-99":         {transport: failing, drive: manyFailures},
	"diagnostics-keep-oldest-100": {transport: failing, drive: manyFailures},
	"history-line-buffer-1mib": {
		setup: withMessage(contract.RoleUser, &contract.TextBlock{Text: strings.Repeat("long line ", 110_000)}),
		drive: snapshotView,
	},
	"history-nesting-limit-32": {
		setup: withMessages(func(fx conformance.Fixture) []contract.Message {
			call := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-deep-call", contract.RoleAssistant,
				&contract.ToolCallBlock{ID: "tool-call-deep", Name: "read", Arguments: json.RawMessage(strings.Repeat("[", 64) + strings.Repeat("]", 64))})
			result := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-deep-result", contract.RoleTool,
				&contract.ToolResultBlock{ToolCallID: "tool-call-deep", ToolName: "read", Content: "ok"})
			return []contract.Message{call, result}
		}),
		drive: snapshotView,
	},
	"history-capped-at-10000-messages": {
		setup: func(s *conformance.Setup) {
			s.Fixture.Messages = gen.SyntheticHistory{RuntimeID: s.Fixture.RuntimeID, SessionID: s.Fixture.SessionID}.Messages(10_001)
		},
		drive: snapshotView,
	},
	"tool-results-capped-at-128kib": {
		setup: withMessages(func(fx conformance.Fixture) []contract.Message {
			call := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-big-call", contract.RoleAssistant,
				&contract.ToolCallBlock{ID: "tool-call-big", Name: "read", Arguments: json.RawMessage(`{"path":"big.log"}`)})
			result := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-big-result", contract.RoleTool,
				&contract.ToolResultBlock{ToolCallID: "tool-call-big", ToolName: "read", Content: strings.Repeat("log line\n", 20_000)})
			return []contract.Message{call, result}
		}),
		drive: snapshotView,
	},
	"kv-counters-over-last-64-completions": {
		kv: true,
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			for i := range 70 {
				kvComplete(t, inst.Adapter, conformance.LocalKVModel, kvPayload(fmt.Sprintf("prefix %d", i%3), ""))
			}
			d, ok := inst.Adapter.(localkv.DiagnosticsProvider).LocalKVDiagnostics()
			return fmt.Sprintf("%t %+v", ok, d)
		},
	},
	"snapshot-error-quotes-last-message": {
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			return errorQuotes(t, inst, inst.Adapter.SnapshotHistory)
		},
	},
	"rebuild-error-quotes-last-message": {
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			return errorQuotes(t, inst, inst.Adapter.RebuildDerivedState)
		},
	},
	"read-failed-diagnostic-names-message": {
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			ctx := context.Background()
			_, _ = inst.Adapter.SnapshotHistory(ctx)
			must(t, inst.Source.Corrupt(ctx))
			_, _ = inst.Adapter.SnapshotHistory(ctx)
			for _, d := range inst.Adapter.Diagnostics() {
				if strings.Contains(d.Message, "entry-assistant") {
					return "a diagnostic names a message"
				}
			}
			return "no diagnostic names a message"
		},
	},
	"invalid-request-reason-quotes-prompt": {
		drive: func(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			r := inst.Adapter.Complete(context.Background(), contract.CompletionRequest{Provider: " ", Model: "m",
				Payload: json.RawMessage(`{"messages":[{"role":"user","content":"my plan for the merger"}]}`)})
			return fmt.Sprintf("%s quotes the prompt: %t", r.Code, strings.Contains(r.Reason, "merger") || strings.Contains(r.Reason, "my plan"))
		},
	},
	"privacy-reason-names-payload-member": {
		drive: func(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			r := inst.Adapter.Complete(context.Background(), contract.CompletionRequest{Provider: "openai", Model: "m",
				Payload: map[string]any{"messages": []any{}, "quarterly-figures": conformance.HostilePayload()}})
			return fmt.Sprintf("%s names the member: %t", r.Code, strings.Contains(r.Reason, "quarterly"))
		},
	},
	"snapshot-revision-read-before-messages": {drive: appendBetweenReads},
	"completions-share-the-active-provider":  {transport: echoPayload, drive: localBesideRemote},
	"blank-ids-by-go-trimspace": {
		setup: withMessage(contract.RoleUser, &contract.TextBlock{Text: "an entry the runtime names U+0085"}, "\u0085"),
		drive: snapshotView,
	},
	"provider-policy-go-trimspace": {drive: enforceFor("ollama\u0085", privatePayload)},
	"provider-policy-go-tolower":   {drive: enforceFor("LMSTUD\u0130O", privatePayload)},
	"provider-policy-equalfold":    {drive: enforceFor("lm\u017ftudio", privatePayload)},
	"payload-keys-equalfold": {drive: enforceFor("openai",
		`{"messages":[{"role":"assistant","content":"done","\u017ftop_reason":"key sk-abcdefgh12345678"}],"\u017fystem":"api_key=hunter2hunter2"}`)},
	"texts-crlf-normalised": {
		setup: withMessage(contract.RoleUser, &contract.TextBlock{Text: "line one\r\nline two\r\n"}),
		drive: snapshotView,
	},
	"tool-names-stripped-of-noncharacters": {
		setup: func(s *conformance.Setup) {
			for _, m := range s.Fixture.Messages {
				for _, b := range m.Blocks {
					switch b := b.(type) {
					case *contract.ToolCallBlock:
						b.Name = "read\ufdd0"
					case *contract.ToolResultBlock:
						b.ToolName = "read\ufdd0"
					}
				}
			}
		},
		drive: snapshotView,
	},
	"accepts-duplicate-message-ids": {drive: damaged(func(fx conformance.Fixture, data []byte) []byte {
		m := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-user", contract.RoleUser, &contract.TextBlock{Text: "written twice"})
		return append(data, record(m)...)
	})},
	"accepts-invalid-utf8": {drive: damaged(func(fx conformance.Fixture, data []byte) []byte {
		m := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-latin1", contract.RoleUser, &contract.TextBlock{Text: "caf\x01"})
		return append(data, strings.Replace(string(record(m)), "\\u0001", "\xe9", 1)...)
	})},
	"ignores-unterminated-final-record": {drive: damaged(func(fx conformance.Fixture, data []byte) []byte {
		m := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-torn", contract.RoleUser, &contract.TextBlock{Text: "still being written"})
		return append(data, strings.TrimSuffix(string(record(m)), "\n")...)
	})},
	"accepts-orphaned-tool-results": {drive: damaged(func(fx conformance.Fixture, data []byte) []byte {
		m := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-orphan", contract.RoleTool,
			&contract.ToolResultBlock{ToolCallID: "tool-call-never-made", ToolName: "read", Content: "?"})
		return append(data, record(m)...)
	})},
	"snapshots-another-runtimes-history": {drive: damaged(func(fx conformance.Fixture, data []byte) []byte {
		return []byte(strings.Replace(string(data), `"runtimeId":"`+fx.RuntimeID+`"`, `"runtimeId":"another-runtime"`, 1))
	})},
	"snapshot-cached-by-file-size": {
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			ctx := context.Background()
			_, _ = inst.Adapter.SnapshotHistory(ctx)
			m := conformance.NewFixture().Messages[0]
			m.Blocks = []contract.Block{&contract.TextBlock{Text: "Inspect the reference PROJECT."}} // the same length
			must(t, inst.Source.(conformance.SourceRewriter).Rewrite(ctx, m))
			return snapshotView(t, inst, nil)
		},
	},
	"empty-outputs-become-null": {transport: answer(`""`), drive: completeView},
	"outputs-over-1mib-fail":    {transport: answer(`"` + strings.Repeat("x", 1<<20+1) + `"`), drive: completeView},
	"outputs-nested-over-64-fail": {
		transport: answer(strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)), drive: completeView,
	},
	"outputs-decoded-into-float64": {transport: answer(`{"score":1e400}`), drive: completeView},
	"kv-port-gets-raw-payload": {
		kv: true,
		drive: func(t *testing.T, inst conformance.Instance, port *conformance.RecordingKVPort) string {
			kvComplete(t, inst.Adapter, conformance.LocalKVModel, kvPayload("prefix", "[ds4:sensitive]a note[/ds4:sensitive]"))
			return portView(port)
		},
	},
	"kv-port-model-go-trimmed": {
		kv: true,
		drive: func(t *testing.T, inst conformance.Instance, port *conformance.RecordingKVPort) string {
			kvComplete(t, inst.Adapter, conformance.LocalKVModel+"\u0085", kvPayload("prefix", ""))
			return portView(port)
		},
	},

	// Legal variants: where each takes its latitude.
	"gives-up-at-the-transport-once-cancelled": {drive: cancelledComplete},
	"checks-the-context-first":                 {drive: cancelledComplete},
	"own-name-keeps-18-diagnostics":            {transport: failing, drive: manyFailures},
	"own-name-keeps-2000-diagnostics":          {transport: failing, drive: manyFailures},
	"own-name-records-ineligible-kv": {
		kv: true,
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			kvComplete(t, inst.Adapter, conformance.LocalKVModel, kvPayload("", ""))
			return fmt.Sprint(codes(inst.Adapter.Diagnostics()))
		},
	},
	"stricter-privacy-declared":   {drive: enforceFor("openai", `{"messages":[{"role":"user","content":"[ds4:internal]team notes[/ds4:internal]"}]}`)},
	"stricter-privacy-undeclared": {drive: enforceFor("openai", `{"messages":[{"role":"user","content":"[ds4:internal]team notes[/ds4:internal]"}]}`)},
	"own-name-own-words": {
		transport: failing,
		drive: func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			r := inst.Adapter.Complete(context.Background(), contract.CompletionRequest{Provider: "openai", Model: "m", Payload: json.RawMessage(`{}`)})
			ds := inst.Adapter.Diagnostics()
			return r.Reason + " / " + ds[len(ds)-1].Message
		},
	},
	"outputs-compacted": {transport: answer("{ \"role\" : \"assistant\" }"), drive: completeView},
	"kv-counters-not-offered": {
		kv: true,
		drive: func(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
			_, ok := inst.Adapter.(localkv.DiagnosticsProvider)
			return fmt.Sprintf("offers counters: %t", ok)
		},
	},
}

// TestPendingAndLegalShowTheirDifference runs every trigger on its mutant or
// variant and on the reference adapter, and requires them to differ.
func TestPendingAndLegalShowTheirDifference(t *testing.T) {
	all := append(mutants.Pending(), mutants.LegalVariants()...)
	// A pending mutant the checks now catch keeps its trigger.
	for _, m := range mutants.Catalogue() {
		if _, ok := triggers[m.Name]; ok {
			all = append(all, m)
		}
	}
	for _, m := range all {
		t.Run(m.Name, func(t *testing.T) {
			tr, ok := triggers[m.Name]
			if !ok {
				t.Fatal("no trigger shows what it does")
			}
			got := tr.run(t, m.Factory(base()))
			want := tr.run(t, base())
			if got == want {
				t.Fatalf("observed %q, as the reference adapter", clip(got))
			}
			t.Logf("reference %q; %s %q", clip(want), m.Name, clip(got))
		})
	}
	if len(triggers) != len(all) {
		t.Errorf("%d triggers for %d pending, caught and legal mutants: a trigger names none of them", len(triggers), len(all))
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// run creates one instance, drives it and shuts it down.
func (tr trigger) run(t *testing.T, f conformance.Factory) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	send := tr.transport
	if send == nil {
		send = answer(`{"role":"assistant","content":"ok"}`)
	}
	setup := conformance.Setup{Fixture: conformance.NewFixture(), Transport: contract.TransportFunc(send)}
	var port *conformance.RecordingKVPort
	if tr.kv {
		port = conformance.NewRecordingKVPort()
		setup.LocalKVPort = port
	}
	if tr.setup != nil {
		tr.setup(&setup)
	}
	inst, err := f.Create(ctx, setup)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer func() {
		if err := errors.Join(inst.Adapter.Shutdown(ctx), cleanup(ctx, inst)); err != nil {
			t.Error(err)
		}
	}()
	return tr.drive(t, inst, port)
}

func cleanup(ctx context.Context, inst conformance.Instance) error {
	if inst.Cleanup == nil {
		return nil
	}
	return inst.Cleanup(ctx)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func answer(out string) func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
	return func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
		return json.RawMessage(out), nil
	}
}

func failing(context.Context, contract.TransportRequest) (json.RawMessage, error) {
	return nil, errors.New("provider unavailable")
}

// echoPayload answers each request with the provider and payload it got.
func echoPayload(_ context.Context, req contract.TransportRequest) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"provider": req.Provider, "sent": req.Payload})
}

// withMessage appends a user message holding block to the fixture, under
// the entry id given (or "entry-added").
func withMessage(role contract.Role, block contract.Block, entry ...string) func(*conformance.Setup) {
	id := "entry-added"
	if len(entry) > 0 {
		id = entry[0]
	}
	return withMessages(func(fx conformance.Fixture) []contract.Message {
		return []contract.Message{contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, id, role, block)}
	})
}

func withMessages(more func(fx conformance.Fixture) []contract.Message) func(*conformance.Setup) {
	return func(s *conformance.Setup) { s.Fixture.Messages = append(s.Fixture.Messages, more(s.Fixture)...) }
}

// snapshotView is a snapshot's outcome without what differs between two
// instances (their roots and files): failed, or the digest of its
// messages' wire JSON.
func snapshotView(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
	s, err := inst.Adapter.SnapshotHistory(context.Background())
	if err != nil {
		return "error"
	}
	h := sha256.New()
	for i := range s.Messages {
		b, _ := contract.AppendMessageJSON(nil, &s.Messages[i])
		h.Write(b)
	}
	return fmt.Sprintf("%d messages %s", len(s.Messages), hex.EncodeToString(h.Sum(nil)))
}

// manyFailures records 10 invalid requests, then 140 transport failures,
// and shows the diagnostics list.
func manyFailures(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
	ctx := context.Background()
	for i := range 150 {
		provider := "openai"
		if i < 10 {
			provider = ""
		}
		inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: "m", Payload: json.RawMessage(`{}`)})
	}
	ds := inst.Adapter.Diagnostics()
	return fmt.Sprintf("%d diagnostics, first %s", len(ds), codes(ds[:1]))
}

func codes(ds []contract.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

// errorQuotes reads once, corrupts the source and reads again with read,
// and says whether the error quotes the newest message.
func errorQuotes(t *testing.T, inst conformance.Instance, read func(context.Context) (contract.HistorySnapshot, error)) string {
	ctx := context.Background()
	_, _ = inst.Adapter.SnapshotHistory(ctx)
	must(t, inst.Source.Corrupt(ctx))
	_, err := read(ctx)
	if err == nil {
		return "no error"
	}
	return fmt.Sprintf("error quotes history text: %t", strings.Contains(err.Error(), "The project is ready."))
}

// kvPayload is a local KV payload whose user message is text (the local
// KV checks' own when empty) and whose prompt has this prefix (an
// ineligible empty one when empty).
func kvPayload(prefix, text string) json.RawMessage {
	p := conformance.LocalKVPayload(conformance.LocalKVPrompt{Prefix: prefix, PrefixTokens: 10, ContextTokens: 100})
	if text == "" {
		return p
	}
	var v map[string]any
	_ = json.Unmarshal(p, &v)
	v["messages"] = []any{map[string]any{"role": "user", "content": text}}
	b, _ := json.Marshal(v)
	return b
}

func kvComplete(t *testing.T, a contract.Adapter, model string, payload json.RawMessage) {
	t.Helper()
	r := a.Complete(context.Background(), contract.CompletionRequest{Provider: conformance.LocalKVProvider, Model: model, Payload: payload})
	if r.Status != contract.StatusCompleted {
		t.Fatalf("a local KV completion fell back %s", r.Code)
	}
}

// portView is what the port received: provider, model and payload of
// every request.
func portView(port *conformance.RecordingKVPort) string {
	var b strings.Builder
	for _, r := range append(port.Tries(), port.Replays()...) {
		fmt.Fprintf(&b, "%q %q %s; ", r.Provider, r.Model, r.Payload)
	}
	return b.String()
}

const privatePayload = `{"messages":[{"role":"user","content":"[ds4:local-only]the private roadmap[/ds4:local-only] and sk-abcdefgh12345678"}]}`

// enforceFor shows the enforcement of payload for provider.
func enforceFor(provider, payload string) func(*testing.T, conformance.Instance, *conformance.RecordingKVPort) string {
	return func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
		r, err := inst.Adapter.EnforcePrivacy(context.Background(), contract.PrivacyRequest{Provider: provider, Payload: json.RawMessage(payload)})
		if err != nil {
			return "error"
		}
		return fmt.Sprintf("%s %s", r.Destination, r.Payload)
	}
}

// completeView shows a completion's result.
func completeView(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
	r := inst.Adapter.Complete(context.Background(), contract.CompletionRequest{Provider: "openai", Model: "m", Payload: json.RawMessage(`{}`)})
	if r.Status != contract.StatusCompleted {
		return "fallback " + string(r.Code)
	}
	sum := sha256.Sum256(r.Output)
	return "completed " + hex.EncodeToString(sum[:])
}

// cancelledComplete shows what a completion with a cancelled context and
// a blank model answers, and whether it reached the transport.
func cancelledComplete(_ *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "openai", Model: "m", Payload: json.RawMessage(`{}`)})
	blank := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "openai", Model: " ", Payload: json.RawMessage(`{}`)})
	return fmt.Sprintf("%s %s %s", r.Code, blank.Code, codes(inst.Adapter.Diagnostics()))
}

// damaged writes the instance's history file as damage makes it, then
// shows a snapshot.
func damaged(damage func(fx conformance.Fixture, data []byte) []byte) func(*testing.T, conformance.Instance, *conformance.RecordingKVPort) string {
	return func(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
		path := fmt.Sprint(inst.Source)
		data, err := os.ReadFile(path)
		must(t, err)
		must(t, os.WriteFile(path, damage(conformance.NewFixture(), data), 0o600))
		return snapshotView(t, inst, nil)
	}
}

// record is a message's line in a reference history file.
func record(m contract.Message) []byte {
	b, _ := contract.AppendMessageJSON(nil, &m)
	return append(append([]byte(`{"type":"message","message":`), b...), "}\n"...)
}

// appendBetweenReads appends a message through the source while a
// snapshot is between its reads (for the mutant that reads twice), and
// shows whether the snapshot's revision is the one of the messages it
// holds: the revision a fresh snapshot of the same messages carries.
func appendBetweenReads(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
	ctx := context.Background()
	fx := conformance.NewFixture()
	added := contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, "entry-appended", contract.RoleUser, &contract.TextBlock{Text: "appended meanwhile"})
	var once sync.Once
	restore := mutants.SetBetweenReads(func() { once.Do(func() { must(t, inst.Source.Append(ctx, added)) }) })
	defer restore()
	s, err := inst.Adapter.SnapshotHistory(ctx)
	must(t, err)
	once.Do(func() { must(t, inst.Source.Append(ctx, added)) }) // the reference adapter reads once
	fresh, err := inst.Adapter.SnapshotHistory(ctx)
	must(t, err)
	return fmt.Sprintf("%d messages; revision of the messages held: %t", len(s.Messages), (s.Revision == fresh.Revision) == (len(s.Messages) == len(fresh.Messages)))
}

// localBesideRemote runs a completion to a remote provider and one to a
// local provider at once, both set before either reads, and shows what
// the transport received for each.
func localBesideRemote(t *testing.T, inst conformance.Instance, _ *conformance.RecordingKVPort) string {
	var set sync.WaitGroup
	set.Add(2)
	restore := mutants.SetBetweenSetAndRead(func() { set.Done(); set.Wait() })
	defer restore()
	out := make([]string, 2)
	var wg sync.WaitGroup
	for i, provider := range []string{"openai", "ollama"} {
		wg.Go(func() {
			r := inst.Adapter.Complete(context.Background(), contract.CompletionRequest{Provider: provider, Model: "m", Payload: json.RawMessage(privatePayload)})
			out[i] = string(r.Output)
		})
	}
	wg.Wait()
	return strings.Join(out, " | ")
}
