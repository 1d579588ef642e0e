package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

func TestLocalKVPayloadRoundTrip(t *testing.T) {
	prompts := []LocalKVPrompt{
		{Prefix: "system prompt", PrefixTokens: 3, ContextTokens: 9},
		{Prefix: "p", SystemOptions: json.RawMessage(`{"temperature":0}`), ToolOptions: json.RawMessage(`[{"name":"read"}]`), PrefixTokens: 1, ContextTokens: 1},
		{Prefix: "p", SystemOptions: json.RawMessage(`null`)},
	}
	for _, p := range prompts {
		b := LocalKVPayload(p)
		got, ok := ReadLocalKVPrompt(b)
		if !ok || !reflect.DeepEqual(got, p) {
			t.Fatalf("ReadLocalKVPrompt(%s) = %+v, %v; want %+v", b, got, ok, p)
		}
		if !strings.Contains(string(b), `"messages":[{"role":"user","content":"`+LocalKVMessageText()+`"}]`) {
			t.Fatalf("payload %s has no user message", b)
		}
	}
	// Absent and null options stay apart.
	absent, _ := ReadLocalKVPrompt(LocalKVPayload(prompts[0]))
	null, _ := ReadLocalKVPrompt(LocalKVPayload(prompts[2]))
	if s, _ := absent.Options(); s != nil {
		t.Fatalf("absent system options read as %v", s)
	}
	if s, tool := null.Options(); !reflect.DeepEqual(s, json.RawMessage("null")) || tool != nil {
		t.Fatalf("null system options read as %v, tool options %v", s, tool)
	}
}

func TestReadLocalKVPromptRejectsOtherPayloads(t *testing.T) {
	for _, payload := range []string{
		``, `null`, `[]`, `{"messages":[]}`, `{"localKv":null}`, `{"localKv":"x"}`,
		`{"localKv":{"prefix":1}}`, `{"localKv":{"prefix":"p","prefixTokens":1.5}}`,
		`{"localKv":{"prefix":"p"}`,
	} {
		if p, ok := ReadLocalKVPrompt(json.RawMessage(payload)); ok {
			t.Errorf("ReadLocalKVPrompt(%s) = %+v, true; want false", payload, p)
		}
	}
}

// The checks rely on the provider being local and the payload passing
// privacy enforcement unchanged under the default configuration.
func TestLocalKVPayloadIsLocalAndUnchanged(t *testing.T) {
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	payload := LocalKVPayload(LocalKVPrompt{Prefix: "system", SystemOptions: json.RawMessage(`{"seed":7}`), PrefixTokens: 1, ContextTokens: 2})
	r, err := e.SanitizePayload(LocalKVProvider, payload)
	if err != nil || r.Destination != contract.DestinationLocal || r.Changed || string(r.Value) != string(payload) {
		t.Fatalf("sanitised: destination %q, changed %v, same %v, err %v", r.Destination, r.Changed, string(r.Value) == string(payload), err)
	}
	r, err = e.SanitizePayload(NewFixture().Model.Provider, payload)
	if err != nil || r.Destination != contract.DestinationRemote {
		t.Fatalf("the fixture's provider is not remote: %q, %v", r.Destination, err)
	}
}

func kvRequest(fingerprint string) localkv.ReuseRequest {
	return localkv.ReuseRequest{Key: localkv.Key{Fingerprint: fingerprint, PrefixHash: "prefix-hash-" + fingerprint},
		Provider: LocalKVProvider, Model: LocalKVModel, Payload: json.RawMessage(`{"a":1}`), PrefixTokenCount: 3, ContextTokenCount: 5}
}

func TestRecordingKVPort(t *testing.T) {
	ctx := context.Background()
	p := NewRecordingKVPort()
	status := func(fp string) localkv.ReuseStatus {
		t.Helper()
		a, err := p.TryReuse(ctx, kvRequest(fp))
		if err != nil {
			return "error"
		}
		return a.Status
	}
	replay := func(fp string) error {
		t.Helper()
		a, err := p.FullReplay(ctx, kvRequest(fp))
		if err == nil && (string(a.Output) != LocalKVReplayOutput || a.PrefillTokens != 5) {
			t.Fatalf("replay answer %+v", a)
		}
		return err
	}
	if s := status("a"); s != localkv.ReuseMiss {
		t.Fatalf("cold: %s", s)
	}
	if err := replay("a"); err != nil {
		t.Fatal(err)
	}
	a, err := p.TryReuse(ctx, kvRequest("a"))
	if err != nil || a.Status != localkv.ReuseHit || string(a.Output) != LocalKVHitOutput || a.SavedPrefillTokens != 3 {
		t.Fatalf("warm: %+v, %v", a, err)
	}
	if s := status("b"); s != localkv.ReuseMiss {
		t.Fatalf("other fingerprint: %s", s)
	}
	p.RejectNext()
	if s1, s2 := status("a"), status("a"); s1 != localkv.ReuseRejected || s2 != localkv.ReuseHit {
		t.Fatalf("reject once: %s then %s", s1, s2)
	}
	p.FailReuseNext()
	_, err = p.TryReuse(ctx, kvRequest("a"))
	if !errors.Is(err, ErrInjectedKVFailure) || !strings.Contains(err.Error(), LocalKVHandleProbe) || !strings.Contains(err.Error(), "prefix-hash-a") {
		t.Fatalf("injected reuse failure %v", err)
	}
	if s := status("a"); s != localkv.ReuseHit {
		t.Fatalf("after one failure: %s", s)
	}
	p.Forget()
	if s := status("a"); s != localkv.ReuseMiss {
		t.Fatalf("after Forget: %s", s)
	}
	p.FailReplayNext()
	if err := replay("a"); !errors.Is(err, ErrInjectedKVFailure) {
		t.Fatalf("injected replay failure %v", err)
	}
	if s := status("a"); s != localkv.ReuseMiss {
		t.Fatal("a failed replay left KV state")
	}
	if err := replay("a"); err != nil {
		t.Fatal(err)
	}
	if len(p.Tries()) != 9 || len(p.Replays()) != 3 || p.Calls() != 12 {
		t.Fatalf("%d tries, %d replays, %d calls", len(p.Tries()), len(p.Replays()), p.Calls())
	}
	// Recorded requests are copies.
	p.Tries()[0].Payload[0] = 'X'
	if p.Tries()[0].Payload[0] != '{' {
		t.Fatal("Tries exposes the recorded payload")
	}
	p.Shutdown(ctx)
	p.Shutdown(ctx)
	if p.Shutdowns() != 2 {
		t.Fatalf("shutdowns %d", p.Shutdowns())
	}
	var _ localkv.ShutdownPort = p
}

func TestStartKVHandsThePortToTheFactory(t *testing.T) {
	var got []Setup
	f := NewFactory("capture", func(_ context.Context, s Setup) (Instance, error) {
		got = append(got, s)
		return Instance{}, errors.New("capture only")
	})
	port := NewRecordingKVPort()
	if _, err := startKV(context.Background(), f, port, newOptions(nil)); !errors.Is(err, ErrFactory) {
		t.Fatalf("startKV error %v", err)
	}
	if _, err := Start(context.Background(), f); !errors.Is(err, ErrFactory) {
		t.Fatalf("Start error %v", err)
	}
	if len(got) != 2 || got[0].LocalKVPort != port || got[0].Transport == nil || got[1].LocalKVPort != nil {
		t.Fatalf("setups %+v", got)
	}
	if !reflect.DeepEqual(got[0].Fixture, NewFixture()) {
		t.Fatal("startKV did not pass the conformance fixture")
	}
}
