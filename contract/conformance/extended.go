package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ds4context/adapterkit/contract"
)

// Sizes of the extended checks.
const (
	// concurrentWorkers and concurrentRounds shape the concurrency check.
	concurrentWorkers = 8
	concurrentRounds  = 25
)

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
	return Redact(fmt.Sprintf("%s{supported %t, requested %t, required %t, enabled %t, version %q, reason %q}",
		s.ID, s.Supported, s.Requested, s.Required, s.Enabled, s.Version, s.Reason))
}

// negotiationDiff describes the first difference between two negotiations.
func negotiationDiff(want, got contract.Negotiation) string {
	if want.ContractVersion != got.ContractVersion {
		return fmt.Sprintf("contract version %q / %q", want.ContractVersion, Redact(got.ContractVersion))
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
			return Redact(fmt.Sprintf("diagnostic %d {%s %s %s %q} / {%s %s %s %q}", i, w.Code, w.Severity, w.Capability, w.Message, g.Code, g.Severity, g.Capability, g.Message))
		}
	}
	return ""
}

func redactAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Redact(s)
	}
	return out
}

func checkNegotiation(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a := s.Adapter()
	decls := a.CapabilityDeclarations()
	sets := requestSets()
	for _, set := range sets {
		want := contract.NegotiateCapabilities(decls, set)
		got := a.NegotiateCapabilities(set)
		if d := negotiationDiff(want, got); d != "" {
			return broken("NegotiateCapabilities must apply the contract's negotiation to the adapter's own declarations",
				fmt.Sprintf("what contract.NegotiateCapabilities returns for the requests [%s]", describeRequests(set)),
				"a different negotiation; first difference (expected / actual): "+d)
		}
	}
	e.note = fmt.Sprintf("%d request sets", len(sets))
	return nil
}

func checkDiagnosticsPrivate(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	// The cases' own failures are theirs to report; a method that failed
	// is this check's too.
	for _, c := range []func(context.Context, *Session) error{checkPrivacy, checkFallback} {
		var mf *methodFailure
		if err := guard(func() error { return c(ctx, s) }); errors.As(err, &mf) {
			return mf
		}
	}
	// A transport failure and a privacy failure on a payload holding the probes.
	tr.FailNext()
	a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PrivacyPayload()})
	tr.Disarm()
	_, _ = a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: HostilePayload()})
	ds := a.Diagnostics()
	if len(ds) == 0 {
		// Nothing was looked at: the check does not pass on silence.
		return broken("a transport failure records completion-transport-failed (SPEC §9), so diagnostics can be read for probes",
			"at least one diagnostic after failing completions", "no diagnostic")
	}
	for i, d := range ds {
		b, err := json.Marshal(d)
		if err != nil || ContainsProbe(b) {
			return broken("diagnostics are metadata only: they never hold payload text, prompts or secrets",
				"no probe in any diagnostic", fmt.Sprintf("diagnostic #%d (code %q) holds a probe (not shown)", i, Redact(d.Code)))
		}
	}
	return nil
}

func checkClosed(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	if err := a.Shutdown(ctx); err != nil {
		return broken("Shutdown must succeed", "no error", "error: "+Redact(err.Error()))
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
	if _, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: PlainPayload()}); err == nil {
		open = append(open, "EnforcePrivacy")
	}
	if len(open) > 0 {
		return broken("after shutdown, every method that reads or acts returns an error",
			"errors from SnapshotHistory, RebuildDerivedState, CurrentModel, TrustedProjectRoot and EnforcePrivacy",
			"no error from "+strings.Join(open, ", "))
	}
	// Declarations, negotiation and diagnostics keep working.
	if n := a.NegotiateCapabilities(nil); len(n.Statuses) != len(contract.CapabilityIDs()) {
		return broken("after shutdown, negotiation keeps working", fmt.Sprintf("%d statuses", len(contract.CapabilityIDs())), fmt.Sprintf("%d statuses", len(n.Statuses)))
	}
	return nil
}

func checkConcurrent(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	base, err := a.SnapshotHistory(ctx)
	if err != nil {
		return broken("SnapshotHistory must project a valid canonical history", "a snapshot", "error: "+Redact(err.Error()))
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
	// Every worker sends a payload of its own in every round, so the
	// transport must receive exactly the payloads sent.
	sent := make([][]any, concurrentWorkers)
	for w := range sent {
		sent[w] = make([]any, concurrentRounds)
		for r := range sent[w] {
			sent[w][r], _ = tokenPayload(fmt.Sprintf("concurrency-w%d-r%d", w, r))
		}
	}
	for w := range concurrentWorkers {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					report(fmt.Sprintf("worker %d: %s", w, recovered(v, "panic: ")))
				}
			}()
			for r := range concurrentRounds {
				c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: sent[w][r]})
				if c.Status != contract.StatusCompleted {
					report(fmt.Sprintf("worker %d: completion %q %q", w, Redact(string(c.Status)), Redact(string(c.Code))))
				}
				snap, err := a.SnapshotHistory(ctx)
				switch {
				case err != nil:
					report(fmt.Sprintf("worker %d: SnapshotHistory error: %s", w, Redact(err.Error())))
				case snap.Revision != base.Revision:
					report(fmt.Sprintf("worker %d: revision %q, want %q", w, Redact(snap.Revision), Redact(base.Revision)))
				case !slices.Equal(messageIDs(snap.Messages), baseIDs):
					report(fmt.Sprintf("worker %d: %d message ids %q", w, len(snap.Messages), redactAll(messageIDs(snap.Messages))))
				}
			}
		})
	}
	wg.Wait()
	if n := tr.Len() - before; n != concurrentWorkers*concurrentRounds {
		report(fmt.Sprintf("%d transport requests, want %d", n, concurrentWorkers*concurrentRounds))
	} else if missing, extra := payloadMultisetDiff(slices.Concat(sent...), tr.Requests()[before:]); missing > 0 || extra > 0 {
		report(fmt.Sprintf("%d transported payloads match no sent one (each sent payload matches once), and %d sent payloads never reached the transport (not shown)", extra, missing))
	}
	if len(problems) > 0 {
		return broken("an adapter is safe for concurrent use: concurrent calls answer as serial calls do, and the transport receives each request's own payload",
			fmt.Sprintf("every completion completed, the transport received exactly the %d distinct payloads sent, and every snapshot had revision %q and message ids %q",
				concurrentWorkers*concurrentRounds, Redact(base.Revision), redactAll(baseIDs)),
			strings.Join(problems, "\n          "))
	}
	return nil
}

// payloadMultisetDiff compares the payloads sent with those the transport
// received, as multisets of JSON values: it returns how many sent payloads
// have no received match and how many received payloads have no sent
// match. A received payload that is not JSON matches nothing.
func payloadMultisetDiff(sent []any, received []contract.TransportRequest) (missing, extra int) {
	count := map[string]int{}
	for _, p := range sent {
		b, err := json.Marshal(p)
		if err != nil {
			missing++
			continue
		}
		count[canonicalJSON(b)]++
	}
	for _, r := range received {
		k := canonicalJSON(r.Payload)
		if k == "" || count[k] == 0 {
			extra++
			continue
		}
		count[k]--
	}
	for _, n := range count {
		missing += n
	}
	return missing, extra
}

// canonicalJSON returns one encoding of the JSON value data holds (object
// members sorted, -0 written as 0, since -0 === 0 in JavaScript), or ""
// when data is not JSON.
func canonicalJSON(data []byte) string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	b, err := json.Marshal(unsignedZeros(v))
	if err != nil {
		return ""
	}
	return string(b)
}

// unsignedZeros returns v, a decoded JSON value, with every -0 made 0.
func unsignedZeros(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return 0.0
		}
	case []any:
		for i := range x {
			x[i] = unsignedZeros(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = unsignedZeros(x[k])
		}
	}
	return v
}

// embeddingTexts are what the embeddings check embeds: a few short texts,
// then a batch of embeddingBatch texts of many lengths and scripts.
var embeddingTexts = []string{"alpha", "a longer second text to embed", "third"}

// embeddingBatch is the size of the second, larger batch.
const embeddingBatch = 128

func embeddingBatchTexts() []string {
	words := []string{"context", "engine", "kontekst", "上下文", "контекст", "🧭", "tool", "result", "history", "é"}
	texts := make([]string, embeddingBatch)
	for i := range texts {
		var b strings.Builder
		for j := 0; j <= i%17; j++ {
			b.WriteString(words[(i+j)%len(words)])
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(i))
		texts[i] = b.String()
	}
	return texts
}

func checkEmbeddings(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a := s.Adapter()
	if !capabilityDeclared(a, contract.CapabilityEmbeddings) {
		return skip("the adapter does not declare the embeddings capability as supported")
	}
	port, ok := s.adapter.embeddingPort()
	if !ok {
		return broken("an adapter declaring embeddings exposes its port (contract.EmbeddingPortProvider)", "an EmbeddingPort method", fmt.Sprintf("%T has none", s.instance.Adapter))
	}
	if port == nil {
		return broken("an adapter declaring embeddings exposes its port", "a non-nil embedding port", "no port: EmbeddingPort returned nil (over the bridge: create declared no embeddingPort)")
	}
	id := port.Identity()
	if id.Dimensions <= 0 || contract.IsBlank(id.Provider) || contract.IsBlank(id.Model) ||
		(id.Destination != contract.DestinationLocal && id.Destination != contract.DestinationRemote) {
		return broken("an embedding port names its provider, model, dimensions and destination",
			"non-blank provider and model, dimensions > 0, destination local or remote",
			Redact(fmt.Sprintf("provider %q, model %q, dimensions %d, destination %q", id.Provider, id.Model, id.Dimensions, id.Destination)))
	}
	for _, texts := range [][]string{embeddingTexts, embeddingBatchTexts()} {
		if err := checkVectors(ctx, port, id.Dimensions, texts); err != nil {
			return err
		}
	}
	return nil
}

// checkVectors embeds texts through port and checks the vectors.
func checkVectors(ctx context.Context, port contract.EmbeddingPort, dims int, texts []string) error {
	vecs, err := port.Embed(ctx, texts)
	if err != nil {
		return broken("an embedding port embeds texts", fmt.Sprintf("vectors for %d texts", len(texts)), "error: "+Redact(err.Error()))
	}
	if len(vecs) != len(texts) {
		return broken("an embedding port returns one vector per text, in order", fmt.Sprintf("%d vectors", len(texts)), fmt.Sprintf("%d vectors", len(vecs)))
	}
	for i, v := range vecs {
		if len(v) != dims {
			return broken("every vector has the port's declared dimensions", fmt.Sprintf("%d numbers", dims), fmt.Sprintf("vector %d of %d has %d numbers", i, len(texts), len(v)))
		}
		nonZero := false
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return broken("every vector holds finite numbers", "finite numbers", fmt.Sprintf("vector %d of %d holds %v", i, len(texts), x))
			}
			nonZero = nonZero || x != 0
		}
		if !nonZero {
			return broken("an embedding of a non-empty text is not the zero vector", "a non-zero vector", fmt.Sprintf("vector %d of %d is all zeros", i, len(texts)))
		}
	}
	return nil
}

func extendedChecks() []Check {
	return []Check{
		{ID: CheckNegotiation, Kind: KindExtended, run: checkNegotiation,
			Summary: "negotiates exactly as NegotiateCapabilities does with the adapter's declarations, for every request set",
			Rule:    "NegotiateCapabilities applies the contract's negotiation to the adapter's own declarations"},
		{ID: CheckDiagnosticsPrivacy, Kind: KindExtended, run: checkDiagnosticsPrivate,
			Summary: "keeps probes out of its diagnostics after privacy enforcement and fallbacks",
			Rule:    "diagnostics are metadata only: never payload text, prompts or secrets"},
		{ID: CheckClosed, Kind: KindExtended, run: checkClosed,
			Summary: "refuses every history read and action after shutdown",
			Rule:    "after shutdown every method that reads or acts errors; declarations, negotiation and diagnostics keep working"},
		{ID: CheckBoundedDiagnostics, Kind: KindExtended, run: checkBounded,
			Summary: "finds where the diagnostics stop growing under failing completions, up to a ceiling far above any sane bound, and reports the bound found",
			Rule:    "diagnostics are a bounded list (SPEC names no size: any bound below the ceiling passes)"},
		{ID: CheckConcurrency, Kind: KindExtended, run: checkConcurrent,
			Summary: fmt.Sprintf("answers completions of distinct payloads and snapshots from %d goroutines consistently; the transport receives exactly the payloads sent", concurrentWorkers),
			Rule:    "an adapter is safe for concurrent use: concurrent calls answer as serial calls do, and each completion sends its own payload"},
		{ID: CheckProjection, Kind: KindExtended, run: checkProjection, seeded: true, split: true,
			Summary: "projects generated canonical histories: same messages in order, valid, with exactly the derived tool atomic groups",
			Rule:    "a snapshot is the faithful projection of whatever valid canonical history the runtime holds"},
		{ID: CheckEmbeddingPort, Kind: KindFeature, Capability: contract.CapabilityEmbeddings, run: checkEmbeddings,
			Summary: fmt.Sprintf("embeds texts through a declared embedding port, in batches of 3 and %d", embeddingBatch),
			Rule:    "an adapter declaring embeddings exposes a port that embeds every text into a finite, non-zero vector of its declared dimensions"},
	}
}
