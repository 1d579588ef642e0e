package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
)

func TestNewRejectsBadOptions(t *testing.T) {
	e := newEnv(t)
	cases := map[string]func(o *Options){
		"blank history path":     func(o *Options) { o.HistoryPath = " " },
		"blank project root":     func(o *Options) { o.ProjectRoot = "" },
		"missing project root":   func(o *Options) { o.ProjectRoot = e.root + "/missing" },
		"model without provider": func(o *Options) { o.Model = &contract.ModelDescriptor{Provider: " ", ID: "m", ContextWindow: 1} },
		"model without id":       func(o *Options) { o.Model = &contract.ModelDescriptor{Provider: "p", ContextWindow: 1} },
		"model without window":   func(o *Options) { o.Model = &contract.ModelDescriptor{Provider: "p", ID: "m"} },
		"no transport":           func(o *Options) { o.Transport = nil },
		"negative byte bound":    func(o *Options) { o.MaxBytes = -1 },
		"negative message bound": func(o *Options) { o.MaxMessages = -1 },
		"invalid privacy config": func(o *Options) {
			o.Privacy = &privacy.Config{Enabled: true, DefaultClassification: "secret-ish"}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			o := e.options(nil)
			mutate(&o)
			if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("error %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	e := newEnv(t)
	o := e.options(nil)
	o.RuntimeID, o.Model = " \t", nil
	a := newAdapter(t, o)
	if a.Identity().RuntimeID != DefaultRuntimeID {
		t.Fatalf("runtime id %q", a.Identity().RuntimeID)
	}
	if a.store.limits != (limits{DefaultMaxBytes, DefaultMaxMessages}) {
		t.Fatalf("limits %+v", a.store.limits)
	}
	if m, err := a.CurrentModel(context.Background()); err != nil || m != nil {
		t.Fatalf("model %v, %v; want none", m, err)
	}
}

func TestIdentityAndDeclarations(t *testing.T) {
	e := newEnv(t)
	a := newAdapter(t, e.options(nil))
	want := contract.Identity{RuntimeID: "conformance-runtime", AdapterName: "ds4-context-reference-adapter-go", AdapterVersion: Version, ContractVersion: "runtime-adapter-v1"}
	if a.Identity() != want {
		t.Fatalf("identity %+v", a.Identity())
	}
	decls := []contract.CapabilityDeclaration{
		{ID: "compaction", Reason: "reference JSONL runtime has no native compaction hook"},
		{ID: "provider-continuation", Reason: "reference completion transport exposes no provider continuation handle"},
		{ID: "embeddings", Reason: "no embedding port was configured"},
		{ID: "local-kv-reuse", Reason: "reference completion transport exposes no local KV state"},
	}
	if !reflect.DeepEqual(a.CapabilityDeclarations(), decls) {
		t.Fatalf("declarations %+v", a.CapabilityDeclarations())
	}
	if a.EmbeddingPort() != nil {
		t.Fatal("embedding port without one configured")
	}
	o := e.options(nil)
	o.EmbeddingPort = fakeEmbedder{}
	b := newAdapter(t, o)
	decls[2] = contract.CapabilityDeclaration{ID: "embeddings", Supported: true, Version: "embedding-port-v1"}
	if !reflect.DeepEqual(b.CapabilityDeclarations(), decls) {
		t.Fatalf("declarations %+v", b.CapabilityDeclarations())
	}
	if b.EmbeddingPort() == nil {
		t.Fatal("configured embedding port not exposed")
	}
	n := b.NegotiateCapabilities([]contract.CapabilityRequest{{ID: "embeddings", Required: true}, {ID: "compaction"}})
	if !reflect.DeepEqual(n.Enabled, []string{"embeddings"}) || !reflect.DeepEqual(n.Disabled, []string{"compaction"}) {
		t.Fatalf("negotiation %+v", n)
	}
	if len(b.Diagnostics()) != 0 {
		t.Fatal("negotiation diagnostics were recorded")
	}
}

type fakeEmbedder struct{}

func (fakeEmbedder) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "ollama", Model: "embed", Dimensions: 2, Destination: contract.DestinationLocal}
}

func (fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i := range out {
		out[i] = []float64{1, 0}
	}
	return out, nil
}

func TestCurrentModelIsACopy(t *testing.T) {
	e := newEnv(t)
	a := newAdapter(t, e.options(nil))
	m, err := a.CurrentModel(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture()
	if !reflect.DeepEqual(*m, fx.Model) {
		t.Fatalf("model %+v", m)
	}
	m.Input[0], *m.MaxTokens = "image", 1
	again, _ := a.CurrentModel(context.Background())
	if !reflect.DeepEqual(*again, fx.Model) {
		t.Fatal("a caller altered the adapter's model")
	}
}

func TestSnapshotOfFixture(t *testing.T) {
	e := newEnv(t)
	fx := e.create(t)
	a := newAdapter(t, e.options(nil))
	s, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != contract.HistorySchemaVersion || s.RuntimeID != fx.RuntimeID || s.SessionID != fx.SessionID || s.ProjectRoot != e.root {
		t.Fatalf("identity %s %s %s %s", s.SchemaVersion, s.RuntimeID, s.SessionID, s.ProjectRoot)
	}
	if s.Revision != revisionOf(e.read(t)) {
		t.Fatal("revision is not the SHA-256 of the file")
	}
	if !reflect.DeepEqual(s.Messages, fx.Messages) {
		t.Fatal("messages differ from the fixture")
	}
	if !reflect.DeepEqual(s.ToolAtomicGroups, contract.BuildToolAtomicGroups(fx.Messages)) || len(s.ToolAtomicGroups) != 1 || !s.ToolAtomicGroups[0].Complete {
		t.Fatalf("groups %+v", s.ToolAtomicGroups)
	}
	if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
		t.Fatalf("issues %+v", issues)
	}
	if len(a.Diagnostics()) != 0 {
		t.Fatalf("diagnostics %+v", a.Diagnostics())
	}
}

// A history of a header alone is a snapshot with empty lists, never nil
// ones, whether read cold, from the cache, after messages were cut off, or
// rebuilt: callers and the JSON form see [] every time.
func TestSnapshotOfAHistoryWithNoMessages(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	mustNil(t, CreateHistory(context.Background(), e.path, Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}, nil))
	header := e.read(t)
	a := newAdapter(t, e.options(nil))
	check := func(how string, s contract.HistorySnapshot, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if s.Messages == nil || len(s.Messages) != 0 || s.ToolAtomicGroups == nil || len(s.ToolAtomicGroups) != 0 {
			t.Fatalf("%s: messages %#v, groups %#v", how, s.Messages, s.ToolAtomicGroups)
		}
		data, err := contract.AppendSnapshotJSON(nil, &s)
		mustNil(t, err)
		if !bytes.Contains(data, []byte(`"messages":[]`)) || !bytes.Contains(data, []byte(`"toolAtomicGroups":[]`)) {
			t.Fatalf("%s: %s", how, data)
		}
	}
	s, err := a.SnapshotHistory(context.Background())
	check("cold", s, err)
	s, err = a.SnapshotHistory(context.Background())
	check("cached", s, err)
	e.write(t, e.fixtureText(t, fx.Messages))
	_, err = a.SnapshotHistory(context.Background())
	mustNil(t, err)
	e.write(t, string(header))
	s, err = a.SnapshotHistory(context.Background())
	check("cut back to the header", s, err)
	s, err = a.RebuildDerivedState(context.Background())
	check("rebuilt", s, err)
}

func TestSnapshotsAreCopies(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	a := newAdapter(t, e.options(nil))
	first, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := contract.AppendSnapshotJSON(nil, &first)
	// Scribble over everything reachable.
	first.Messages[0].ID = "x"
	first.Messages[0].Blocks[0].(*contract.TextBlock).Text = "changed"
	*first.Messages[0].TokenEstimate = 99
	*first.Messages[0].Provenance.RuntimeID = "other"
	*first.Messages[1].Flags.Atomic = false
	first.Messages[1].Blocks[0].(*contract.ToolCallBlock).Arguments[2] = 'X'
	first.Messages[1].Blocks = append(first.Messages[1].Blocks, &contract.TextBlock{})
	first.Messages = append(first.Messages[:1], first.Messages[2:]...)
	first.ToolAtomicGroups[0].MessageIDs[0] = "y"
	first.ToolAtomicGroups[0].ToolCallIDs = append(first.ToolAtomicGroups[0].ToolCallIDs, "z")
	second, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := contract.AppendSnapshotJSON(nil, &second); string(got) != string(want) {
		t.Fatal("a caller altered the cached snapshot")
	}
}

func TestSnapshotFollowsAppends(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	a := newAdapter(t, e.options(nil))
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	fx := fixture()
	call := nextMessage("entry-call-2")
	call.Role = contract.RoleAssistant
	call.Blocks = []contract.Block{&contract.ToolCallBlock{ID: "tool-call-2", Name: "read"}}
	result := nextMessage("entry-result-2")
	result.Role = contract.RoleTool
	result.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: "tool-call-2", ToolName: "read", Content: "x"}}
	steps := []contract.Message{nextMessage("entry-next"), call, result, nextMessage("entry-last")}
	first := a.store.c.msgs[0].blocks[0]
	for i, m := range steps {
		if err := AppendMessage(context.Background(), e.path, m); err != nil {
			t.Fatal(err)
		}
		got, err := a.SnapshotHistory(context.Background())
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		fresh, err := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fresh, got); diff != "" {
			t.Fatalf("step %d: the cached snapshot differs from a fresh one (-fresh +cached):\n%s", i, diff)
		}
		if len(got.Messages) != len(fx.Messages)+i+1 {
			t.Fatalf("step %d: %d messages", i, len(got.Messages))
		}
		if a.store.c.msgs[0].blocks[0] != first {
			t.Fatalf("step %d: the unchanged prefix was decoded again", i)
		}
		c := a.store.c
		if _, err := a.SnapshotHistory(context.Background()); err != nil || a.store.c != c {
			t.Fatalf("step %d: an unchanged file was decoded again (%v)", i, err)
		}
	}
}

func TestSnapshotDetectsRewrittenPrefix(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	a := newAdapter(t, e.options(nil))
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Same size, one character changed, then a valid append on top.
	text := strings.Replace(string(e.read(t)), "Inspect the", "Inspect thE", 1)
	e.write(t, text+recordLine(t, nextMessage("entry-next")))
	s, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Messages[0].Blocks[0].(*contract.TextBlock).Text != "Inspect thE reference project." || len(s.Messages) != 5 {
		t.Fatal("a rewritten prefix was served from the cache")
	}
	// Same size, same length, now invalid: the cache must not hide it.
	e.write(t, strings.Replace(e.fixtureText(t, fixture().Messages), `"role":"user"`, `"role":"usex"`, 1))
	if _, err := a.SnapshotHistory(context.Background()); !errors.Is(err, ErrHistoryCorrupt) {
		t.Fatalf("error %v, want ErrHistoryCorrupt", err)
	}
}

func TestSnapshotAppendedSuffixIsChecked(t *testing.T) {
	fx := fixture()
	cases := map[string]struct {
		suffix   func(t *testing.T) string
		sentinel error
	}{
		"duplicate id": {func(t *testing.T) string { return recordLine(t, fx.Messages[0]) }, ErrHistoryInvalid},
		"orphaned result": {func(t *testing.T) string {
			m := nextMessage("r2")
			m.Blocks = []contract.Block{&contract.ToolResultBlock{ToolCallID: "unknown-call", ToolName: "read"}}
			return recordLine(t, m)
		}, ErrHistoryInvalid},
		"unterminated": {func(t *testing.T) string { return strings.TrimSuffix(recordLine(t, nextMessage("n")), "\n") }, ErrHistoryCorrupt},
		"invalid UTF-8": {func(t *testing.T) string {
			return strings.Replace(recordLine(t, nextMessage("n")), "then", "th\xc3n", 1)
		}, ErrHistoryCorrupt},
		"blank line": {func(t *testing.T) string { return "\n" }, ErrHistoryCorrupt},
		"other session": {func(t *testing.T) string {
			m := nextMessage("n")
			m.Provenance.SessionID = "s2"
			return recordLine(t, m)
		}, ErrHistoryInvalid},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t)
			a := newAdapter(t, e.options(nil))
			if _, err := a.SnapshotHistory(context.Background()); err != nil {
				t.Fatal(err)
			}
			e.write(t, string(e.read(t))+c.suffix(t))
			_, cachedErr := a.SnapshotHistory(context.Background())
			_, freshErr := newAdapter(t, e.options(nil)).SnapshotHistory(context.Background())
			if !errors.Is(cachedErr, c.sentinel) || !errors.Is(freshErr, c.sentinel) {
				t.Fatalf("errors %v / %v, want %v", cachedErr, freshErr, c.sentinel)
			}
			if cachedErr.Error() != freshErr.Error() {
				t.Fatalf("cached and fresh errors differ: %q vs %q", cachedErr, freshErr)
			}
		})
	}
}

func TestSnapshotPastMessageBoundAfterCache(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	o := e.options(nil)
	o.MaxMessages = 4
	a := newAdapter(t, o)
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.write(t, string(e.read(t))+recordLine(t, nextMessage("n")))
	if _, err := a.SnapshotHistory(context.Background()); !errors.Is(err, ErrHistoryTooLarge) {
		t.Fatalf("error %v", err)
	}
}

func TestRebuild(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	a := newAdapter(t, e.options(nil))
	first, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := a.RebuildDerivedState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, rebuilt); diff != "" {
		t.Fatalf("rebuilt snapshot differs (-first +rebuilt):\n%s", diff)
	}
	d := a.Diagnostics()
	want := contract.Diagnostic{Code: "derived-state-rebuilt", Severity: "info", Message: "Disposable adapter state was rebuilt from canonical JSONL history"}
	if len(d) != 1 || d[0] != want {
		t.Fatalf("diagnostics %+v", d)
	}
}

func TestCompleteFallbacks(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	ctx := context.Background()

	t.Run("invalid request", func(t *testing.T) {
		tr := &recorder{}
		a := newAdapter(t, e.options(tr))
		for _, req := range []contract.CompletionRequest{{Provider: " ", Model: "m"}, {Provider: "p", Model: "\u3000"}} {
			r := a.Complete(ctx, req)
			if r.Status != contract.StatusFallback || r.Code != contract.FallbackInvalidRequest || r.Retryable || r.Reason != "completion request is invalid" {
				t.Fatalf("result %+v", r)
			}
		}
		d := a.Diagnostics()
		if len(d) != 2 || d[0] != (contract.Diagnostic{Code: "completion-request-invalid", Severity: "warning", Message: "Completion request is missing provider or model identity"}) {
			t.Fatalf("diagnostics %+v", d)
		}
		if len(tr.reqs) != 0 {
			t.Fatal("transport called")
		}
	})
	t.Run("privacy failure", func(t *testing.T) {
		tr := &recorder{}
		a := newAdapter(t, e.options(tr))
		uninspectable := map[string]any{"messages": []any{make(chan int)}}
		r := a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: uninspectable})
		if r.Status != contract.StatusFallback || r.Code != contract.FallbackPrivacyEnforcementFail || r.Retryable || r.Reason != "privacy enforcement failed closed" {
			t.Fatalf("result %+v", r)
		}
		if len(tr.reqs) != 0 {
			t.Fatal("transport called after a privacy failure")
		}
		d := a.Diagnostics()
		if len(d) != 1 || d[0] != (contract.Diagnostic{Code: "privacy-enforcement-failed", Severity: "error", Message: "Privacy enforcement failed closed before completion transport"}) {
			t.Fatalf("diagnostics %+v", d)
		}
		if _, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "p", Payload: uninspectable}); !errors.Is(err, ErrPrivacyFailed) || !errors.Is(err, privacy.ErrUninspectable) {
			t.Fatalf("enforce error %v", err)
		}
	})
	t.Run("transport failure", func(t *testing.T) {
		tr := &recorder{fail: true}
		a := newAdapter(t, e.options(tr))
		r := a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: 1})
		if r.Status != contract.StatusFallback || r.Code != contract.FallbackTransportFailed || !r.Retryable || r.Reason != "completion transport failed" {
			t.Fatalf("result %+v", r)
		}
		d := a.Diagnostics()
		if len(d) != 1 || d[0] != (contract.Diagnostic{Code: "completion-transport-failed", Severity: "warning", Message: "Completion transport failed; native runtime fallback remains available"}) {
			t.Fatalf("diagnostics %+v", d)
		}
	})
	t.Run("transport panic", func(t *testing.T) {
		a := newAdapter(t, e.options(contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
			panic("boom")
		})))
		if r := a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m"}); r.Code != contract.FallbackTransportFailed {
			t.Fatalf("result %+v", r)
		}
	})
}

func TestCompleteSendsSanitisedPayload(t *testing.T) {
	e := newEnv(t)
	tr := &recorder{}
	a := newAdapter(t, e.options(tr))
	r := a.Complete(context.Background(), contract.CompletionRequest{Provider: "ollama", Model: "m", Payload: map[string]int{"a": 1}})
	if r.Status != contract.StatusCompleted || string(r.Output) != `{"role":"assistant","content":"ok"}` {
		t.Fatalf("result %+v", r)
	}
	if r.Privacy != (contract.PrivacySummary{Provider: "ollama", Destination: "local"}) {
		t.Fatalf("privacy %+v", r.Privacy)
	}
	want := contract.TransportRequest{Provider: "ollama", Model: "m", Destination: "local", Payload: json.RawMessage(`{"a":1}`)}
	if len(tr.reqs) != 1 || !reflect.DeepEqual(tr.reqs[0], want) {
		t.Fatalf("transport saw %+v", tr.reqs)
	}
}

func TestEnforcePrivacyErrorsWithoutDiagnostic(t *testing.T) {
	e := newEnv(t)
	a := newAdapter(t, e.options(nil))
	if _, err := a.EnforcePrivacy(context.Background(), contract.PrivacyRequest{Provider: "  "}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("error %v", err)
	}
	a.Shutdown(context.Background())
	if _, err := a.EnforcePrivacy(context.Background(), contract.PrivacyRequest{Provider: "p"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("error %v", err)
	}
	if d := a.Diagnostics(); len(d) != 1 || d[0].Code != contract.DiagnosticAdapterClosed {
		t.Fatalf("diagnostics %+v", d)
	}
}

func TestShutdown(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	tr := &recorder{}
	a := newAdapter(t, e.options(tr))
	ctx := context.Background()
	if _, err := a.SnapshotHistory(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := a.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d := a.Diagnostics()
	if len(d) != 1 || d[0] != (contract.Diagnostic{Code: "adapter-closed", Severity: "info", Message: "Reference adapter lifecycle closed cleanly"}) {
		t.Fatalf("diagnostics %+v", d)
	}
	if r := a.Complete(ctx, contract.CompletionRequest{}); r.Code != contract.FallbackAdapterClosed || r.Reason != "reference adapter is closed" || r.Retryable {
		t.Fatalf("result %+v", r)
	}
	if _, err := a.SnapshotHistory(ctx); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if _, err := a.RebuildDerivedState(ctx); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if _, err := a.CurrentModel(ctx); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if _, err := a.TrustedProjectRoot(ctx); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if len(a.CapabilityDeclarations()) != 4 || len(a.NegotiateCapabilities(nil).Statuses) != 4 {
		t.Fatal("declarations or negotiation stopped working after shutdown")
	}
	if len(tr.reqs) != 0 || len(a.Diagnostics()) != 1 {
		t.Fatal("a closed adapter acted")
	}
}

func TestDiagnosticsKeepNewest(t *testing.T) {
	e := newEnv(t)
	a := newAdapter(t, e.options(nil))
	for range 150 {
		a.Complete(context.Background(), contract.CompletionRequest{})
	}
	a.Shutdown(context.Background())
	d := a.Diagnostics()
	if len(d) != MaxDiagnostics || d[len(d)-1].Code != contract.DiagnosticAdapterClosed || d[0].Code != contract.DiagnosticCompletionRequestInvalid {
		t.Fatalf("%d diagnostics, last %+v", len(d), d[len(d)-1])
	}
}

func TestConcurrentUse(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	// Appends exclude readers of the file: a read racing a write can see
	// a partial final record, which is (rightly) reported as unterminated.
	var file sync.RWMutex
	tr := contract.TransportFunc(func(_ context.Context, req contract.TransportRequest) (json.RawMessage, error) {
		return json.RawMessage(`1`), nil
	})
	a := newAdapter(t, e.options(tr))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				switch (g + i) % 5 {
				case 0:
					file.RLock()
					_, err := a.SnapshotHistory(ctx)
					file.RUnlock()
					if err != nil {
						errs <- err
					}
				case 1:
					if r := a.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: i}); r.Status != contract.StatusCompleted {
						errs <- fmt.Errorf("completion fell back: %s", r.Code)
					}
				case 2:
					a.Diagnostics()
					a.NegotiateCapabilities([]contract.CapabilityRequest{{ID: "embeddings"}})
				case 3:
					file.RLock()
					_, err := a.RebuildDerivedState(ctx)
					file.RUnlock()
					if err != nil {
						errs <- err
					}
				case 4:
					if g%4 == 0 {
						m := nextMessage(fmt.Sprintf("entry-%d-%d", g, i))
						file.Lock() // one writer at a time, as AppendMessage requires
						err := AppendMessage(ctx, e.path, m)
						file.Unlock()
						if err != nil {
							errs <- err
						}
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := a.SnapshotHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := newAdapter(t, e.options(nil)).SnapshotHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh, s); diff != "" {
		t.Fatalf("final snapshot differs from a fresh one (-fresh +final):\n%s", diff)
	}
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(e.path)
}

func TestPrivacyConfigIsUsed(t *testing.T) {
	e := newEnv(t)
	payload := map[string]any{"prompt": "[ds4:local-only]kept here[/ds4:local-only] sk-abcdefgh12345678"}
	ctx := context.Background()

	def := newAdapter(t, e.options(nil))
	res, err := def.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "remote-co", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	if res.Destination != contract.DestinationRemote || !res.Changed || res.BlockedBlocks != 1 || res.SecretRedactions != 1 || res.Provider != "remote-co" {
		t.Fatalf("default policy result %+v", res.Summary())
	}
	if strings.Contains(string(res.Payload), "kept here") || strings.Contains(string(res.Payload), "abcdefgh") {
		t.Fatal("default policy let local-only text or a credential through")
	}

	cfg := privacy.DefaultConfig()
	cfg.LocalProviders = append(cfg.LocalProviders, "remote-co")
	o := e.options(nil)
	o.Privacy = &cfg
	local := newAdapter(t, o)
	res, err = local.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "Remote-Co ", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	if res.Destination != contract.DestinationLocal || !strings.Contains(string(res.Payload), "kept here") || res.SecretRedactions != 0 {
		t.Fatalf("configured local provider: %+v", res.Summary())
	}
}
