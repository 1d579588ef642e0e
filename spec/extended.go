package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// Sizes of the extended checks.
const (
	// failingCompletions is how many failing completions the
	// bounded-diagnostics check makes before measuring.
	failingCompletions = 10000
	// concurrentWorkers and concurrentRounds shape the concurrency check.
	concurrentWorkers = 8
	concurrentRounds  = 25
)

func describeExtended(cfg *config) {
	extended := func(text, label string, check func(ctx context.Context, s *conformance.Session), more ...string) {
		labels := append([]string{LabelExtended, label}, more...)
		ginkgo.It(text, ginkgo.Label(labels...), func(ctx ginkgo.SpecContext) {
			check(ctx, start(ctx, cfg, conformance.NewFixture()))
		})
	}
	extended("negotiates exactly as NegotiateCapabilities does with the adapter's declarations, for every request set",
		"negotiation", func(_ context.Context, s *conformance.Session) { checkNegotiation(cfg, s) })
	extended("keeps probes out of its diagnostics after privacy enforcement and fallbacks",
		"diagnostics-privacy", func(ctx context.Context, s *conformance.Session) { checkDiagnosticsPrivate(ctx, cfg, s) })
	extended("refuses every history read and action after shutdown",
		"closed", func(ctx context.Context, s *conformance.Session) { checkClosed(ctx, cfg, s) })
	extended(fmt.Sprintf("keeps its diagnostics bounded over %d failing completions", failingCompletions),
		"bounded-diagnostics", func(ctx context.Context, s *conformance.Session) { checkBounded(ctx, cfg, s) })
	extended(fmt.Sprintf("answers completions and snapshots from %d goroutines consistently", concurrentWorkers),
		"concurrency", func(ctx context.Context, s *conformance.Session) { checkConcurrent(ctx, cfg, s) })
	extended("embeds texts through a declared embedding port",
		"embedding-port", func(ctx context.Context, s *conformance.Session) { checkEmbeddings(ctx, cfg, s) },
		FeatureLabelPrefix+contract.CapabilityEmbeddings)
}

// requestSets returns every subset of the registry, each with every
// required/optional assignment, plus sets that repeat an id with both
// flags and one naming an id outside the registry.
func requestSets() [][]contract.CapabilityRequest {
	ids := contract.CapabilityIDs()
	var sets [][]contract.CapabilityRequest
	for mask := 0; mask < 1<<len(ids); mask++ {
		var subset []contract.CapabilityID
		for i, id := range ids {
			if mask&(1<<i) != 0 {
				subset = append(subset, id)
			}
		}
		for req := 0; req < 1<<len(subset); req++ {
			set := make([]contract.CapabilityRequest, len(subset))
			for i, id := range subset {
				set[i] = contract.CapabilityRequest{ID: id, Required: req&(1<<i) != 0}
			}
			sets = append(sets, set)
		}
		dup := make([]contract.CapabilityRequest, 0, 2*len(subset))
		for _, id := range subset {
			dup = append(dup, contract.CapabilityRequest{ID: id}, contract.CapabilityRequest{ID: id, Required: true})
		}
		sets = append(sets, dup)
	}
	return append(sets, []contract.CapabilityRequest{{ID: "not-a-registry-capability", Required: true}, {ID: contract.CapabilityEmbeddings}})
}

func describeRequests(set []contract.CapabilityRequest) string {
	if len(set) == 0 {
		return "no requests"
	}
	parts := make([]string, len(set))
	for i, r := range set {
		parts[i] = r.ID
		if r.Required {
			parts[i] += " (required)"
		}
	}
	return strings.Join(parts, ", ")
}

func describeStatus(s contract.CapabilityStatus) string {
	return conformance.Redact(fmt.Sprintf("%s{supported %t, requested %t, required %t, enabled %t, version %q, reason %q}",
		s.ID, s.Supported, s.Requested, s.Required, s.Enabled, s.Version, s.Reason))
}

// negotiationDiff describes the first difference between two negotiations.
func negotiationDiff(want, got contract.Negotiation) string {
	if want.ContractVersion != got.ContractVersion {
		return fmt.Sprintf("contract version %q / %q", want.ContractVersion, conformance.Redact(got.ContractVersion))
	}
	if len(want.Statuses) != len(got.Statuses) {
		return fmt.Sprintf("%d statuses / %d statuses", len(want.Statuses), len(got.Statuses))
	}
	for i := range want.Statuses {
		if want.Statuses[i] != got.Statuses[i] {
			return describeStatus(want.Statuses[i]) + " / " + describeStatus(got.Statuses[i])
		}
	}
	if !slices.Equal(want.Enabled, got.Enabled) {
		return fmt.Sprintf("enabled %q / %q", want.Enabled, redactAll(got.Enabled))
	}
	if !slices.Equal(want.Disabled, got.Disabled) {
		return fmt.Sprintf("disabled %q / %q", want.Disabled, redactAll(got.Disabled))
	}
	if len(want.Diagnostics) != len(got.Diagnostics) {
		return fmt.Sprintf("%d diagnostics %q / %d diagnostics %q", len(want.Diagnostics), diagnosticCodes(want.Diagnostics), len(got.Diagnostics), diagnosticCodes(got.Diagnostics))
	}
	for i := range want.Diagnostics {
		if want.Diagnostics[i] != got.Diagnostics[i] {
			w, g := want.Diagnostics[i], got.Diagnostics[i]
			return conformance.Redact(fmt.Sprintf("diagnostic %d {%s %s %s %q} / {%s %s %s %q}", i, w.Code, w.Severity, w.Capability, w.Message, g.Code, g.Severity, g.Capability, g.Message))
		}
	}
	return ""
}

func redactAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = conformance.Redact(s)
	}
	return out
}

func diagnosticCodes(ds []contract.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = conformance.Redact(d.Code)
	}
	return out
}

func checkNegotiation(cfg *config, s *conformance.Session) {
	ginkgo.GinkgoHelper()
	a := s.Adapter()
	decls := a.CapabilityDeclarations()
	sets := requestSets()
	for _, set := range sets {
		want := contract.NegotiateCapabilities(decls, set)
		got := a.NegotiateCapabilities(set)
		if d := negotiationDiff(want, got); d != "" {
			fail(cfg, "NegotiateCapabilities must apply the contract's negotiation to the adapter's own declarations",
				fmt.Sprintf("what contract.NegotiateCapabilities returns for the requests [%s]", describeRequests(set)),
				"a different negotiation; first difference (expected / actual): "+d)
		}
	}
	ginkgo.GinkgoWriter.Printf("negotiation matched for %d request sets\n", len(sets))
}

func checkDiagnosticsPrivate(ctx context.Context, cfg *config, s *conformance.Session) {
	ginkgo.GinkgoHelper()
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	s.RunCase(ctx, conformance.CasePrivacy)
	s.RunCase(ctx, conformance.CaseFallback)
	// A transport failure and a privacy failure on a payload holding the probes.
	tr.FailNext()
	a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: conformance.PrivacyPayload()})
	tr.Disarm()
	_, _ = a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: conformance.HostilePayload()})
	for i, d := range a.Diagnostics() {
		b, err := json.Marshal(d)
		if err != nil || conformance.ContainsProbe(b) {
			fail(cfg, "diagnostics are metadata only: they never hold payload text, prompts or secrets",
				"no probe in any diagnostic", fmt.Sprintf("diagnostic #%d (code %q) holds a probe (not shown)", i, conformance.Redact(d.Code)))
		}
	}
}

func checkClosed(ctx context.Context, cfg *config, s *conformance.Session) {
	ginkgo.GinkgoHelper()
	a, fx := s.Adapter(), s.Fixture()
	if err := a.Shutdown(ctx); err != nil {
		fail(cfg, "Shutdown must succeed", "no error", "error: "+conformance.Redact(err.Error()))
	}
	var open []string
	if _, err := a.SnapshotHistory(ctx); err == nil {
		open = append(open, "SnapshotHistory")
	}
	if _, err := a.RebuildDerivedState(ctx); err == nil {
		open = append(open, "RebuildDerivedState")
	}
	if _, err := a.CurrentModel(ctx); err == nil {
		open = append(open, "CurrentModel")
	}
	if _, err := a.TrustedProjectRoot(ctx); err == nil {
		open = append(open, "TrustedProjectRoot")
	}
	if _, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: conformance.PlainPayload()}); err == nil {
		open = append(open, "EnforcePrivacy")
	}
	if len(open) > 0 {
		fail(cfg, "after shutdown, every method that reads or acts returns an error",
			"errors from SnapshotHistory, RebuildDerivedState, CurrentModel, TrustedProjectRoot and EnforcePrivacy",
			"no error from "+strings.Join(open, ", "))
	}
	// Declarations, negotiation and diagnostics keep working.
	if n := a.NegotiateCapabilities(nil); len(n.Statuses) != len(contract.CapabilityIDs()) {
		fail(cfg, "after shutdown, negotiation keeps working", fmt.Sprintf("%d statuses", len(contract.CapabilityIDs())), fmt.Sprintf("%d statuses", len(n.Statuses)))
	}
}

func checkBounded(ctx context.Context, cfg *config, s *conformance.Session) {
	ginkgo.GinkgoHelper()
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	req := contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: json.RawMessage(`{"messages":[{"role":"user","content":"bounded"}]}`)}
	failN := func(n int) {
		for range n {
			tr.FailNext()
			a.Complete(ctx, req)
		}
		tr.Disarm()
	}
	failN(failingCompletions)
	n1 := len(a.Diagnostics())
	if n1 > cfg.diagnosticsLimit {
		fail(cfg, "diagnostics are a bounded list", fmt.Sprintf("at most %d diagnostics after %d failing completions", cfg.diagnosticsLimit, failingCompletions),
			fmt.Sprintf("%d diagnostics", n1))
	}
	failN(failingCompletions / 10)
	if n2 := len(a.Diagnostics()); n2 > n1 {
		fail(cfg, "diagnostics are a bounded list: once full, it stops growing",
			fmt.Sprintf("at most %d diagnostics after %d more failing completions", n1, failingCompletions/10), fmt.Sprintf("%d diagnostics", n2))
	}
}

func checkConcurrent(ctx context.Context, cfg *config, s *conformance.Session) {
	ginkgo.GinkgoHelper()
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	base, err := a.SnapshotHistory(ctx)
	if err != nil {
		fail(cfg, "SnapshotHistory must project a valid canonical history", "a snapshot", "error: "+conformance.Redact(err.Error()))
	}
	baseIDs := messageIDs(base.Messages)
	before := tr.Len()
	var (
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
	)
	report := func(p string) {
		mu.Lock()
		if len(problems) < 5 {
			problems = append(problems, p)
		}
		mu.Unlock()
	}
	for w := range concurrentWorkers {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					report(fmt.Sprintf("worker %d: panic: %s", w, conformance.Redact(fmt.Sprint(v))))
				}
			}()
			for range concurrentRounds {
				c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: conformance.PlainPayload()})
				if c.Status != contract.StatusCompleted {
					report(fmt.Sprintf("worker %d: completion %q %q", w, conformance.Redact(string(c.Status)), conformance.Redact(string(c.Code))))
				}
				snap, err := a.SnapshotHistory(ctx)
				switch {
				case err != nil:
					report(fmt.Sprintf("worker %d: SnapshotHistory error: %s", w, conformance.Redact(err.Error())))
				case snap.Revision != base.Revision:
					report(fmt.Sprintf("worker %d: revision %q, want %q", w, conformance.Redact(snap.Revision), conformance.Redact(base.Revision)))
				case !slices.Equal(messageIDs(snap.Messages), baseIDs):
					report(fmt.Sprintf("worker %d: %d message ids %q", w, len(snap.Messages), redactAll(messageIDs(snap.Messages))))
				}
			}
		})
	}
	wg.Wait()
	if n := tr.Len() - before; n != concurrentWorkers*concurrentRounds {
		report(fmt.Sprintf("%d transport requests, want %d", n, concurrentWorkers*concurrentRounds))
	}
	if len(problems) > 0 {
		fail(cfg, "an adapter is safe for concurrent use: concurrent calls answer as serial calls do",
			fmt.Sprintf("every completion completed and every snapshot had revision %q and message ids %q", conformance.Redact(base.Revision), redactAll(baseIDs)),
			strings.Join(problems, "\n          "))
	}
}

func messageIDs(ms []contract.Message) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].ID
	}
	return out
}

// embeddingTexts are what the embeddings check embeds.
var embeddingTexts = []string{"alpha", "a longer second text to embed", "third"}

func checkEmbeddings(ctx context.Context, cfg *config, s *conformance.Session) {
	ginkgo.GinkgoHelper()
	a := s.Adapter()
	if !capabilityDeclared(a, contract.CapabilityEmbeddings) {
		ginkgo.Skip("skipped, not passed: the adapter does not declare the embeddings capability as supported")
	}
	p, ok := a.(contract.EmbeddingPortProvider)
	if !ok {
		fail(cfg, "an adapter declaring embeddings exposes its port (contract.EmbeddingPortProvider)", "an EmbeddingPort method", fmt.Sprintf("%T has none", a))
	}
	port := p.EmbeddingPort()
	if port == nil {
		fail(cfg, "an adapter declaring embeddings exposes its port", "a non-nil embedding port", "nil")
	}
	id := port.Identity()
	if id.Dimensions <= 0 || contract.IsBlank(id.Provider) || contract.IsBlank(id.Model) ||
		(id.Destination != contract.DestinationLocal && id.Destination != contract.DestinationRemote) {
		fail(cfg, "an embedding port names its provider, model, dimensions and destination",
			"non-blank provider and model, dimensions > 0, destination local or remote",
			conformance.Redact(fmt.Sprintf("provider %q, model %q, dimensions %d, destination %q", id.Provider, id.Model, id.Dimensions, id.Destination)))
	}
	vecs, err := port.Embed(ctx, embeddingTexts)
	if err != nil {
		fail(cfg, "an embedding port embeds texts", "vectors", "error: "+conformance.Redact(err.Error()))
	}
	if len(vecs) != len(embeddingTexts) {
		fail(cfg, "an embedding port returns one vector per text", fmt.Sprintf("%d vectors", len(embeddingTexts)), fmt.Sprintf("%d vectors", len(vecs)))
	}
	for i, v := range vecs {
		if len(v) != id.Dimensions {
			fail(cfg, "every vector has the port's declared dimensions", fmt.Sprintf("%d numbers", id.Dimensions), fmt.Sprintf("vector %d has %d numbers", i, len(v)))
		}
		nonZero := false
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				fail(cfg, "every vector holds finite numbers", "finite numbers", fmt.Sprintf("vector %d holds %v", i, x))
			}
			nonZero = nonZero || x != 0
		}
		if !nonZero {
			fail(cfg, "an embedding of a non-empty text is not the zero vector", "a non-zero vector", fmt.Sprintf("vector %d is all zeros", i))
		}
	}
}
