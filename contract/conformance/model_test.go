package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/reference"
)

// The memadapter example passes the model check: a default run, 3,000
// steps in the long form.
func TestModelPassesMemadapter(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, correct(), conformance.WithModelSteps(longSteps(conformance.DefaultModelSteps, 3000)))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	t.Log(r.Note, r.Duration)
}

// Any input runs a sequence to its end, the empty one and one of zeros
// among them (a source of zeros once made rand's sampling loop for ever).
func TestCheckModelInputEndsForAnyInput(t *testing.T) {
	for _, in := range [][]byte{nil, make([]byte, 64), []byte("model"), make([]byte, 4096)} {
		if err := conformance.CheckModelInput(ctx, correct(), in); err != nil {
			t.Fatalf("input of %d bytes: %v", len(in), err)
		}
	}
}

// The reference adapter supports local KV: the model's run on it takes
// every local KV path SPEC §11 names, and passes — in every run, however
// few its steps (the first sequence's 96 completions on its instance with
// a port see to it).
func TestModelTakesEveryLocalKVPath(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, reference.NewConformanceFactory(), conformance.WithSeed(3), conformance.WithModelSteps(60))
	if r.Status != conformance.StatusPass {
		t.Fatalf("%s: %v", r.Status, r.Failure)
	}
	for _, path := range []string{" hits", " full replays", " failed replays", " ineligible"} {
		if !strings.Contains(r.Note, path) {
			t.Errorf("no local KV completion of the kind %q in %q", path, r.Note)
		}
	}
}

// kvSavedOffByOne reports one saved prefill token too many on every local
// KV hit.
type kvSavedOffByOne struct{ contract.Adapter }

func (a kvSavedOffByOne) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := a.Adapter.Complete(ctx, req)
	if r.LocalKV != nil && r.LocalKV.Mode == contract.LocalKVHit {
		m := *r.LocalKV
		m.SavedPrefillTokens++
		r.LocalKV = &m
	}
	return r
}

func TestModelChecksLocalKVMetadata(t *testing.T) {
	f := conformance.NewFactory("saved-off-by-one", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := reference.NewConformanceFactory().Create(ctx, setup)
		if err == nil {
			inst.Adapter = kvSavedOffByOne{inst.Adapter}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, f, conformance.WithoutShrinking(), conformance.WithSeed(3))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "metadata") || !strings.Contains(r.Failure.Actual, "kv hit") {
		t.Fatalf("%s: %+v", r.Status, r.Failure)
	}
}

// limitedSource is a runtime's source hook that cannot hold a message of
// one family: it answers refuse's error for one, and writes nothing.
type limitedSource struct {
	inner  conformance.Source
	family gen.Family
	refuse func(gen.Family) error
}

func (s limitedSource) check(msg contract.Message) error {
	if slices.Contains(gen.FamiliesOf([]contract.Message{msg}), s.family) {
		return s.refuse(s.family)
	}
	return nil
}

func (s limitedSource) Append(ctx context.Context, msg contract.Message) error {
	if err := s.check(msg); err != nil {
		return err
	}
	return s.inner.Append(ctx, msg)
}

func (s limitedSource) Corrupt(ctx context.Context) error { return s.inner.Corrupt(ctx) }

func (s limitedSource) Rewrite(ctx context.Context, msg contract.Message) error {
	if err := s.check(msg); err != nil {
		return err
	}
	return s.inner.(conformance.SourceRewriter).Rewrite(ctx, msg)
}

// limitedRuntime is correct() for a runtime that cannot hold histories of
// family: with declare it says so up front (Instance.Limits) and fails on
// such a history or message as a runtime would; otherwise its factory and
// source refuse them (conformance.Unrepresentable).
func limitedRuntime(family gen.Family, declare bool) conformance.Factory {
	refuse := func(f gen.Family) error { return conformance.Unrepresentable(f, "cannot hold it") }
	if declare {
		refuse = func(f gen.Family) error { return fmt.Errorf("the runtime cannot hold %s", f) }
	}
	return conformance.NewFactory("limited", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if slices.Contains(gen.FamiliesOf(setup.Fixture.Messages), family) {
			return conformance.Instance{}, refuse(family)
		}
		inst, err := correct().Create(ctx, setup)
		if err != nil {
			return inst, err
		}
		if declare {
			inst.Limits = []gen.Family{family}
		}
		inst.Source = limitedSource{inner: inst.Source, family: family, refuse: refuse}
		return inst, nil
	})
}

// A runtime that declares a family it cannot hold, or refuses it where it
// is handed one, passes the model check with the family shown as a limit.
func TestModelPassesALimitedRuntime(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	for _, declare := range []bool{true, false} {
		r := c.Run(ctx, limitedRuntime(gen.FamilyThinking, declare), conformance.WithSeed(5), conformance.WithModelSteps(200))
		if r.Status != conformance.StatusPass || len(r.Limits) != 1 || r.Limits[0].Family != gen.FamilyThinking {
			t.Fatalf("declared %t: %s %+v, limits %+v", declare, r.Status, r.Failure, r.Limits)
		}
		if declare && r.Limits[0].Reason != "declared by the instance" ||
			!declare && (r.Limits[0].Reason != "refused: cannot hold it" || r.Limits[0].Count == 0 || !strings.Contains(r.Note, "; refused: ")) {
			t.Fatalf("declared %t: limits %+v, note %q", declare, r.Limits, r.Note)
		}
	}
}

// A source refusing a message for a family it does not hold fails, as a
// factory's refusal does; a required family is no limit.
func TestModelRefusalsKeepTheRules(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	lying := lyingRefuser()
	r := c.Run(ctx, lying, conformance.WithoutShrinking(), conformance.WithSeed(5), conformance.WithModelSteps(200))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "refused for image; the history holds none") {
		t.Fatalf("lying refusal: %s %+v", r.Status, r.Failure)
	}
	r = c.Run(ctx, limitedRuntime(gen.FamilyThinking, false), conformance.WithoutShrinking(), conformance.WithSeed(5), conformance.WithModelSteps(200),
		conformance.WithRequiredFamilies(gen.FamilyThinking))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "a required family is no limit") {
		t.Fatalf("required family: %s %+v", r.Status, r.Failure)
	}
}

// lyingRefuser is the reference adapter whose source refuses a message
// holding a thinking block, naming a family the message does not hold
// (image).
func lyingRefuser() conformance.Factory {
	return conformance.NewFactory("lying", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := correct().Create(ctx, setup)
		if err == nil {
			inst.Source = limitedSource{inner: inst.Source, family: gen.FamilyThinking,
				refuse: func(gen.Family) error { return conformance.Unrepresentable(gen.FamilyImage) }}
		}
		return inst, err
	})
}

// lateLooker is an adapter that, when its completion's context has a
// short deadline, looks at the request only once the deadline passed — as an
// adapter descheduled on a busy machine does — and then, finding the
// context ended, gives up at once as a failed transport (once closed, it
// answers as closed adapters do), before checking the request (SPEC allows it: docs/conformance.md, "a completion whose
// deadline passed before the transport was reached").
type lateLooker struct {
	contract.Adapter
	mu     *sync.Mutex
	extra  *[]contract.Diagnostic
	closed *bool
}

func (a lateLooker) Shutdown(ctx context.Context) error {
	a.mu.Lock()
	*a.closed = true
	a.mu.Unlock()
	return a.Adapter.Shutdown(ctx)
}

func (a lateLooker) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	// Every call's context ends at the call bound; a short deadline is
	// the completion's own.
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < time.Second {
		<-ctx.Done()
	}
	a.mu.Lock()
	closed := *a.closed
	a.mu.Unlock()
	if ctx.Err() == nil || closed {
		return a.Adapter.Complete(ctx, req)
	}
	a.mu.Lock()
	*a.extra = append(*a.extra, contract.Diagnostic{Code: contract.DiagnosticCompletionTransportFailed, Severity: contract.SeverityWarning, Message: "gave up: the context ended"})
	a.mu.Unlock()
	return contract.CompletionResult{Status: contract.StatusFallback, Code: contract.FallbackTransportFailed, Retryable: true, Reason: "the call's context ended"}
}

func (a lateLooker) Diagnostics() []contract.Diagnostic {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append(a.Adapter.Diagnostics(), *a.extra...)
}

// The model judges a completion's timing latitude by the state of its
// context when it returned, never by how fast the machine is: an adapter
// that looked only after a deadline passed may give up as a failed
// transport, whatever the request held.
func TestModelGrantsTimingLatitudeByTheContextsState(t *testing.T) {
	f := conformance.NewFactory("late-looker", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := correct().Create(ctx, setup)
		if err == nil {
			inst.Adapter = lateLooker{inst.Adapter, new(sync.Mutex), new([]contract.Diagnostic), new(bool)}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckModel)
	for seed := uint64(1); seed <= longSeeds(1, 3); seed++ {
		r := c.Run(ctx, f, conformance.WithModelSteps(1500), conformance.WithSeed(seed))
		if r.Status != conformance.StatusPass {
			t.Fatalf("seed %d: %s %+v", seed, r.Status, r.Failure)
		}
	}
}

// clippedOutput cuts every completed output over 1 MiB to 1 MiB of
// valid JSON, as an adapter with a fixed read buffer might.
type clippedOutput struct{ contract.Adapter }

func (a clippedOutput) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := a.Adapter.Complete(ctx, req)
	if len(r.Output) > 1<<20 {
		r.Output = json.RawMessage(`{"content":"clipped"}`)
	}
	return r
}

// The model's transport answers outputs of every shape — empty, larger
// than 1 MiB, nested 128 deep — and each must come back unchanged.
func TestModelCatchesAnOutputClippedAt1MiB(t *testing.T) {
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return clippedOutput{a} }, new(int))
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, f, conformance.WithModelSteps(2000), conformance.WithoutShrinking(), conformance.WithSeed(2))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "passes the transport's output back unchanged") {
		t.Fatalf("%s %+v", r.Status, r.Failure)
	}
}

// ninetyNine is the reference adapter listing one diagnostic too few once
// its list is full: a bound off by one.
type ninetyNine struct{ contract.Adapter }

func (a ninetyNine) Diagnostics() []contract.Diagnostic {
	ds := a.Adapter.Diagnostics()
	if len(ds) >= 100 {
		ds = ds[1:]
	}
	return ds
}

// Every run crosses the diagnostics bound (the first sequence opens with
// more than 100 recorded diagnostics), so a bound off by one fails every
// run, whatever its seed and however few its steps.
func TestModelCrossesTheDiagnosticsBoundEveryRun(t *testing.T) {
	base := reference.NewConformanceFactory()
	f := conformance.NewFactory("ninety-nine", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		if err == nil {
			inst.Adapter = ninetyNine{inst.Adapter}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckModel)
	for seed := uint64(1); seed <= 3; seed++ {
		r := c.Run(ctx, f, conformance.WithModelSteps(40), conformance.WithoutShrinking(), conformance.WithSeed(seed))
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "keeps the newest 100") {
			t.Fatalf("seed %d: %s %+v", seed, r.Status, r.Failure)
		}
	}
}

// clippedTexts cuts every text over 1 MiB in a snapshot, as an adapter
// reading its store with a 1 MiB line buffer might.
type clippedTexts struct{ contract.Adapter }

func (a clippedTexts) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := a.Adapter.SnapshotHistory(ctx)
	for i := range s.Messages {
		for j, b := range s.Messages[i].Blocks {
			if t, ok := b.(*contract.TextBlock); ok && len(t.Text) > 1<<20 {
				s.Messages[i].Blocks[j] = &contract.TextBlock{Text: t.Text[:1<<20]}
			}
		}
	}
	return s, err
}

// Every run crosses the size bounds once (a text over 1 MiB, JSON nested
// 128 deep), however few its steps.
func TestModelCrossesTheSizeBoundsEveryRun(t *testing.T) {
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return clippedTexts{a} }, new(int))
	c, _ := conformance.CheckByID(conformance.CheckModel)
	for seed := uint64(1); seed <= 3; seed++ {
		r := c.Run(ctx, f, conformance.WithModelSteps(40), conformance.WithoutShrinking(), conformance.WithSeed(seed))
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "the snapshot holds the canonical messages") {
			t.Fatalf("seed %d: %s %+v", seed, r.Status, r.Failure)
		}
	}
}

// hidesEmbeddings declares embeddings unsupported while it exposes the
// embedding port its factory configured.
type hidesEmbeddings struct{ contract.Adapter }

func (a hidesEmbeddings) CapabilityDeclarations() []contract.CapabilityDeclaration {
	ds := a.Adapter.CapabilityDeclarations()
	for i, d := range ds {
		if d.ID == contract.CapabilityEmbeddings {
			ds[i] = contract.CapabilityDeclaration{ID: d.ID, Reason: reference.ReasonNoEmbeddingPort}
		}
	}
	return ds
}

func (a hidesEmbeddings) EmbeddingPort() contract.EmbeddingPort {
	return a.Adapter.(contract.EmbeddingPortProvider).EmbeddingPort()
}

// The reference adapter declares embeddings exactly when its port is
// configured (§12): one that hides a configured port fails the model.
func TestModelHoldsTheReferenceToItsEmbeddingDeclaration(t *testing.T) {
	base := reference.NewConformanceFactory(reference.WithEmbeddingPort(reference.DigestEmbeddingPort()))
	f := conformance.NewFactory("hides-embeddings", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		if err == nil {
			inst.Adapter = hidesEmbeddings{inst.Adapter}
		}
		return inst, err
	})
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, f, conformance.WithoutShrinking(), conformance.WithSeed(1))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "declares embeddings supported exactly when") {
		t.Fatalf("%s %+v", r.Status, r.Failure)
	}
	if r := c.Run(ctx, base, conformance.WithSeed(1)); r.Status != conformance.StatusPass {
		t.Fatalf("with its port: %s %+v", r.Status, r.Failure)
	}
}

// A failing model sequence is shown shrunk, to the same operations on
// every run (the shrink's budget counts work, not time), and
// WithoutShrinking shows it as it failed.
func TestModelShrinksTheFailingSequenceTheSameWayEveryRun(t *testing.T) {
	c, _ := conformance.CheckByID(conformance.CheckModel)
	lying := lyingRefuser()
	opts := []conformance.Option{conformance.WithSeed(5), conformance.WithModelSteps(200)}
	first, again := c.Run(ctx, lying, opts...), c.Run(ctx, lying, opts...)
	unshrunk := c.Run(ctx, lying, append(opts, conformance.WithoutShrinking())...)
	if first.Status != conformance.StatusFail || unshrunk.Status != conformance.StatusFail {
		t.Fatalf("%s, without shrinking %s: want both failed", first.Status, unshrunk.Status)
	}
	var from, to int
	i := strings.Index(first.Failure.Actual, ", shrunk from ")
	if i < 0 {
		t.Fatalf("the failure is not shrunk: %s", first.Failure.Actual)
	}
	if _, err := fmt.Sscanf(first.Failure.Actual[i:], ", shrunk from %d to %d operations", &from, &to); err != nil || to >= from {
		t.Fatalf("shrunk from %d to %d operations (%v): %s", from, to, err, first.Failure.Actual)
	}
	if again.Failure.Actual != first.Failure.Actual {
		t.Fatalf("two runs shrink differently:\n%s\n%s", first.Failure.Actual, again.Failure.Actual)
	}
	if strings.Contains(unshrunk.Failure.Actual, "shrunk") {
		t.Fatalf("WithoutShrinking shrinks: %s", unshrunk.Failure.Actual)
	}
}
