package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/examples/memadapter"
)

var ctx = context.Background()

// correct is a conforming adapter.
func correct() conformance.Factory { return memadapter.ConformanceFactory() }

// wrapped returns correct()'s factory with each adapter passed through wrap,
// and counts cleanups.
func wrapped(wrap func(contract.Adapter, conformance.Setup) contract.Adapter, cleanups *int) conformance.Factory {
	return conformance.NewFactory("wrapped", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := correct().Create(ctx, setup)
		if err != nil {
			return inst, err
		}
		inst.Adapter = wrap(inst.Adapter, setup)
		clean := inst.Cleanup
		inst.Cleanup = func(ctx context.Context) error {
			*cleanups++
			return clean(ctx)
		}
		return inst, nil
	})
}

// hooked overrides single methods of an adapter.
type hooked struct {
	contract.Adapter
	snapshot func(context.Context) (contract.HistorySnapshot, error)
	privacy  func(context.Context, contract.PrivacyRequest) (contract.PrivacyResult, error)
	complete func(context.Context, contract.CompletionRequest) contract.CompletionResult
	shutdown func(context.Context) error
}

func (h hooked) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	if h.snapshot != nil {
		return h.snapshot(ctx)
	}
	return h.Adapter.SnapshotHistory(ctx)
}

func (h hooked) EnforcePrivacy(ctx context.Context, r contract.PrivacyRequest) (contract.PrivacyResult, error) {
	if h.privacy != nil {
		return h.privacy(ctx, r)
	}
	return h.Adapter.EnforcePrivacy(ctx, r)
}

func (h hooked) Complete(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
	if h.complete != nil {
		return h.complete(ctx, r)
	}
	return h.Adapter.Complete(ctx, r)
}

func (h hooked) Shutdown(ctx context.Context) error {
	if h.shutdown != nil {
		return h.shutdown(ctx)
	}
	return h.Adapter.Shutdown(ctx)
}

func TestRunReportsAPassingAdapterInWireFormat(t *testing.T) {
	r, err := conformance.Run(ctx, correct())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r)
	want := `{"version":"runtime-adapter-conformance-v1","contractVersion":"runtime-adapter-v1","factoryName":"memadapter","passed":true,"cases":[` +
		`{"id":"identity","passed":true},{"id":"capabilities","passed":true},{"id":"canonical-history","passed":true},{"id":"rebuild","passed":true},` +
		`{"id":"privacy","passed":true},{"id":"fallback","passed":true},{"id":"lifecycle","passed":true}]}`
	if string(got) != want {
		t.Fatalf("report\n got %s\nwant %s", got, want)
	}
	if err := conformance.Assert(r); err != nil {
		t.Fatalf("Assert = %v", err)
	}
	if err := conformance.Verify(ctx, correct()); err != nil {
		t.Fatalf("Verify = %v", err)
	}
}

func TestCaseIDsAreTheSevenInOrder(t *testing.T) {
	want := []string{"identity", "capabilities", "canonical-history", "rebuild", "privacy", "fallback", "lifecycle"}
	if got := conformance.CaseIDs(); !slices.Equal(got, want) {
		t.Fatalf("CaseIDs = %q, want %q", got, want)
	}
	var contractIDs []string
	for _, c := range conformance.Checks() {
		if c.Summary == "" || c.Rule == "" {
			t.Errorf("check %s has no summary or rule", c.ID)
		}
		if got, ok := conformance.CheckByID(c.ID); !ok || got.ID != c.ID {
			t.Errorf("CheckByID(%q) = %v, %t", c.ID, got.ID, ok)
		}
		if (c.Kind == conformance.KindFeature) != (c.Capability != "") {
			t.Errorf("check %s: kind %s, capability %q", c.ID, c.Kind, c.Capability)
		}
		if c.Kind == conformance.KindContract && c.ID != conformance.CheckInOrder {
			contractIDs = append(contractIDs, c.ID)
		}
	}
	if !slices.Equal(contractIDs, want) {
		t.Fatalf("the catalogue's contract cases are %q, want %q", contractIDs, want)
	}
	if _, ok := conformance.CheckByID("no-such-check"); ok {
		t.Fatal("CheckByID found an unknown id")
	}
}

func TestFactoryFailureIsAnErrorAndCleanupStillRuns(t *testing.T) {
	boom := errors.New("native runtime unavailable")
	cleaned := 0
	cleanup := func(context.Context) error { cleaned++; return nil }
	for name, f := range map[string]conformance.Factory{
		"error": conformance.NewFactory("f", func(context.Context, conformance.Setup) (conformance.Instance, error) {
			return conformance.Instance{Cleanup: cleanup}, boom
		}),
		"no adapter": conformance.NewFactory("f", func(context.Context, conformance.Setup) (conformance.Instance, error) {
			return conformance.Instance{Cleanup: cleanup}, nil
		}),
		"panic": conformance.NewFactory("f", func(context.Context, conformance.Setup) (conformance.Instance, error) {
			panic("factory exploded")
		}),
	} {
		r, err := conformance.Run(ctx, f)
		if !errors.Is(err, conformance.ErrFactory) || r.Cases != nil {
			t.Errorf("%s: Run = %v, %v; want ErrFactory and no report", name, r, err)
		}
		if name == "error" && !errors.Is(err, boom) {
			t.Errorf("%s: %v does not wrap the factory's error", name, err)
		}
	}
	if cleaned != 2 {
		t.Errorf("cleanup ran %d times, want 2", cleaned)
	}
}

func TestFinalShutdownOrCleanupFailureIsAnError(t *testing.T) {
	cleaned := 0
	closed := false
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, shutdown: func(ctx context.Context) error {
			if closed {
				return errors.New("already closed")
			}
			closed = true
			return a.Shutdown(ctx)
		}}
	}, &cleaned)
	r, err := conformance.Run(ctx, f)
	if !errors.Is(err, conformance.ErrShutdown) || r.Cases != nil || cleaned != 1 {
		t.Fatalf("Run = %v, %v, %d cleanups; want ErrShutdown, no report, 1 cleanup", r, err, cleaned)
	}

	failing := conformance.NewFactory("f", func(ctx context.Context, s conformance.Setup) (conformance.Instance, error) {
		inst, err := correct().Create(ctx, s)
		inst.Cleanup = func(context.Context) error { return errors.New("cannot remove") }
		return inst, err
	})
	if _, err := conformance.Run(ctx, failing); !errors.Is(err, conformance.ErrCleanup) {
		t.Fatalf("Run = %v, want ErrCleanup", err)
	}
}

func TestAdapterErrorsAndPanicsAreThrew(t *testing.T) {
	cleaned := 0
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a,
			snapshot: func(context.Context) (contract.HistorySnapshot, error) {
				return contract.HistorySnapshot{}, errors.New("history unreadable")
			},
			privacy: func(context.Context, contract.PrivacyRequest) (contract.PrivacyResult, error) {
				panic("sanitiser crashed")
			},
		}
	}, &cleaned)
	r, err := conformance.Run(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"canonical-history": "canonical-history-threw",
		"rebuild":           "rebuild-threw", // its baseline is a fresh snapshot, which fails
		"privacy":           "privacy-threw",
	}
	for _, c := range r.Cases {
		if c.FailureCode != want[c.ID] || c.Passed != (want[c.ID] == "") {
			t.Errorf("case %s: passed %t, code %q; want code %q", c.ID, c.Passed, c.FailureCode, want[c.ID])
		}
	}
	if r.Passed || cleaned != 1 {
		t.Errorf("passed %t, %d cleanups", r.Passed, cleaned)
	}
}

// Every check passes memadapter alone, on instances of its own; the model
// runs a short sequence here (its default run is TestModelPassesMemadapter's).
func TestEveryCheckPassesOnAFreshInstance(t *testing.T) {
	for _, c := range conformance.Checks() {
		r := c.Run(ctx, correct(), conformance.WithModelSteps(60))
		if !r.Passed() || r.Failure != nil {
			t.Errorf("check %s alone: %s %v", c.ID, r.Status, r.Failure)
		}
	}
}

func TestFailuresExplainTheRule(t *testing.T) {
	cleaned := 0
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, complete: func(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
			res := a.Complete(ctx, r)
			res.Retryable = false
			return res
		}}
	}, &cleaned)
	err := conformance.Verify(ctx, f)
	var fl *conformance.Failure
	if !errors.As(err, &fl) || !errors.Is(err, conformance.ErrCaseFailed) {
		t.Fatalf("Verify = %v, want a *Failure", err)
	}
	if fl.Check != "fallback" || fl.Code != "fallback-assertion-failed" ||
		!strings.Contains(fl.Rule, "retryable") || !strings.Contains(fl.Expected, "retryable true") || !strings.Contains(fl.Actual, "retryable false") {
		t.Fatalf("failure = %+v", fl)
	}
}

// leaky forwards the raw payload and quotes payloads in its errors.
func leaky(a contract.Adapter, setup conformance.Setup) contract.Adapter {
	return hooked{Adapter: a,
		privacy: func(_ context.Context, r contract.PrivacyRequest) (contract.PrivacyResult, error) {
			b, _ := json.Marshal(r.Payload)
			return contract.PrivacyResult{}, fmt.Errorf("cannot sanitise %s", b)
		},
		complete: func(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
			b, err := json.Marshal(r.Payload)
			if err != nil {
				b = []byte(conformance.ProbeCredential + "-000000")
			}
			_, _ = setup.Transport.Send(ctx, contract.TransportRequest{Provider: r.Provider, Model: r.Model, Destination: contract.DestinationLocal, Payload: b})
			return contract.Fallback(contract.FallbackTransportFailed, "failed: "+string(b), false)
		},
		snapshot: func(context.Context) (contract.HistorySnapshot, error) {
			return contract.HistorySnapshot{}, errors.New("history holds " + conformance.ProbePrivateValue)
		},
	}
}

func TestNothingTheKitWritesHoldsAProbe(t *testing.T) {
	cleaned := 0
	f := wrapped(leaky, &cleaned)
	r, err := conformance.Run(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	report, _ := json.Marshal(r)
	verr := conformance.Verify(ctx, f)
	aerr := conformance.Assert(r)
	if verr == nil || aerr == nil {
		t.Fatal("a leaking adapter passed")
	}
	for name, text := range map[string]string{"report": string(report), "Verify": verr.Error(), "Assert": aerr.Error()} {
		if conformance.ContainsProbe([]byte(text)) || strings.Contains(text, "[ds4:") {
			t.Errorf("%s holds a probe or payload text:\n%s", name, text)
		}
	}
	if !strings.Contains(verr.Error(), "[probe redacted]") {
		t.Errorf("Verify does not show that it redacted the adapter's error:\n%s", verr)
	}
}

func TestAssert(t *testing.T) {
	pass, _ := conformance.Run(ctx, correct())
	failed := pass
	failed.Cases = slices.Clone(pass.Cases)
	failed.Cases[4] = conformance.CaseReport{ID: "privacy", FailureCode: "privacy-assertion-failed"}
	failed.Cases[6] = conformance.CaseReport{ID: "lifecycle", FailureCode: "lifecycle-threw"}
	failed.Passed = false
	err := conformance.Assert(failed)
	if !errors.Is(err, conformance.ErrCaseFailed) || errors.Is(err, conformance.ErrReportInvalid) ||
		!strings.Contains(err.Error(), "privacy (privacy-assertion-failed)") || !strings.Contains(err.Error(), "lifecycle (lifecycle-threw)") {
		t.Errorf("Assert(failed) = %v", err)
	}
	for name, mutate := range map[string]func(*conformance.Report){
		"wrong version":    func(r *conformance.Report) { r.Version = "runtime-adapter-conformance-v0" },
		"wrong contract":   func(r *conformance.Report) { r.ContractVersion = "runtime-adapter-v0" },
		"missing case":     func(r *conformance.Report) { r.Cases = r.Cases[:6] },
		"marked failed":    func(r *conformance.Report) { r.Passed = false },
		"cases reordered":  func(r *conformance.Report) { r.Cases[0], r.Cases[1] = r.Cases[1], r.Cases[0] },
		"empty report":     func(r *conformance.Report) { *r = conformance.Report{} },
		"case id in probe": func(r *conformance.Report) { r.Cases[0].ID = conformance.ProbePrivateValue },
	} {
		r := pass
		r.Cases = slices.Clone(pass.Cases)
		mutate(&r)
		err := conformance.Assert(r)
		if !errors.Is(err, conformance.ErrReportInvalid) || conformance.ContainsProbe([]byte(err.Error())) {
			t.Errorf("%s: Assert = %v, want ErrReportInvalid without a probe", name, err)
		}
	}
}

func TestRecordingTransport(t *testing.T) {
	tr := conformance.NewRecordingTransport()
	req := contract.TransportRequest{Provider: "p", Model: "m", Destination: contract.DestinationRemote, Payload: json.RawMessage(`{"a":1}`)}
	out, err := tr.Send(ctx, req)
	if err != nil || string(out) != conformance.TransportOutput || tr.Len() != 1 {
		t.Fatalf("Send = %s, %v, %d requests", out, err, tr.Len())
	}
	tr.FailNext()
	if _, err := tr.Send(ctx, req); !errors.Is(err, conformance.ErrInjectedTransportFailure) || tr.Len() != 1 {
		t.Fatalf("armed Send = %v, %d requests; want a failure, not recorded", err, tr.Len())
	}
	if _, err := tr.Send(ctx, req); err != nil || tr.Len() != 2 {
		t.Fatalf("FailNext must fail once only: %v, %d requests", err, tr.Len())
	}
	tr.FailNext()
	if !tr.Disarm() || tr.Disarm() {
		t.Fatal("Disarm must report a pending failure once")
	}
	got := tr.Requests()
	got[0].Payload[0] = 'X'
	if string(tr.Requests()[0].Payload) != `{"a":1}` {
		t.Fatal("Requests must return copies")
	}
}

func TestProbesAndPayloads(t *testing.T) {
	if _, err := json.Marshal(conformance.HostilePayload()); !errors.Is(err, conformance.ErrHostilePayload) {
		t.Fatalf("marshalling the hostile payload: %v", err)
	}
	b, err := json.Marshal(conformance.PrivacyPayload())
	if err != nil || !conformance.ContainsProbe(b) {
		t.Fatalf("the privacy payload must hold the probes: %s, %v", b, err)
	}
	if b, _ := json.Marshal(conformance.PlainPayload()); conformance.ContainsProbe(b) {
		t.Fatal("the plain payload holds a probe")
	}
	for _, in := range []string{
		`{"x":"\u0044S4_CONFORMANCE_PRIVATE_VALUE"}`,
		`{"sk-conformance-credential-1":1}`,
		`["sk\u002dconformance-credential"]`,
	} {
		if !conformance.ContainsProbe([]byte(in)) {
			t.Errorf("ContainsProbe(%s) = false", in)
		}
	}
	if conformance.ContainsProbe([]byte(`{"x":"DS4_CONFORMANCE"}`)) {
		t.Error("ContainsProbe found a probe in a prefix")
	}
	long := strings.Repeat("é", 200) + conformance.ProbeCredential
	if r := conformance.Redact("key " + conformance.ProbeCredential + "-1 " + long); conformance.ContainsProbe([]byte(r)) || len(r) > 170 {
		t.Errorf("Redact = %q", r)
	}
}

func TestCheckHistory(t *testing.T) {
	fx := conformance.NewFixture()
	if err := conformance.CheckHistory(ctx, correct(), fx.Messages); err != nil {
		t.Fatalf("CheckHistory(correct adapter) = %v", err)
	}
	cleaned := 0
	incomplete := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, snapshot: func(ctx context.Context) (contract.HistorySnapshot, error) {
			snap, err := a.SnapshotHistory(ctx)
			if err == nil && len(snap.ToolAtomicGroups) > 0 {
				snap.ToolAtomicGroups[0].Complete = false
			}
			return snap, err
		}}
	}, &cleaned)
	err := conformance.CheckHistory(ctx, incomplete, fx.Messages)
	var f *conformance.Failure
	if !errors.As(err, &f) || f.Check != conformance.CheckProjection || !strings.Contains(f.Actual, "tool-atomic-group-mismatch") {
		t.Fatalf("CheckHistory(incomplete group) = %v", err)
	}
	if cleaned != 1 {
		t.Fatalf("%d cleanups, want 1", cleaned)
	}
}

func TestFallbackAndLifecycleWatchTheTransport(t *testing.T) {
	cleaned := 0
	// Claims a transport failure without calling the transport.
	faked := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, complete: func(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
			return contract.Fallback(contract.FallbackTransportFailed, "completion transport failed", true)
		}}
	}, &cleaned)
	// Sends after shutdown and still reports adapter-closed.
	leaking := wrapped(func(a contract.Adapter, setup conformance.Setup) contract.Adapter {
		return hooked{Adapter: a, complete: func(ctx context.Context, r contract.CompletionRequest) contract.CompletionResult {
			res := a.Complete(ctx, r)
			if res.Code == contract.FallbackAdapterClosed {
				_, _ = setup.Transport.Send(ctx, contract.TransportRequest{Provider: r.Provider, Model: r.Model, Destination: contract.DestinationRemote, Payload: json.RawMessage(`{}`)})
			}
			return res
		}}
	}, &cleaned)
	for _, tc := range []struct {
		f        conformance.Factory
		id, rule string
	}{
		{faked, "fallback", "must call the transport"},
		{leaking, "lifecycle", "must not reach the transport"},
	} {
		c, _ := conformance.CheckByID(tc.id)
		r := c.Run(ctx, tc.f)
		if r.Passed() || !strings.Contains(r.Failure.Rule, tc.rule) {
			t.Errorf("%s: %+v, want a failure of rule %q", tc.id, r.Failure, tc.rule)
		}
	}
}

// refusing wraps correct() with a runtime that refuses, for images, the
// histories refuse says it cannot represent.
func refusing(refuse func(conformance.Fixture) bool) conformance.Factory {
	return conformance.NewFactory("refusing", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if refuse(setup.Fixture) {
			return conformance.Instance{}, conformance.Unrepresentable(gen.FamilyImage, "image blocks")
		}
		return correct().Create(ctx, setup)
	})
}

func TestRefusingTheFixtureFailsNeverSkips(t *testing.T) {
	f := refusing(func(conformance.Fixture) bool { return true })
	for _, id := range append(conformance.CaseIDs(), conformance.CheckNegotiation) {
		c, _ := conformance.CheckByID(id)
		r := c.Run(ctx, f)
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "every runtime holds the conformance fixture") ||
			!strings.Contains(r.Failure.Actual, "image blocks") {
			t.Errorf("%s: %s %+v, want a failure saying the fixture must be held", id, r.Status, r.Failure)
		}
	}
	if _, err := conformance.Run(ctx, f); !errors.Is(err, conformance.ErrUnrepresentable) || !errors.Is(err, conformance.ErrFactory) {
		t.Errorf("Run = %v, want a factory error", err)
	}
}

func TestProjectionCountsRefusalsWithinABound(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckProjection)
	images := refusing(func(fx conformance.Fixture) bool { return generated(fx) && holds(fx, gen.FamilyImage) })
	r := c.Run(ctx, images, conformance.WithHistories(40), conformance.WithSeed(1))
	n := limitCount(r.Limits, gen.FamilyImage)
	if r.Status != conformance.StatusPass || n == 0 || 2*n > 40 || len(r.Limits) != 1 || r.Limits[0].Reason != "refused: image blocks" ||
		r.Note != fmt.Sprintf("41 histories (40 generated, 1 long): %d projected faithfully, %d refused: %d image; 3 isolation histories refused", 41-n, n, n) {
		t.Fatalf("histories with images refused: %s %q %v %v", r.Status, r.Note, r.Limits, r.Failure)
	}
	// Leaving the family out draws none to refuse, and the report says so.
	rep := conformance.RunChecks(ctx, images, conformance.WithChecks(conformance.CheckProjection), conformance.WithoutFamilies(gen.FamilyImage))
	if !rep.Passed || len(rep.Limits) != 1 || rep.Limits[0] != (conformance.Limit{Family: gen.FamilyImage, Reason: "left out of the run (WithoutFamilies)"}) ||
		!slices.Equal(rep.LeftOut, []gen.Family{gen.FamilyImage}) ||
		!strings.HasSuffix(rep.Checks[0].Note, "; families left out: image") {
		t.Fatalf("image left out: %+v", rep)
	}
	// Refusing every history holding a family, each for its first, is
	// consistent, but refuses more than half.
	anyFamily := conformance.NewFactory("refusing", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		fams := slices.DeleteFunc(gen.FamiliesOf(setup.Fixture.Messages), func(f gen.Family) bool { return f == gen.FamilyLongHistory })
		if generated(setup.Fixture) && len(fams) > 0 {
			return conformance.Instance{}, conformance.Unrepresentable(fams[0])
		}
		return correct().Create(ctx, setup)
	})
	r = c.Run(ctx, anyFamily, conformance.WithHistories(40))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "too few generated histories") {
		t.Fatalf("every history with a family refused: %s %+v %v", r.Status, r.Failure, r.Limits)
	}
	var refusedHistory []contract.Message
	for seed := range 100 {
		if ms := gen.History(conformance.FixtureRuntimeID, conformance.FixtureSessionID).Example(seed); holds(conformance.Fixture{Messages: ms}, gen.FamilyImage) {
			refusedHistory = ms
			break
		}
	}
	var refusal *conformance.Refusal
	if err := conformance.CheckHistory(ctx, images, refusedHistory); !errors.Is(err, conformance.ErrUnrepresentable) ||
		!errors.As(err, &refusal) || refusal.Family != gen.FamilyImage || refusal.Detail != "image blocks" {
		t.Fatalf("CheckHistory of a refused history = %v", err)
	}
}

func generated(fx conformance.Fixture) bool {
	return !slices.Equal(fx.MessageIDs(), conformance.NewFixture().MessageIDs())
}

func holds(fx conformance.Fixture, f gen.Family) bool {
	return slices.Contains(gen.FamiliesOf(fx.Messages), f)
}

func limitCount(ls []conformance.Limit, f gen.Family) int {
	for _, l := range ls {
		if l.Family == f {
			return l.Count
		}
	}
	return 0
}

// namedOnCreate is a factory that learns its name from the first instance
// it creates, as an adapter process names itself in its hello.
type namedOnCreate struct {
	inner conformance.Factory
	mu    sync.Mutex
	name  string
}

func (f *namedOnCreate) Name() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.name == "" {
		return "executable"
	}
	return f.name
}

func (f *namedOnCreate) Create(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
	f.mu.Lock()
	f.name = "named by its instance"
	f.mu.Unlock()
	return f.inner.Create(ctx, setup)
}

func TestRunReportNamesTheFactoryAfterItsInstances(t *testing.T) {
	rep := conformance.RunChecks(ctx, &namedOnCreate{inner: correct()}, conformance.WithChecks(conformance.CaseIdentity))
	if rep.FactoryName != "named by its instance" || !rep.Passed {
		t.Fatalf("factory name %q (passed %t), want the name the factory gives once it created an instance", rep.FactoryName, rep.Passed)
	}
	rep = conformance.RunChecks(ctx, &namedOnCreate{inner: correct()}, conformance.WithChecks(conformance.CaseIdentity), conformance.WithName("chosen"))
	if rep.FactoryName != "chosen" {
		t.Fatalf("factory name %q, want the one WithName gives", rep.FactoryName)
	}
}
