package localkv

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// fakePort answers with fixed functions and records what it was given.
type fakePort struct {
	tryReuse   func(ReuseRequest) (ReuseAnswer, error)
	fullReplay func(ReuseRequest) (ReplayAnswer, error)
	tries      atomic.Int64
	replays    atomic.Int64
	mu         sync.Mutex
	last       []ReuseRequest
}

func (p *fakePort) TryReuse(_ context.Context, r ReuseRequest) (ReuseAnswer, error) {
	p.tries.Add(1)
	p.record(r)
	return p.tryReuse(r)
}

func (p *fakePort) FullReplay(_ context.Context, r ReuseRequest) (ReplayAnswer, error) {
	p.replays.Add(1)
	p.record(r)
	if p.fullReplay == nil {
		return goodReplay, nil
	}
	return p.fullReplay(r)
}

func (p *fakePort) record(r ReuseRequest) {
	p.mu.Lock()
	p.last = append(p.last, r)
	p.mu.Unlock()
}

var (
	goodHit    = ReuseAnswer{Status: ReuseHit, Output: json.RawMessage(`{"text":"hit"}`), SavedPrefillTokens: 100, PrefillLatencyMs: 1.5}
	goodReplay = ReplayAnswer{Output: json.RawMessage(`{"text":"replay"}`), PrefillTokens: 160, PrefillLatencyMs: 12.25}
)

func answer(a ReuseAnswer) func(ReuseRequest) (ReuseAnswer, error) {
	return func(ReuseRequest) (ReuseAnswer, error) { return a, nil }
}

func request() ControllerRequest {
	return ControllerRequest{Input: baseInput(), Payload: json.RawMessage(`{"messages":[{"role":"user","content":"hello"}]}`)}
}

func TestControllerHit(t *testing.T) {
	port := &fakePort{tryReuse: answer(goodHit)}
	c := NewController(port)
	res, err := c.Complete(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	want := contract.LocalKVMetadata{Mode: contract.LocalKVHit, PrefixTokens: 120, ContextTokens: 160, SavedPrefillTokens: 100, PrefillLatencyMs: 1.5}
	if res.Status != StatusCompleted || string(res.Output) != `{"text":"hit"}` || res.LocalKV == nil || *res.LocalKV != want {
		t.Fatalf("result = %+v (%+v)", res, res.LocalKV)
	}
	if port.replays.Load() != 0 {
		t.Error("full replay after a hit")
	}
	r := port.last[0]
	if r.Key.Fingerprint != baselineFingerprint || r.Provider != "ollama" || r.Model != "codestral:latest" ||
		r.PrefixTokenCount != 120 || r.ContextTokenCount != 160 || string(r.Payload) != string(request().Payload) {
		t.Errorf("port request = %+v", r)
	}
	wantDiag := Diagnostics{Version: contract.LocalKVDiagnosticsVersion, Requests: 1, EligibleRequests: 1, Hits: 1,
		PrefixTokens: 120, ContextTokens: 160, SavedPrefillTokens: 100}
	if d := c.Diagnostics(); d != wantDiag {
		t.Errorf("diagnostics = %+v", d)
	}
}

func TestControllerNonHitsReplay(t *testing.T) {
	errPort := errors.New("runtime down")
	cases := []struct {
		name   string
		try    func(ReuseRequest) (ReuseAnswer, error)
		counts func(*Diagnostics)
	}{
		{"miss", answer(ReuseAnswer{Status: ReuseMiss}), func(d *Diagnostics) { d.Misses = 1 }},
		{"rejected", answer(ReuseAnswer{Status: ReuseRejected}), func(d *Diagnostics) { d.Rejected = 1 }},
		{"unavailable", answer(ReuseAnswer{Status: ReuseUnavailable}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"error", func(ReuseRequest) (ReuseAnswer, error) { return goodHit, errPort }, func(d *Diagnostics) { d.Unavailable = 1 }},
		{"unknown status", answer(ReuseAnswer{Status: "partial", Output: goodHit.Output}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"empty status", answer(ReuseAnswer{}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit without output", answer(ReuseAnswer{Status: ReuseHit, SavedPrefillTokens: 1}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit with empty output", answer(ReuseAnswer{Status: ReuseHit, Output: json.RawMessage{}}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit with malformed output", answer(ReuseAnswer{Status: ReuseHit, Output: json.RawMessage(`{"a"`)}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit saving more than the prefix", answer(ReuseAnswer{Status: ReuseHit, Output: goodHit.Output, SavedPrefillTokens: 121}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit saving negative", answer(ReuseAnswer{Status: ReuseHit, Output: goodHit.Output, SavedPrefillTokens: -1}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit with NaN latency", answer(ReuseAnswer{Status: ReuseHit, Output: goodHit.Output, PrefillLatencyMs: math.NaN()}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit with infinite latency", answer(ReuseAnswer{Status: ReuseHit, Output: goodHit.Output, PrefillLatencyMs: math.Inf(1)}), func(d *Diagnostics) { d.Unavailable = 1 }},
		{"hit with negative latency", answer(ReuseAnswer{Status: ReuseHit, Output: goodHit.Output, PrefillLatencyMs: -0.5}), func(d *Diagnostics) { d.Unavailable = 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			port := &fakePort{tryReuse: tc.try}
			c := NewController(port)
			res, err := c.Complete(context.Background(), request())
			if err != nil {
				t.Fatal(err)
			}
			want := contract.LocalKVMetadata{Mode: contract.LocalKVFullReplay, PrefixTokens: 120, ContextTokens: 160, ReplayPrefillTokens: 160, PrefillLatencyMs: 12.25}
			if res.Status != StatusCompleted || string(res.Output) != `{"text":"replay"}` || res.LocalKV == nil || *res.LocalKV != want {
				t.Fatalf("result = %+v (%+v)", res, res.LocalKV)
			}
			if port.tries.Load() != 1 || port.replays.Load() != 1 {
				t.Errorf("tries %d replays %d", port.tries.Load(), port.replays.Load())
			}
			wantDiag := Diagnostics{Version: contract.LocalKVDiagnosticsVersion, Requests: 1, EligibleRequests: 1,
				FullReplays: 1, PrefixTokens: 120, ContextTokens: 160, ReplayPrefillTokens: 160, ReplayPrefillLatencyMs: 12.25}
			tc.counts(&wantDiag)
			if d := c.Diagnostics(); d != wantDiag {
				t.Errorf("diagnostics\n got %+v\nwant %+v", d, wantDiag)
			}
		})
	}
}

func TestControllerHitEdges(t *testing.T) {
	// Saving the whole prefix, saving nothing, zero latency and a null
	// output are all well formed.
	for _, a := range []ReuseAnswer{
		{Status: ReuseHit, Output: goodHit.Output, SavedPrefillTokens: 120},
		{Status: ReuseHit, Output: json.RawMessage("null"), SavedPrefillTokens: 0, PrefillLatencyMs: 0},
	} {
		c := NewController(&fakePort{tryReuse: answer(a)})
		res, err := c.Complete(context.Background(), request())
		if err != nil || res.LocalKV == nil || res.LocalKV.Mode != contract.LocalKVHit {
			t.Errorf("answer %+v: %+v, %v", a, res, err)
		}
	}
}

func TestControllerReplayFailure(t *testing.T) {
	errPort := errors.New("transport closed")
	cases := []struct {
		name      string
		replay    func(ReuseRequest) (ReplayAnswer, error)
		portErr   error
		malformed bool
	}{
		{"error", func(ReuseRequest) (ReplayAnswer, error) { return goodReplay, errPort }, errPort, false},
		{"context error", func(ReuseRequest) (ReplayAnswer, error) { return ReplayAnswer{}, context.Canceled }, context.Canceled, false},
		{"missing output", func(ReuseRequest) (ReplayAnswer, error) { return ReplayAnswer{PrefillTokens: 1}, nil }, nil, true},
		{"malformed output", func(ReuseRequest) (ReplayAnswer, error) {
			return ReplayAnswer{Output: json.RawMessage("{"), PrefillTokens: 1}, nil
		}, nil, true},
		{"negative prefill", func(ReuseRequest) (ReplayAnswer, error) {
			return ReplayAnswer{Output: goodReplay.Output, PrefillTokens: -1}, nil
		}, nil, true},
		{"NaN latency", func(ReuseRequest) (ReplayAnswer, error) {
			return ReplayAnswer{Output: goodReplay.Output, PrefillLatencyMs: math.NaN()}, nil
		}, nil, true},
		{"infinite latency", func(ReuseRequest) (ReplayAnswer, error) {
			return ReplayAnswer{Output: goodReplay.Output, PrefillLatencyMs: math.Inf(1)}, nil
		}, nil, true},
		{"negative latency", func(ReuseRequest) (ReplayAnswer, error) {
			return ReplayAnswer{Output: goodReplay.Output, PrefillLatencyMs: -1}, nil
		}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewController(&fakePort{tryReuse: answer(ReuseAnswer{Status: ReuseMiss}), fullReplay: tc.replay})
			res, err := c.Complete(context.Background(), request())
			if !errors.Is(err, ErrReplayFailed) {
				t.Fatalf("error = %v, want ErrReplayFailed", err)
			}
			if tc.portErr != nil && !errors.Is(err, tc.portErr) {
				t.Errorf("error %v does not wrap the port's error", err)
			}
			if errors.Is(err, ErrMalformedAnswer) != tc.malformed {
				t.Errorf("malformed = %v, want %v", errors.Is(err, ErrMalformedAnswer), tc.malformed)
			}
			if tc.portErr == context.Canceled && !strings.HasSuffix(err.Error(), "context canceled") {
				t.Errorf("error text %q does not say the context was canceled", err)
			}
			var pe *PortError
			if !errors.As(err, &pe) || pe.Op != "full replay" {
				t.Errorf("error %T is not a full replay *PortError", err)
			}
			if res.Status != "" || res.Output != nil || res.LocalKV != nil {
				t.Errorf("result on failure = %+v", res)
			}
			want := Diagnostics{Version: contract.LocalKVDiagnosticsVersion, Requests: 1, EligibleRequests: 1,
				Misses: 1, FullReplays: 1, TransportFailures: 1, PrefixTokens: 120, ContextTokens: 160}
			if d := c.Diagnostics(); d != want {
				t.Errorf("diagnostics\n got %+v\nwant %+v", d, want)
			}
		})
	}
}

func TestControllerIneligibleBypass(t *testing.T) {
	port := &fakePort{tryReuse: answer(goodHit)}
	c := NewController(port)
	req := request()
	req.Input.Destination = "remote"
	res, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusIneligible || res.Reason != ReasonNonLocalDestination || res.Output != nil || res.LocalKV != nil {
		t.Fatalf("result = %+v", res)
	}
	if port.tries.Load() != 0 || port.replays.Load() != 0 {
		t.Error("port called for an ineligible request")
	}
	want := Diagnostics{Version: contract.LocalKVDiagnosticsVersion, Requests: 1, BypassedRequests: 1}
	if d := c.Diagnostics(); d != want {
		t.Errorf("diagnostics = %+v", d)
	}
	b, _ := json.Marshal(res)
	if string(b) != `{"status":"ineligible","reason":"non-local-destination"}` {
		t.Errorf("ineligible JSON = %s", b)
	}
}

func TestControllerPortGetsItsOwnPayload(t *testing.T) {
	req := request()
	original := string(req.Payload)
	port := &fakePort{
		tryReuse: func(r ReuseRequest) (ReuseAnswer, error) {
			for i := range r.Payload {
				r.Payload[i] = 'x' // a careless runtime scribbling on its copy
			}
			return ReuseAnswer{Status: ReuseMiss}, nil
		},
		fullReplay: func(r ReuseRequest) (ReplayAnswer, error) {
			if string(r.Payload) != original {
				return ReplayAnswer{}, errors.New("replayed a modified payload")
			}
			return goodReplay, nil
		},
	}
	if _, err := NewController(port).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if string(req.Payload) != original {
		t.Error("caller's payload modified")
	}
}

func TestControllerSaturation(t *testing.T) {
	huge := ReuseAnswer{Status: ReuseHit, Output: goodHit.Output, SavedPrefillTokens: MaxSafeInteger, PrefillLatencyMs: 1}
	c := NewController(&fakePort{tryReuse: answer(huge)})
	req := request()
	req.Input.PrefixTokenCount, req.Input.ContextTokenCount = MaxSafeInteger, MaxSafeInteger
	for range 3 {
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	d := c.Diagnostics()
	if d.PrefixTokens != MaxSafeInteger || d.ContextTokens != MaxSafeInteger || d.SavedPrefillTokens != MaxSafeInteger || d.Hits != 3 {
		t.Errorf("token counters did not saturate: %+v", d)
	}

	// Replay counters, including a prefill count beyond 2^53 and the latency sum.
	c = NewController(&fakePort{
		tryReuse: answer(ReuseAnswer{Status: ReuseMiss}),
		fullReplay: func(ReuseRequest) (ReplayAnswer, error) {
			return ReplayAnswer{Output: goodReplay.Output, PrefillTokens: 1 << 60, PrefillLatencyMs: 6e15}, nil
		},
	})
	for range 2 {
		if _, err := c.Complete(context.Background(), request()); err != nil {
			t.Fatal(err)
		}
	}
	d = c.Diagnostics()
	if d.ReplayPrefillTokens != MaxSafeInteger || d.ReplayPrefillLatencyMs != MaxSafeInteger {
		t.Errorf("replay counters did not saturate: %+v", d)
	}

	// Event counters: start one short of the limit.
	c = NewController(&fakePort{tryReuse: answer(ReuseAnswer{Status: ReuseMiss}), fullReplay: func(ReuseRequest) (ReplayAnswer, error) {
		return ReplayAnswer{}, errors.New("down")
	}})
	c.d = Diagnostics{Requests: MaxSafeInteger - 1, EligibleRequests: MaxSafeInteger - 1, BypassedRequests: MaxSafeInteger - 1,
		Misses: MaxSafeInteger - 1, FullReplays: MaxSafeInteger - 1, TransportFailures: MaxSafeInteger - 1}
	bypass := request()
	bypass.Input.Enabled = false
	for range 3 {
		c.Complete(context.Background(), request())
		c.Complete(context.Background(), bypass)
	}
	d = c.Diagnostics()
	for name, v := range map[string]int64{"requests": d.Requests, "eligible": d.EligibleRequests, "bypassed": d.BypassedRequests,
		"misses": d.Misses, "fullReplays": d.FullReplays, "transportFailures": d.TransportFailures} {
		if v != MaxSafeInteger {
			t.Errorf("%s = %d, want %d", name, v, int64(MaxSafeInteger))
		}
	}
}

func TestSatAdd(t *testing.T) {
	for _, c := range []struct{ v, n, want int64 }{
		{0, 0, 0}, {1, 2, 3}, {MaxSafeInteger - 1, 1, MaxSafeInteger}, {MaxSafeInteger - 1, 2, MaxSafeInteger},
		{MaxSafeInteger, 0, MaxSafeInteger}, {MaxSafeInteger, 1, MaxSafeInteger}, {5, math.MaxInt64 - 4, MaxSafeInteger},
	} {
		if got := satAdd(c.v, c.n); got != c.want {
			t.Errorf("satAdd(%d, %d) = %d, want %d", c.v, c.n, got, c.want)
		}
	}
}

func TestControllerReset(t *testing.T) {
	c := NewController(&fakePort{tryReuse: answer(goodHit)})
	c.Complete(context.Background(), request())
	c.ResetDiagnostics()
	if d := c.Diagnostics(); d != (Diagnostics{Version: contract.LocalKVDiagnosticsVersion}) {
		t.Fatalf("after reset: %+v", d)
	}
	c.Complete(context.Background(), request())
	if d := c.Diagnostics(); d.Requests != 1 || d.Hits != 1 {
		t.Fatalf("counting after reset: %+v", d)
	}
}

func TestDiagnosticsJSON(t *testing.T) {
	c := NewController(&fakePort{tryReuse: answer(goodHit)})
	b, err := json.Marshal(c.Diagnostics())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"local-kv-diagnostics-v1","requests":0,"eligibleRequests":0,"bypassedRequests":0,"hits":0,` +
		`"misses":0,"rejected":0,"unavailable":0,"fullReplays":0,"transportFailures":0,"prefixTokens":0,` +
		`"contextTokens":0,"savedPrefillTokens":0,"replayPrefillTokens":0,"replayPrefillLatencyMs":0}`
	if string(b) != want {
		t.Errorf("diagnostics JSON\n got %s\nwant %s", b, want)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for k, v := range m {
		if _, ok := v.(float64); !ok && k != "version" {
			t.Errorf("%s is not a number", k)
		}
	}
}

func TestControllerConcurrent(t *testing.T) {
	// Outcome by model name, so every goroutine mixes every path.
	port := &fakePort{
		tryReuse: func(r ReuseRequest) (ReuseAnswer, error) {
			switch r.Model {
			case "hit":
				return goodHit, nil
			case "miss":
				return ReuseAnswer{Status: ReuseMiss}, nil
			case "rejected":
				return ReuseAnswer{Status: ReuseRejected}, nil
			}
			return ReuseAnswer{}, errors.New("unavailable")
		},
		fullReplay: func(r ReuseRequest) (ReplayAnswer, error) {
			if r.Model == "broken" {
				return ReplayAnswer{}, errors.New("down")
			}
			return goodReplay, nil
		},
	}
	port.last = make([]ReuseRequest, 0, 1<<16)
	c := NewController(port)
	models := []string{"hit", "miss", "rejected", "error", "broken", "bypass"}
	const goroutines, rounds = 32, 60 // rounds is a multiple of len(models)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				req := request()
				req.Input.Model = models[(g+i)%len(models)]
				if req.Input.Model == "bypass" {
					req.Input.Enabled = false
				}
				res, err := c.Complete(context.Background(), req)
				if (req.Input.Model == "broken") != (err != nil) {
					t.Errorf("model %s: %+v, %v", req.Input.Model, res, err)
				}
				if i%10 == 0 {
					c.Diagnostics()
				}
			}
		})
	}
	wg.Wait()
	const total = goroutines * rounds
	per := int64(total / len(models)) // total is a multiple of len(models)
	if total%len(models) != 0 {
		t.Fatal("test sizes must divide evenly")
	}
	d := c.Diagnostics()
	eligible := 5 * per
	want := Diagnostics{
		Version: contract.LocalKVDiagnosticsVersion, Requests: total, EligibleRequests: eligible, BypassedRequests: per,
		Hits: per, Misses: per, Rejected: per, Unavailable: 2 * per, FullReplays: 4 * per, TransportFailures: per,
		PrefixTokens: 120 * eligible, ContextTokens: 160 * eligible, SavedPrefillTokens: 100 * per,
		ReplayPrefillTokens: 160 * 3 * per, ReplayPrefillLatencyMs: 12.25 * float64(3*per),
	}
	if d != want {
		t.Errorf("diagnostics\n got %+v\nwant %+v", d, want)
	}
	if d.Requests != d.EligibleRequests+d.BypassedRequests || d.EligibleRequests != d.Hits+d.FullReplays ||
		d.FullReplays != d.Misses+d.Rejected+d.Unavailable {
		t.Errorf("counters do not add up: %+v", d)
	}
}

type shutdownPort struct {
	fakePort
	calls atomic.Int64
	err   error
}

func (p *shutdownPort) Shutdown(context.Context) error {
	p.calls.Add(1)
	return p.err
}

func TestControllerShutdown(t *testing.T) {
	if err := NewController(&fakePort{}).Shutdown(context.Background()); err != nil {
		t.Errorf("port without shutdown: %v", err)
	}
	p := &shutdownPort{}
	c := NewController(p)
	for range 3 {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if p.calls.Load() != 1 {
		t.Errorf("shutdown called %d times", p.calls.Load())
	}
	cause := errors.New("socket busy: payload {secret}")
	p = &shutdownPort{err: cause}
	err := NewController(p).Shutdown(context.Background())
	if !errors.Is(err, ErrShutdownFailed) || !errors.Is(err, cause) || strings.Contains(err.Error(), "secret") {
		t.Errorf("shutdown error = %v", err)
	}
}

func TestNewControllerNilPort(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a nil port")
		}
	}()
	NewController(nil)
}

// TestNothingSecretLeaks drives every path with a secret prefix, payload and
// options, and a port whose errors quote the payload, and checks that no
// error, result or diagnostic carries the prefix, payload or fingerprint.
func TestNothingSecretLeaks(t *testing.T) {
	const prefix, payload = "PREFIX-SECRET-41f3", "PAYLOAD-SECRET-9c2e"
	req := request()
	req.Input.PromptPrefix = []byte(prefix)
	req.Payload = json.RawMessage(`{"content":"` + payload + `"}`)
	fingerprint := DeriveEligibility(req.Input).Key.Fingerprint
	leaky := func(r ReuseRequest) error {
		return errors.New("runtime failed on " + string(r.Payload) + " key " + r.Key.Fingerprint)
	}
	ports := map[string]*fakePort{
		"try error, replay error": {
			tryReuse:   func(r ReuseRequest) (ReuseAnswer, error) { return ReuseAnswer{}, leaky(r) },
			fullReplay: func(r ReuseRequest) (ReplayAnswer, error) { return ReplayAnswer{}, leaky(r) },
		},
		"malformed replay": {
			tryReuse:   answer(ReuseAnswer{Status: ReuseMiss}),
			fullReplay: func(ReuseRequest) (ReplayAnswer, error) { return ReplayAnswer{PrefillTokens: -1}, nil },
		},
		"hit":    {tryReuse: answer(goodHit)},
		"replay": {tryReuse: answer(ReuseAnswer{Status: ReuseRejected})},
	}
	var texts []string
	for name, port := range ports {
		c := NewController(port)
		res, err := c.Complete(context.Background(), req)
		if err != nil {
			texts = append(texts, name+" error: "+err.Error())
		}
		b, _ := json.Marshal(res.LocalKV)
		texts = append(texts, name+" metadata: "+string(b))
		b, _ = json.Marshal(c.Diagnostics())
		texts = append(texts, name+" diagnostics: "+string(b))
	}
	bypass := req
	bypass.Input.Destination = "remote"
	res, _ := NewController(&fakePort{}).Complete(context.Background(), bypass)
	b, _ := json.Marshal(res)
	texts = append(texts, "bypass result: "+string(b))
	for _, text := range texts {
		for _, secret := range []string{prefix, payload, fingerprint} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains a secret", text)
			}
		}
	}
	if len(texts) < 2*len(ports) {
		t.Fatal("nothing checked")
	}
}
