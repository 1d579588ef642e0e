package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ds4context/adapterkit/contract"
)

// This file runs the model check's mixed bursts: operations of different
// kinds at once — source appends with snapshots and rebuilds, completions
// to local and remote providers of payloads holding local-only text,
// enforcements, negotiations, declarations and diagnostics — and judges
// them by linearizability: every result must be explained by some
// sequential order of the model's operations consistent with when each
// call began and returned.
//
// Only the appends change what the others observe, and they only append:
// every other operation commutes with all but the reads. So a sequential
// order exists exactly when every read returned the history before the
// burst followed by a prefix of the appends in the order the source holds
// them (read once the burst is over), holding every append that returned
// before the read began and none that began after it returned; revisions
// name one content each; and every other call answered as it would alone.
// That check is exact, and linear in the burst's size, where a general
// checker (porcupine's) searches the orders.

// mixedKinds are the operations a mixed burst draws, appends and
// completions more often.
var mixedKinds = []opKind{opAppend, opAppend, opAppend, opSnapshot, opSnapshot, opRebuild, opComplete, opComplete, opComplete,
	opEnforce, opNegotiate, opDeclarations, opDiagnostics}

// mixedItem is one call of a mixed burst and what it answered.
type mixedItem struct {
	kind       opKind
	start, end int64 // the burst's clock when the call began and returned
	msg        contract.Message
	provider   string
	payload    drawnPayload
	want       contract.PrivacyResult
	reqs       []contract.CapabilityRequest
	snap       contract.HistorySnapshot
	res        contract.CompletionResult
	pr         contract.PrivacyResult
	neg        contract.Negotiation
	decls      []contract.CapabilityDeclaration
	refused    bool
	err        error
}

// mixedLocalOnly is the local-only text a mixed burst's payloads hold: no
// request to a remote destination may carry it.
const mixedLocalOnly = "local only mixed-burst text"

// mixed runs a mixed burst on an open instance with a whole history.
func (r *modelRun) mixed(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	if m.closed || m.corrupt || m.damage != nil {
		return r.skip("bursts run on an open instance with a valid history")
	}
	items, err := r.drawMixed(in, op, rnd)
	if err != nil {
		return diagnosticsRule{}, "", err
	}
	in.runMixed(r.ctx, items)
	reqs, _ := in.tr.take()
	if in.kv != nil {
		for i := range items {
			if items[i].kind == opComplete {
				in.kv.slack++ // the payloads hold no local KV prompt
			}
		}
		if err := in.kv.quiet("a completion whose payload holds no local KV prompt does not reach the local KV port (§11: prepare finds none)", fmt.Sprintf("mixed burst of %d", len(items))); err != nil {
			return diagnosticsRule{}, "", err
		}
	}
	if err := in.compareMixedCalls(items, reqs); err != nil {
		return diagnosticsRule{}, "", err
	}
	if err := r.linearize(in, items); err != nil {
		return diagnosticsRule{}, "", err
	}
	// latitude: the reference adapter records derived-state-rebuilt for
	// each rebuild (§12), in whatever order they finished; the others
	// record nothing SPEC names.
	for i := range items {
		if items[i].kind == opRebuild {
			m.record("derived-state-rebuilt", contract.SeverityInfo)
		}
	}
	return diagnosticsRule{}, fmt.Sprintf("%d calls of %s at once", len(items), describeKinds(items)), nil
}

// drawMixed draws a mixed burst of 4 to 12 calls.
func (r *modelRun) drawMixed(in *modelInst, op modelOp, rnd *rand.Rand) ([]mixedItem, error) {
	m := in.m
	fx := m.fixture
	local := "ollama"
	if cfg := in.s.instance.PrivacyConfig; cfg != nil && len(cfg.LocalProviders) > 0 {
		local = cfg.LocalProviders[0]
	}
	items := make([]mixedItem, 4+rnd.IntN(9))
	for i := range items {
		it := &items[i]
		it.kind = mixedKinds[rnd.IntN(len(mixedKinds))]
		if in.src == nil && it.kind == opAppend {
			it.kind = opSnapshot
		}
		switch it.kind {
		case opAppend:
			entry := "mixed-" + strconv.Itoa(op.n) + "-" + strconv.Itoa(i)
			rt := fx.RuntimeID
			it.msg = contract.Message{ID: fx.SessionID + ":" + entry, SourceEntryID: entry, Role: contract.RoleUser,
				Blocks:     []contract.Block{&contract.TextBlock{Text: "appended during a burst, item " + strconv.Itoa(i)}},
				Provenance: contract.Provenance{Source: contract.SourceRuntimeSession, SessionID: fx.SessionID, EntryID: entry, RuntimeID: &rt}}
		case opComplete, opEnforce:
			it.provider = fx.Model.Provider
			if rnd.IntN(2) == 0 {
				it.provider = local
			}
			raw, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user",
				"content": fmt.Sprintf("burst %d item %d [ds4:local-only]%s[/ds4:local-only] and a public part", op.n, i, mixedLocalOnly)}}})
			it.payload = drawnPayload{raw: raw}
			w, err := r.predictPrivacy(in, it.provider, it.payload)
			if err != nil {
				return nil, failed("EnforcePrivacy must sanitise an inspectable payload", err)
			}
			it.want = w
		case opNegotiate:
			it.reqs = drawRequests(rnd)
		}
	}
	return items, nil
}

// runMixed runs the burst's calls at once, each timed on one clock.
func (in *modelInst) runMixed(ctx context.Context, items []mixedItem) {
	fx := in.m.fixture
	in.tr.script(answerObject, nil)
	var clock atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range items {
		it := &items[i]
		wg.Go(func() {
			<-start
			it.start = clock.Add(1)
			defer func() { it.end = clock.Add(1) }()
			it.err = guard(func() error {
				var err error
				switch it.kind {
				case opAppend:
					if err = in.src.Append(ctx, it.msg); err != nil {
						if _, ok := refusalOf(err); ok {
							it.refused, err = true, nil
						}
					}
				case opSnapshot:
					it.snap, err = in.a.SnapshotHistory(ctx)
				case opRebuild:
					it.snap, err = in.a.RebuildDerivedState(ctx)
				case opComplete:
					it.res = in.a.Complete(ctx, contract.CompletionRequest{Provider: it.provider, Model: fx.Model.ID, Payload: it.payload.value()})
				case opEnforce:
					it.pr, err = in.a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: it.provider, Payload: it.payload.value()})
				case opNegotiate:
					it.neg = in.a.NegotiateCapabilities(slices.Clone(it.reqs))
				case opDeclarations:
					it.decls = in.a.CapabilityDeclarations()
				case opDiagnostics:
					_ = in.a.Diagnostics()
				}
				return err
			})
		})
	}
	close(start)
	wg.Wait()
}

// compareMixedCalls checks every call but the reads answered as it would
// alone, and no request to a remote destination carried local-only text.
func (in *modelInst) compareMixedCalls(items []mixedItem, reqs []contract.TransportRequest) error {
	m := in.m
	const rule = "operations of different kinds at once answer as they would one at a time (linearizability)"
	var sent []any
	for i := range items {
		it := &items[i]
		where := fmt.Sprintf("mixed burst of %d, item #%d (%s)", len(items), i, opNames[it.kind])
		if it.err != nil {
			return withNote(failed(rule, it.err), where)
		}
		switch it.kind {
		case opComplete:
			sent = append(sent, json.RawMessage(it.want.Payload))
			if it.res.Status != contract.StatusCompleted || !sameJSON(it.res.Output, outputFor(answerObject, it.want.Payload)) || it.res.Privacy != it.want.Summary() {
				return broken(rule, "completed with its own output and privacy summary", where+": "+describeModelResult(it.res))
			}
		case opEnforce:
			if d := diffPrivacy(it.want, it.pr); d != "" {
				return broken(rule, "the engine's result", where+": "+d)
			}
		case opNegotiate:
			if d := negotiationDiff(contract.NegotiateCapabilities(m.decls, it.reqs), it.neg); d != "" {
				return broken(rule, "the negotiation of "+describeRequests(it.reqs), where+": "+d)
			}
		case opDeclarations:
			if !reflect.DeepEqual(nonNilDecls(it.decls), nonNilDecls(m.decls)) {
				return broken(rule, fmt.Sprintf("the %d declarations of the first call", len(m.decls)), where+fmt.Sprintf(": %d declarations", len(it.decls)))
			}
		}
	}
	for i, q := range reqs {
		if q.Destination != contract.DestinationLocal && ContainsAny(q.Payload, mixedLocalOnly) {
			return broken("local-only content never reaches a remote provider, also while completions to local providers run at once (§8)",
				"no local-only text in a remote request", fmt.Sprintf("mixed burst of %d: request #%d (destination %s) holds some", len(items), i, q.Destination))
		}
	}
	if missing, extra := payloadMultisetDiff(sent, reqs); missing > 0 || extra > 0 {
		return broken("an adapter is safe for concurrent use: the transport receives each completion's own sanitised payload, once", fmt.Sprintf("%d requests, one per completion", len(sent)),
			fmt.Sprintf("mixed burst of %d: %d requests, %d unmatched, %d payloads missing", len(items), len(reqs), extra, missing))
	}
	return nil
}

// linearize reads the history once the burst is over and checks every
// read of the burst returned the history before it followed by a prefix
// of the appends in the order the source holds them, consistent with when
// each call began and returned; the model then holds that history.
func (r *modelRun) linearize(in *modelInst, items []mixedItem) error {
	m := in.m
	const rule = "a read among appends returns the history as it was at one moment: the history before them and a prefix of the appends, holding every append that finished before the read began and none that began after it returned (linearizability)"
	appended := map[string]*mixedItem{}
	for i := range items {
		if it := &items[i]; it.kind == opAppend && !it.refused {
			appended[it.msg.ID] = it
		}
	}
	final, err := in.a.SnapshotHistory(r.ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history", err)
	}
	base := len(m.msgs)
	want := slices.Clone(m.msgs)
	if len(final.Messages) == base+len(appended) {
		for _, msg := range final.Messages[base:] {
			if it, ok := appended[msg.ID]; ok {
				want = append(want, it.msg)
			}
		}
	}
	if len(want) != base+len(appended) {
		want = append(want, make([]contract.Message, base+len(appended)-len(want))...)
	}
	fx := m.fixture
	if err := checkSnapshot(&final, fx.RuntimeID, fx.SessionID, m.root, in.s.asHeld(want, final.Messages, 0)); err != nil {
		return withNote(err, fmt.Sprintf("the history after a mixed burst of %d with %d appends", len(items), len(appended)))
	}
	order := final.Messages[base:]
	for i := range items {
		it := &items[i]
		if it.kind != opSnapshot && it.kind != opRebuild {
			continue
		}
		j := len(it.snap.Messages) - base
		where := fmt.Sprintf("mixed burst of %d, item #%d (%s) of %d messages", len(items), i, opNames[it.kind], len(it.snap.Messages))
		if j < 0 || j > len(order) {
			return broken(rule, fmt.Sprintf("%d to %d messages", base, base+len(order)), where)
		}
		if err := checkSnapshot(&it.snap, fx.RuntimeID, fx.SessionID, m.root, in.s.asHeld(want[:base+j], it.snap.Messages, 0)); err != nil {
			return withNote(err, where)
		}
		for k, msg := range order {
			a := appended[msg.ID]
			switch {
			case k >= j && a.end < it.start:
				return broken(rule, "the appends that finished before the read began", fmt.Sprintf("%s: append #%d finished before it began and is not in it", where, k))
			case k < j && a.start > it.end:
				return broken(rule, "no append that began after the read returned", fmt.Sprintf("%s: append #%d began after it returned and is in it", where, k))
			}
		}
		if err := m.checkRevisionOf(opNames[it.kind], it.snap.Revision, want[:base+j]); err != nil {
			return withNote(err, where)
		}
	}
	m.msgs = want
	if len(appended) > 0 {
		m.sourceWritten()
	}
	return m.checkRevision("SnapshotHistory", final.Revision)
}

// describeKinds names the kinds of a burst's calls, each once.
func describeKinds(items []mixedItem) string {
	var names []string
	for _, it := range items {
		if n := opNames[it.kind]; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return fmt.Sprint(names)
}
