package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// modelInst is one instance under the model check: the adapter, its
// source hook, its transport and the model of it.
type modelInst struct {
	s       *Session
	a       *boundedAdapter
	src     *boundedSource
	rewrite func(context.Context, contract.Message) error
	tr      *modelTransport
	m       *model
	port    contract.EmbeddingPort
	// kv is the model of the instance's local KV, for an instance whose
	// factory was given a port and whose adapter then declares
	// local-kv-reuse; nil otherwise.
	kv *kvModel
	// diags is the last diagnostics list read (a copy).
	diags []contract.Diagnostic
	// lastPayload is the raw payload of the last completion, for
	// duplicate requests.
	lastPayload json.RawMessage
	// kept is a snapshot returned earlier and left as returned, and
	// keptCopy a copy of it: later calls must never change it.
	kept, keptCopy *contract.HistorySnapshot
}

// modelRun runs one sequence.
type modelRun struct {
	ctx   context.Context
	e     *env
	insts []*modelInst
	log   []string
	// counts are what the check's note tells of the run.
	counts *modelCounts
	// small keeps payloads small.
	small bool
	// leave are the families no append or rewrite draws: the sequence's,
	// and those a source refused during the run.
	leave []gen.Family
}

// modelLeaks are texts no diagnostic or fallback reason may hold: the
// transport error's, and the secrets and class content of gen.Payload.
var modelLeaks = []string{modelTransportCredential, "provider rejected the request", "abcdefgh12345678", "hunter2hunter2",
	"s3cretvalue", "local only", "sensitive note", "internal note", "MIIB", LocalKVHandleProbe, modelKVPrefixMarker, localKVMessageText}

// leaksAny reports whether s holds one of modelLeaks.
func leaksAny(s string) bool {
	for _, l := range modelLeaks {
		if ContainsAny([]byte(s), l) {
			return true
		}
	}
	return false
}

// newModelInst creates an instance holding fx (or, when the factory
// refuses a generated history, the conformance fixture's history) and the
// model of it; with kv, its factory is given a recording local KV port.
func (r *modelRun) newModelInst(fx Fixture, kv bool) (*modelInst, error) {
	tr := &modelTransport{}
	var port *RecordingKVPort
	var kvPort localkv.RuntimePort
	if kv {
		port = NewRecordingKVPort()
		kvPort = port
	}
	s, err := start(r.ctx, r.e.factory, Setup{Fixture: fx, Transport: tr, LocalKVPort: kvPort}, r.e.opts)
	if ref, ok := refusalOf(err); ok {
		// A refusal keeps the rules one history can show; the sequence
		// then runs on the conformance fixture, which every runtime holds.
		if err := r.refuse(ref, fx.Messages); err != nil {
			return nil, err
		}
		fx.Messages = NewFixture().Messages
		s, err = start(r.ctx, r.e.factory, Setup{Fixture: fx, Transport: tr, LocalKVPort: kvPort}, r.e.opts)
	}
	s, err = r.e.track(s, err)
	if err != nil {
		return nil, err
	}
	if err := s.judgeHeld(); err != nil {
		return nil, err
	}
	// The model starts from the history as the instance holds it
	// (Instance.Held), which the rules of holding differences judged.
	in := &modelInst{s: s, a: s.adapter, tr: tr, m: &model{fixture: fx, root: s.ExpectedProjectRoot(),
		msgs: s.Fixture().Messages, revisions: map[string]string{}}}
	if s.instance.Source != nil {
		in.src = &boundedSource{inner: s.instance.Source, bound: s.adapter.bound}
		in.rewrite = in.src.rewriter()
	}
	if cfg := s.instance.PrivacyConfig; cfg != nil {
		if in.m.engine, err = privacy.New(*cfg); err != nil {
			return nil, broken("the privacy configuration a factory declares is valid", "a configuration privacy.New accepts", "error: "+scrub(err.Error()))
		}
	}
	id := in.a.Identity()
	if id.ContractVersion != contract.ContractVersion || id.RuntimeID != fx.RuntimeID || contract.IsBlank(id.AdapterName) || contract.IsBlank(id.AdapterVersion) {
		return nil, broken("an adapter reports the contract version, the runtime id it was given and a non-blank name and version",
			fmt.Sprintf("contract %s, runtime %s", contract.ContractVersion, q(fx.RuntimeID)), fmt.Sprintf("contract %s, runtime %s, name blank %t, version blank %t",
				q(id.ContractVersion), q(id.RuntimeID), contract.IsBlank(id.AdapterName), contract.IsBlank(id.AdapterVersion)))
	}
	in.m.identity = &id
	in.m.reference = id.AdapterName == referenceAdapterName
	in.m.decls = slices.Clone(in.a.CapabilityDeclarations())
	if capabilityDeclared(in.a, contract.CapabilityEmbeddings) {
		p, _ := in.a.embeddingPort()
		if p == nil {
			return nil, broken("an adapter declaring embeddings exposes its port (contract.EmbeddingPortProvider)", "an embedding port", "none")
		}
		in.port = p
	}
	// §12: the reference adapter declares local-kv-reuse supported when a
	// port is configured, and unsupported otherwise.
	if declared := capabilityDeclared(in.a, contract.CapabilityLocalKVReuse); in.m.reference && declared != (port != nil) {
		return nil, broken("the reference adapter declares local-kv-reuse supported exactly when a local KV port is configured (§12)",
			fmt.Sprintf("supported %t (a port given: %t)", port != nil, port != nil), fmt.Sprintf("supported %t", declared))
	}
	// An adapter that does not declare local-kv-reuse ignores the port
	// (Setup.LocalKVPort), and the instance runs as one without it.
	if port != nil && capabilityDeclared(in.a, contract.CapabilityLocalKVReuse) {
		in.kv = newKVModel(port)
	}
	in.diags = slices.Clone(in.a.Diagnostics())
	if in.m.reference && len(in.diags) > 0 {
		in.m.diagnostics = slices.Clone(in.diags)
	}
	return in, nil
}

// modelCounts are what a run of the model check counts for its note: the
// operations that could not run, by reason, and the outcomes of local KV
// completions.
type modelCounts struct {
	skipped, kv map[string]int
	// refused counts the histories a factory and the appends and rewrites
	// a source refused, by family: limits of the run, which later
	// sequences draw none of.
	refused map[gen.Family]int
	// limits, when set, collects the refusals as limits of the check
	// (nil while shrinking, whose reruns count nothing).
	limits *limitSet
}

func newModelCounts() *modelCounts {
	return &modelCounts{skipped: map[string]int{}, kv: map[string]int{}, refused: map[gen.Family]int{}}
}

// refuse checks a refusal of msgs by the rules one history can show and
// counts it as a limit of the run; later appends and rewrites draw none of
// its family.
func (r *modelRun) refuse(ref Refusal, msgs []contract.Message) error {
	if err := checkRefusal(ref, msgs); err != nil {
		return err
	}
	r.counts.refused[ref.Family]++
	if !slices.Contains(r.leave, ref.Family) {
		r.leave = append(r.leave, ref.Family)
	}
	reason := "refused"
	if ref.Detail != "" {
		reason += ": " + ref.Detail
	}
	r.counts.limits.add(Limit{Family: ref.Family, Count: 1, Reason: reason})
	return nil
}

// errBeforeOps marks a failure of a sequence before its first operation:
// starting its instances. Shrinking the operations cannot change it.
type errBeforeOps struct{ error }

func (e errBeforeOps) Unwrap() error { return e.error }

// skip notes an operation that could not run.
func (r *modelRun) skip(reason string) (diagnosticsRule, string, error) {
	r.counts.skipped[reason]++
	return diagnosticsRule{}, "skipped", errSkipOp
}

// tally counts one local KV outcome.
func (r *modelRun) tally(outcome string) { r.counts.kv[outcome]++ }

// errSkipOp marks an operation that did not run.
var errSkipOp = errors.New("operation skipped")

// runSeq runs seq on fresh instances and closes them.
func runSeq(ctx context.Context, e *env, seq *modelSeq, counts *modelCounts) (log []string, err error) {
	r := &modelRun{ctx: ctx, e: e, counts: counts, small: seq.small, leave: slices.Clone(seq.leave)}
	defer func() {
		for _, in := range r.insts {
			e.forget(in.s)
			if cerr := in.s.Close(ctx); cerr != nil && err == nil {
				err = failed("the instance must shut down and clean up without error", cerr)
			}
			if in.kv != nil && err == nil {
				if n := in.kv.port.Shutdowns(); n != 1 {
					err = broken(ruleKVShutdown, "one port shutdown once the instance is shut down", fmt.Sprintf("%d port shutdowns", n))
				}
			}
		}
		log = r.log
	}()
	for i, fx := range seq.fixtures {
		in, err := r.newModelInst(fx, i < len(seq.kv) && seq.kv[i])
		if err != nil {
			return r.log, errBeforeOps{err}
		}
		r.insts = append(r.insts, in)
	}
	for _, op := range seq.ops {
		if err := guard(func() error { return r.do(op) }); err != nil {
			return r.log, err
		}
	}
	return r.log, nil
}

// do runs one operation and compares everything it observed with the
// model: its own outputs, the diagnostics, the transport, and the other
// instance.
func (r *modelRun) do(op modelOp) error {
	in := r.insts[op.inst]
	rnd := rand.New(rand.NewPCG(uint64(op.seed), 0x6d6f64656c))
	before := in.diags
	rule, desc, err := r.exec(in, op, rnd)
	tag := ""
	if len(r.insts) > 1 {
		tag = fmt.Sprintf("@%d", op.inst)
	}
	r.log = append(r.log, fmt.Sprintf("%s%s(%s)", opNames[op.kind], tag, desc))
	if errors.Is(err, errSkipOp) {
		r.log = r.log[:len(r.log)-1]
		return nil
	}
	if err != nil {
		return err
	}
	if op.kind != opComplete && op.kind != opCancelled && op.kind != opBurst {
		if reqs, _ := in.tr.take(); len(reqs) > 0 {
			return broken("only a completion reaches the transport", "no transport request", fmt.Sprintf("%s: %d transport request(s)", opNames[op.kind], len(reqs)))
		}
		if in.kv != nil {
			if err := in.kv.quiet("only a completion reaches the local KV port", opNames[op.kind]); err != nil {
				return err
			}
		}
	}
	got := in.a.Diagnostics()
	after := slices.Clone(got)
	editDiagnostics(got) // a copy: editing it changes nothing the adapter returns later
	in.diags = after
	for i, d := range after {
		for _, l := range modelLeaks {
			if ContainsAny([]byte(d.Message+d.Code), l) {
				return broken("diagnostics are metadata only: never payload text, secrets, a transport error's text, a prompt prefix or a local KV port error's text", "no such text",
					fmt.Sprintf("%s: diagnostic #%d (%s) holds some", opNames[op.kind], i, q(d.Code)))
			}
		}
		if in.kv != nil && in.kv.holdsKey(d.Message+" "+d.Code) {
			return broken("diagnostics are metadata only: never an eligibility key (§11)", "no key digest",
				fmt.Sprintf("%s: diagnostic #%d (%s) holds one", opNames[op.kind], i, q(d.Code)))
		}
	}
	if err := in.m.checkDiagnostics(opNames[op.kind], rule, before, after); err != nil {
		return err
	}
	for j, other := range r.insts {
		if j == op.inst {
			continue
		}
		if reqs, _ := other.tr.take(); len(reqs) > 0 {
			return broken("instances are independent: nothing one does shows in another", "no request through the other instance's transport",
				fmt.Sprintf("%s on instance %d: %d request(s) through instance %d's transport", opNames[op.kind], op.inst, len(reqs), j))
		}
		if other.kv != nil {
			if err := other.kv.quiet("instances are independent: nothing one does shows in another (no call through the other instance's local KV port)",
				fmt.Sprintf("%s on instance %d", opNames[op.kind], op.inst)); err != nil {
				return err
			}
		}
		if ds := other.a.Diagnostics(); !reflect.DeepEqual(nonNilDiags(ds), nonNilDiags(other.diags)) {
			return broken("instances are independent: nothing one does shows in another", fmt.Sprintf("instance %d's %d diagnostics unchanged", j, len(other.diags)),
				fmt.Sprintf("%s on instance %d: instance %d now has %d diagnostics", opNames[op.kind], op.inst, j, len(ds)))
		}
	}
	return nil
}

// exec runs one operation and checks its outputs; it returns what SPEC
// makes the operation do to the diagnostics and a metadata description.
func (r *modelRun) exec(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	ctx, a, m := r.ctx, in.a, in.m
	switch op.kind {
	case opSnapshot, opRebuild:
		return r.read(in, op.kind == opRebuild, rnd)
	case opAppend:
		if in.src == nil {
			return r.skip(noSource)
		}
		if m.closed || m.corrupt {
			return r.skip("no source writes to a closed or corrupt instance")
		}
		msgs := gen.AppendedMessages(m.fixture.RuntimeID, m.fixture.SessionID, op.n, r.leave...).Example(op.seed)
		bytes := 0
		for k, msg := range msgs {
			if err := in.src.Append(ctx, msg); err != nil {
				ref, ok := refusalOf(err)
				if !ok {
					return diagnosticsRule{}, "", failed("the instance's Source must append a valid message with a new id", err)
				}
				// The runtime cannot hold the message: a limit, if the
				// message holds the family. Nothing more of the exchange
				// is appended (a result without its call breaks a history).
				if err := r.refuse(ref, msgs[k:k+1]); err != nil {
					return diagnosticsRule{}, "", err
				}
				if k > 0 {
					m.sourceWritten()
				}
				return diagnosticsRule{}, fmt.Sprintf("%d messages, %d bytes, then one refused for %s", k, bytes, ref.Family), nil
			}
			b, _ := contract.AppendMessageJSON(nil, &msg)
			bytes += len(b)
			m.msgs = append(m.msgs, msg)
		}
		m.sourceWritten()
		return diagnosticsRule{}, fmt.Sprintf("%d messages, %d bytes", len(msgs), bytes), nil
	case opRewrite:
		if in.src == nil {
			return r.skip(noSource)
		}
		if in.rewrite == nil {
			return r.skip(noRewrite)
		}
		if m.closed || m.corrupt || len(m.msgs) == 0 {
			return r.skip("no source writes to a closed or corrupt instance")
		}
		i := op.seed % len(m.msgs)
		msg := gen.RewrittenMessage(m.msgs[i], r.leave...).Example(op.seed)
		if err := in.rewrite(ctx, msg); err != nil {
			ref, ok := refusalOf(err)
			if !ok {
				return diagnosticsRule{}, "", failed("the instance's SourceRewriter must rewrite a message of the history in place", err)
			}
			// The message as it was stays.
			if err := r.refuse(ref, []contract.Message{msg}); err != nil {
				return diagnosticsRule{}, "", err
			}
			return diagnosticsRule{}, fmt.Sprintf("message #%d of %d, refused for %s", i, len(m.msgs), ref.Family), nil
		}
		m.msgs[i] = msg
		m.sourceWritten()
		return diagnosticsRule{}, fmt.Sprintf("message #%d of %d", i, len(m.msgs)), nil
	case opCorrupt:
		if in.src == nil {
			return r.skip(noSource)
		}
		if m.closed || m.corrupt {
			return r.skip("no source writes to a closed or corrupt instance")
		}
		if err := in.src.Corrupt(ctx); err != nil {
			return diagnosticsRule{}, "", failed("the instance's Source must corrupt the canonical history", err)
		}
		m.corrupt = true
		m.sourceWritten()
		return diagnosticsRule{}, "", nil
	case opEnforce:
		return r.enforce(in, op, rnd)
	case opComplete, opCancelled:
		return r.complete(in, op, rnd)
	case opNegotiate:
		reqs := drawRequests(rnd)
		got := a.NegotiateCapabilities(slices.Clone(reqs))
		want := contract.NegotiateCapabilities(m.decls, reqs)
		if d := negotiationDiff(want, got); d != "" {
			return diagnosticsRule{}, "", broken("NegotiateCapabilities applies the contract's negotiation (§5) to the adapter's own declarations, before and after shutdown",
				"the negotiation of "+describeRequests(reqs), d)
		}
		editNegotiation(&got)
		return diagnosticsRule{none: true}, fmt.Sprintf("%d requests", len(reqs)), nil
	case opDeclarations:
		got := a.CapabilityDeclarations()
		if !reflect.DeepEqual(nonNilDecls(got), nonNilDecls(m.decls)) {
			return diagnosticsRule{}, "", broken("an adapter's capability declarations stay what they were, also after shutdown (§9: declarations keep working)",
				fmt.Sprintf("the %d declarations of the first call", len(m.decls)), fmt.Sprintf("%d declarations, ids %s", len(got), qs(declIDs(got))))
		}
		for i := range got {
			got[i].ID, got[i].Version, got[i].Reason, got[i].Supported = "edited", "edited", "edited", !got[i].Supported
		}
		return diagnosticsRule{}, fmt.Sprintf("%d declarations", len(got)), nil
	case opIdentity:
		if got := a.Identity(); got != *m.identity {
			return diagnosticsRule{}, "", broken("an adapter's identity stays what it was, also after shutdown", "the identity of the first call",
				fmt.Sprintf("runtime %s, name %s, version %s, contract %s", q(got.RuntimeID), q(got.AdapterName), q(got.AdapterVersion), q(got.ContractVersion)))
		}
		return diagnosticsRule{}, "", nil
	case opRoot:
		root, err := a.TrustedProjectRoot(ctx)
		if m.closed {
			if err == nil {
				return diagnosticsRule{}, "", broken("after shutdown, TrustedProjectRoot returns an error (§9)", "an error", "the root")
			}
			return diagnosticsRule{}, "closed", nil
		}
		if err != nil {
			return diagnosticsRule{}, "", failed("TrustedProjectRoot must return the trusted root", err)
		}
		if root != m.root {
			return diagnosticsRule{}, "", broken("TrustedProjectRoot is the canonical project root the factory expects", q(m.root), q(root))
		}
		return diagnosticsRule{}, "", nil
	case opModel:
		got, err := a.CurrentModel(ctx)
		if m.closed {
			if err == nil {
				return diagnosticsRule{}, "", broken("after shutdown, CurrentModel returns an error (§9)", "an error", "a model")
			}
			return diagnosticsRule{}, "closed", nil
		}
		if err != nil {
			return diagnosticsRule{}, "", failed("CurrentModel must return the selected model", err)
		}
		if got == nil || !reflect.DeepEqual(*got, m.fixture.Model) {
			return diagnosticsRule{}, "", broken("CurrentModel returns the model the runtime selected, every member as given (§3), at any point of the instance's life",
				describeModel(m.fixture.Model), describeModelPtr(got))
		}
		editModel(got)
		return diagnosticsRule{}, "", nil
	case opDiagnostics:
		return diagnosticsRule{}, fmt.Sprintf("%d diagnostics", len(in.diags)), nil
	case opEmbed:
		return r.embed(in, op)
	case opLocalKV:
		if in.kv != nil {
			return r.localKV(in)
		}
		d, ok := a.localKVDiagnostics()
		if !ok {
			return r.skip("the adapter keeps no local KV counters")
		}
		if d.Requests != 0 || d.EligibleRequests != 0 || d.Hits != 0 || d.FullReplays != 0 || d.TransportFailures != 0 || d.PrefixTokens != 0 {
			return diagnosticsRule{}, "", broken("local KV counters count local KV requests only: with no port configured, none", "every counter 0",
				fmt.Sprintf("requests %d, eligible %d, hits %d, replays %d", d.Requests, d.EligibleRequests, d.Hits, d.FullReplays))
		}
		return diagnosticsRule{}, "", nil
	case opShutdown:
		return r.shutdown(in, rnd)
	case opBurst:
		return r.burst(in, op, rnd)
	}
	return diagnosticsRule{}, "", fmt.Errorf("unknown operation %d", op.kind)
}

// read is a snapshot or a rebuild.
func (r *modelRun) read(in *modelInst, rebuild bool, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	defer func() {
		if in.kept != nil {
			if d := contentDiff(in.keptCopy, in.kept); d != "" {
				panic(abort{broken("a snapshot returned earlier is the caller's: later calls, failed ones included, never change it", "the earlier snapshot as returned", d)})
			}
		}
	}()
	method, call := "SnapshotHistory", in.a.SnapshotHistory
	if rebuild {
		method, call = "RebuildDerivedState", in.a.RebuildDerivedState
	}
	snap, err := call(r.ctx)
	switch {
	case m.closed:
		if err == nil {
			return diagnosticsRule{}, "", broken("after shutdown, "+method+" returns an error (§4)", "an error", describeHistory(&snap))
		}
		return diagnosticsRule{}, "closed", nil
	case m.corrupt:
		if err == nil {
			return diagnosticsRule{}, "", broken(method+" of a corrupt canonical source fails: it never yields an empty, stale or invented history", "an error", describeHistory(&snap))
		}
		m.record("canonical-history-read-failed", contract.SeverityError)
		return diagnosticsRule{anyError: true}, "corrupt", nil
	}
	if err != nil {
		return diagnosticsRule{}, "", failed(method+" must project a valid canonical history", err)
	}
	fx := m.fixture
	if err := checkSnapshot(&snap, fx.RuntimeID, fx.SessionID, m.root, in.s.asHeld(m.msgs, snap.Messages, 0)); err != nil {
		return diagnosticsRule{}, "", withNote(err, fmt.Sprintf("%s of %d messages", method, len(m.msgs)))
	}
	if err := m.checkRevision(method, snap.Revision); err != nil {
		return diagnosticsRule{}, "", err
	}
	if rebuild {
		// §12: the reference adapter records derived-state-rebuilt.
		// latitude: other adapters may record what they like here.
		m.record("derived-state-rebuilt", contract.SeverityInfo)
	}
	if rnd.IntN(2) == 0 {
		// Kept as returned, to see later calls leave it alone.
		kept := snap
		keptCopy := contract.CloneSnapshot(&snap)
		in.kept, in.keptCopy = &kept, &keptCopy
	} else {
		editSnapshot(&snap)
	}
	return diagnosticsRule{}, fmt.Sprintf("%d messages", len(m.msgs)), nil
}

// drawnPayload is a payload an operation sends: raw JSON, the same
// decoded into Go values, or a value that cannot be inspected.
type drawnPayload struct {
	raw     json.RawMessage
	decoded bool
	hostile bool
}

// value returns a fresh copy of the payload as the call gets it.
func (p drawnPayload) value() any {
	switch {
	case p.hostile:
		// Partly inspectable: content with secrets, and one member that
		// refuses inspection.
		var v any
		_ = json.Unmarshal(p.raw, &v)
		return map[string]any{"messages": v, "attachment": HostilePayload()}
	case p.decoded:
		var v any
		_ = json.Unmarshal(p.raw, &v)
		return v
	}
	return json.RawMessage(slices.Clone(p.raw))
}

// unchanged reports whether v, a value p.value() returned and a call was
// given, is still what it was (hostile values are not compared).
func (p drawnPayload) unchanged(v any) bool {
	switch {
	case p.hostile:
		return true
	case p.decoded:
		b, err := json.Marshal(v)
		return err == nil && sameJSON(b, p.raw)
	}
	raw, ok := v.(json.RawMessage)
	return ok && string(raw) == string(p.raw)
}

func (p drawnPayload) String() string {
	switch {
	case p.hostile:
		return "uninspectable payload"
	case p.decoded:
		return fmt.Sprintf("decoded payload %d bytes", len(p.raw))
	}
	return fmt.Sprintf("payload %d bytes", len(p.raw))
}

// Sizes of drawn payloads: most up to modelSmallPayload, one in
// modelLargeOdds up to modelMaxPayload (sizes spread over the orders of
// magnitude in between).
const (
	modelSmallPayload = 16 << 10
	modelMaxPayload   = 1 << 20
	modelLargeOdds    = 16
)

func (r *modelRun) drawPayload(rnd *rand.Rand, seed int) drawnPayload {
	if rnd.IntN(10) == 0 {
		return drawnPayload{raw: gen.Payload(1 << 10).Example(seed), hostile: true}
	}
	most := modelSmallPayload
	if r.small {
		most = 1 << 10
	} else if rnd.IntN(modelLargeOdds) == 0 {
		most = modelMaxPayload
	}
	return drawnPayload{raw: gen.Payload(most).Example(seed), decoded: rnd.IntN(3) == 0}
}

// blankNames are provider and model names JavaScript's trim makes blank.
var blankNames = []string{"", " ", "\t\n", "\u00a0", "\ufeff", "\u2028", "\u3000 "}

// drawProvider draws the provider of a request: mostly the fixture
// model's, or a realistic one or a look-alike, or one the declared privacy
// configuration names (its local providers above all), now and then a
// blank one.
func drawProvider(rnd *rand.Rand, seed int, fx Fixture, cfg *privacy.Config) string {
	switch rnd.IntN(12) {
	case 0:
		return blankNames[rnd.IntN(len(blankNames))]
	case 1, 2, 3:
		return gen.Provider().Example(seed)
	case 4, 5:
		if cfg != nil {
			named := slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders)))
			if len(named) > 0 {
				p := named[rnd.IntN(len(named))]
				if rnd.IntN(2) == 0 {
					p = " " + strings.ToUpper(p)
				}
				return p
			}
		}
	}
	return fx.Model.Provider
}

func (r *modelRun) enforce(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	provider := drawProvider(rnd, op.seed, m.fixture, in.s.instance.PrivacyConfig)
	p := r.drawPayload(rnd, op.seed)
	given := p.value()
	res, err := in.a.EnforcePrivacy(r.ctx, contract.PrivacyRequest{Provider: provider, Payload: given})
	desc := fmt.Sprintf("%s, provider of %d bytes", p, len(provider))
	if !p.unchanged(given) {
		return diagnosticsRule{}, "", broken("enforcement never modifies the caller's payload", "the payload as the caller built it", desc+": changed")
	}
	if err != nil && leaksAny(err.Error()) {
		return diagnosticsRule{}, "", broken("an enforcement error is metadata only: it never quotes the payload it refused", "an error without payload text", desc+": the error quotes some")
	}
	switch {
	case m.closed, contract.IsBlank(provider):
		if err == nil {
			return diagnosticsRule{}, "", broken("EnforcePrivacy of a closed adapter or for a blank provider returns an error (§9)", "an error", "a result")
		}
		// §9: "returns an error without recording a diagnostic".
		return diagnosticsRule{none: true}, desc + ", refused", nil
	}
	want, werr := r.predictPrivacy(in, provider, p)
	if werr != nil {
		if err == nil {
			return diagnosticsRule{}, "", broken("enforcement fails closed: a payload that cannot be fully inspected is an error (§8)", "an error", "a result")
		}
		m.record(contract.DiagnosticPrivacyEnforcementFailed, contract.SeverityError)
		return diagnosticsRule{records: []contract.Diagnostic{{Code: contract.DiagnosticPrivacyEnforcementFailed, Severity: contract.SeverityError}}}, desc + ", failed closed", nil
	}
	if err != nil {
		return diagnosticsRule{}, "", failed("EnforcePrivacy must sanitise an inspectable payload", err)
	}
	if d := diffPrivacy(want, res); d != "" || res.Provider != provider {
		if d == "" {
			d = "the provider is not the one given"
		}
		return diagnosticsRule{}, "", broken("EnforcePrivacy equals the privacy engine under the declared configuration (§8): provider as given, destination, changed, counts and payload",
			"the engine's result", desc+": "+d)
	}
	for i := range res.Payload {
		res.Payload[i] = ' '
	}
	return diagnosticsRule{}, desc, nil
}

// predictPrivacy is what enforcement of p for provider must return: the
// engine's result under the declared configuration, or, when the factory
// declared none, the adapter's own enforcement (latitude: SPEC §8 gives
// the reference engine; without the configuration the model can only
// demand that Complete sends what EnforcePrivacy returns).
func (r *modelRun) predictPrivacy(in *modelInst, provider string, p drawnPayload) (contract.PrivacyResult, error) {
	if in.m.engine != nil {
		res, err := in.m.engine.SanitizePayload(provider, p.value())
		if err != nil {
			return contract.PrivacyResult{}, err
		}
		return res.ForProvider(provider), nil
	}
	if p.hostile {
		return contract.PrivacyResult{}, ErrHostilePayload
	}
	return in.a.EnforcePrivacy(r.ctx, contract.PrivacyRequest{Provider: provider, Payload: p.value()})
}

// ctxMode says when a completion's context ends.
type ctxMode uint8

const (
	ctxNever ctxMode = iota
	ctxBefore
	ctxDuring
)

var ctxModeNames = [...]string{"live", "cancelled before", "cancelled during"}

func (r *modelRun) complete(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	provider, model := m.fixture.Model.Provider, m.fixture.Model.ID
	switch rnd.IntN(14) {
	case 0:
		provider = blankNames[rnd.IntN(len(blankNames))]
	case 1:
		model = blankNames[rnd.IntN(len(blankNames))]
	case 2, 3, 4:
		provider = drawProvider(rnd, op.seed, m.fixture, in.s.instance.PrivacyConfig)
	}
	p := r.drawPayload(rnd, op.seed)
	if in.lastPayload != nil && rnd.IntN(5) == 0 {
		p = drawnPayload{raw: in.lastPayload} // the same request again
	}
	mode := transportMode(rnd.IntN(int(answerBlock) + 1))
	if rnd.IntN(2) == 0 {
		mode = answerObject
	}
	cm := ctxNever
	if rnd.IntN(4) == 0 {
		cm = ctxMode(1 + rnd.IntN(2))
	}
	if op.kind == opCancelled {
		provider, model = m.fixture.Model.Provider, m.fixture.Model.ID
		p = drawnPayload{raw: json.RawMessage(`{"messages":[{"role":"user","content":"a completion given up"}]}`)}
		mode, cm = answerBlock, ctxDuring
	}
	kvDesc := ""
	if in.kv != nil && op.kind != opCancelled && rnd.IntN(4) != 0 {
		// A local KV payload (LocalKVPayload), to a local provider mostly.
		ask, what := in.kv.draw(rnd, op.seed, m.fixture, in.s.instance.PrivacyConfig)
		provider, model = ask.provider, ask.model
		p = drawnPayload{raw: LocalKVPayload(ask.prompt), decoded: rnd.IntN(4) == 0}
		kvDesc = fmt.Sprintf(", kv prompt %s (prefix %d bytes, tokens %d/%d)", what, len(ask.prompt.Prefix), ask.prompt.PrefixTokens, ask.prompt.ContextTokens) + in.kv.arm(rnd)
	}
	var want contract.PrivacyResult
	var werr error
	valid := !m.closed && !contract.IsBlank(provider) && !contract.IsBlank(model)
	if valid {
		want, werr = r.predictPrivacy(in, provider, p)
	}
	// §11: the local KV path is taken for a local destination whose
	// sanitised payload prepare finds a prompt in (the factory reads it
	// with ReadLocalKVPrompt, see Setup).
	var kvPrompt *LocalKVPrompt
	var kvElig localkv.Eligibility
	if in.kv != nil && valid && werr == nil && want.Destination == contract.DestinationLocal {
		if kp, ok := ReadLocalKVPrompt(want.Payload); ok {
			kvPrompt, kvElig = &kp, kvEligibility(provider, model, kp)
			// latitude: SPEC says nothing of a local KV path whose context
			// ends, or of a port and a transport racing a deadline: such a
			// completion runs with a live context and a transport that
			// answers at once.
			cm = ctxNever
			if mode == answerBlock {
				mode = answerObject
			}
		}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	var onCalled context.CancelFunc
	switch {
	case cm == ctxBefore:
		cancel()
	case cm == ctxDuring:
		onCalled = cancel
	case mode == answerBlock:
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, 2*time.Millisecond)
		defer c2()
	}
	in.tr.script(mode, onCalled)
	given := p.value()
	res := in.a.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: model, Payload: given})
	in.tr.script(answerObject, nil)
	reqs, unended := in.tr.take()
	desc := fmt.Sprintf("%s, transport %s, context %s%s", p, transportModeNames[mode], ctxModeNames[cm], kvDesc)
	if !p.unchanged(given) {
		return diagnosticsRule{}, "", broken("a completion never modifies the caller's payload", "the payload as the caller built it", desc+": changed")
	}
	if !p.hostile {
		in.lastPayload = p.raw
	}
	if unended > 0 {
		return diagnosticsRule{}, "", broken("the transport gets the completion's context: when the call's context ends, so does the transport's", "a context that ended",
			desc+": the transport waited "+modelBlockBound.String()+" for it")
	}
	if in.kv != nil && in.kv.holdsKey(res.Reason) {
		return diagnosticsRule{}, "", broken("a fallback reason is metadata only: never an eligibility key (§11)", "a reason without one", desc+": the reason holds one")
	}
	// kvRecords are the diagnostics a failed local KV path recorded before
	// the ordinary transport ran.
	var kvRecords []contract.Diagnostic
	rec := func(code contract.FallbackCode) diagnosticsRule {
		f := fallbackRules[code]
		if f.code == "" {
			return diagnosticsRule{none: true}
		}
		m.record(f.code, f.severity)
		return diagnosticsRule{records: append(slices.Clone(kvRecords), contract.Diagnostic{Code: f.code, Severity: f.severity})}
	}
	var code contract.FallbackCode
	switch {
	case m.closed:
		code = contract.FallbackAdapterClosed
	case !valid:
		code = contract.FallbackInvalidRequest
	case werr != nil:
		code = contract.FallbackPrivacyEnforcementFail
	}
	if code != "" && code != contract.FallbackAdapterClosed && cm == ctxBefore && res.Status == contract.StatusFallback && res.Code == contract.FallbackTransportFailed {
		// latitude: a call whose context ended before it began may give up
		// before looking at the request (SPEC §9 orders the checks of a
		// call that runs); it falls back as a failed transport.
		code = contract.FallbackTransportFailed
	}
	if in.kv != nil && (code != "" || kvPrompt == nil || !kvElig.Eligible) {
		// latitude: see checkCounters; an ineligible prompt falls through
		// quietly (§11).
		switch {
		case code == "" && kvPrompt != nil:
			satAdd(&in.kv.want.Requests, 1)
			satAdd(&in.kv.want.BypassedRequests, 1)
		case code == "":
			in.kv.slack++
		}
		why := "a completion the local KV path does not take never reaches the port (§11: a remote destination, no prompt prepared, an ineligible request, a fallback before transport)"
		if err := in.kv.quiet(why, desc); err != nil {
			return diagnosticsRule{}, "", err
		}
		if kvPrompt != nil && code == "" {
			desc += ", kv ineligible (" + string(kvElig.Reason) + ")"
			r.tally("ineligible")
		}
	}
	if code == "" && kvPrompt != nil && kvElig.Eligible {
		out, err := in.kv.use(m.reference, kvElig, provider, model, want.Payload, *kvPrompt, desc)
		if err != nil {
			return diagnosticsRule{}, "", err
		}
		if out != kvFailed {
			desc += ", kv " + map[kvOutcome]string{kvHit: "hit", kvReplayed: "full replay"}[out]
			r.tally(map[kvOutcome]string{kvHit: "hits", kvReplayed: "full replays"}[out])
			if len(reqs) > 0 {
				return diagnosticsRule{}, "", broken("a completion the local KV port served does not also go through the ordinary transport (§11)", "no transport request",
					fmt.Sprintf("%s: %d request(s)", desc, len(reqs)))
			}
			if err := checkKVResult(res, out, *kvPrompt, want, desc); err != nil {
				return diagnosticsRule{}, "", err
			}
			for i := range res.Output {
				res.Output[i] = ' '
			}
			// latitude: as for a completed call (below).
			return diagnosticsRule{}, desc, nil
		}
		// §11: any failure of the KV path records local-kv-replay-failed
		// and retries the full sanitised payload through the ordinary
		// transport, which then answers as for any completion.
		desc += ", kv failed"
		r.tally("failed replays")
		m.recordFor(contract.DiagnosticLocalKVReplayFailed, contract.SeverityWarning, contract.CapabilityLocalKVReuse)
		kvRecords = []contract.Diagnostic{{Code: contract.DiagnosticLocalKVReplayFailed, Severity: contract.SeverityWarning, Capability: contract.CapabilityLocalKVReuse}}
	}
	if code != "" {
		if len(reqs) > 0 {
			return diagnosticsRule{}, "", broken("a completion that falls back before transport never reaches it (§9)", "no transport request", fmt.Sprintf("%s: %d request(s)", desc, len(reqs)))
		}
		if err := m.checkFallback(desc, res, code, modelLeaks); err != nil {
			return diagnosticsRule{}, "", err
		}
		return rec(code), desc + ", fallback " + string(code), nil
	}
	wantReq := contract.TransportRequest{Provider: provider, Model: model, Destination: want.Destination, Payload: want.Payload}
	failing := mode == answerError || mode == answerPartial || mode == answerBlock || cm != ctxNever
	// latitude: with a context that ended before the transport was
	// reached (cancelled before the call, or a deadline that passed first),
	// an adapter may give up without calling it; it then falls back as for
	// a failed transport (the only fallback of §9 that fits).
	calls := 1
	if (cm == ctxBefore || (cm == ctxNever && mode == answerBlock)) && len(reqs) == 0 {
		calls = 0
	}
	if len(reqs) != calls {
		return diagnosticsRule{}, "", broken("a completion calls the transport exactly once, also for a request identical to an earlier one", fmt.Sprintf("%d transport request(s)", calls),
			fmt.Sprintf("%s: %d", desc, len(reqs)))
	}
	if calls == 1 {
		got := reqs[0]
		if got.Provider != wantReq.Provider || got.Model != wantReq.Model || got.Destination != wantReq.Destination || !sameJSON(got.Payload, wantReq.Payload) {
			return diagnosticsRule{}, "", broken("the transport receives the provider and model as given, the destination enforcement decided and the sanitised payload (§9)",
				fmt.Sprintf("provider of %d bytes, model of %d bytes, destination %s, the sanitised payload", len(provider), len(model), want.Destination),
				fmt.Sprintf("%s: provider equal %t, model equal %t, destination %s, payload equal %t", desc, got.Provider == provider, got.Model == model,
					q(string(got.Destination)), sameJSON(got.Payload, wantReq.Payload)))
		}
	}
	if failing {
		if err := m.checkFallback(desc, res, contract.FallbackTransportFailed, modelLeaks); err != nil {
			return diagnosticsRule{}, "", err
		}
		return rec(contract.FallbackTransportFailed), desc + ", fallback transport-failed", nil
	}
	output := res.Output
	if output == nil {
		output = json.RawMessage("null")
	}
	switch {
	case res.Status != contract.StatusCompleted:
		return diagnosticsRule{}, "", broken("a completion whose transport answers is completed (§9)", "completed", desc+": "+describeModelResult(res))
	case !sameJSON(output, outputFor(mode, want.Payload)):
		return diagnosticsRule{}, "", broken("a completion passes the transport's output back unchanged, whatever JSON value it is (§9: output is runtime-owned)",
			"the transport's "+transportModeNames[mode]+" output", fmt.Sprintf("%s: %d output bytes, another value", desc, len(res.Output)))
	case res.Privacy != want.Summary():
		return diagnosticsRule{}, "", broken("a completed result reports the privacy enforcement of its payload: provider as given, destination, changed and counts (§9)",
			fmt.Sprintf("destination %s, changed %t, blocked %d, redactions %d", want.Destination, want.Changed, want.BlockedBlocks, want.SecretRedactions),
			fmt.Sprintf("%s: provider equal %t, destination %s, changed %t, blocked %d, redactions %d", desc, res.Privacy.Provider == provider,
				q(string(res.Privacy.Destination)), res.Privacy.Changed, res.Privacy.BlockedBlocks, res.Privacy.SecretRedactions))
	case res.LocalKV != nil:
		return diagnosticsRule{}, "", broken("a completion carries local KV metadata only when it went through a local KV port (§11)", "no local KV metadata", desc+": metadata")
	}
	for i := range res.Output {
		res.Output[i] = ' '
	}
	// latitude: SPEC records nothing for a completed call of the
	// reference adapter, and forbids nothing for others.
	return diagnosticsRule{records: kvRecords}, desc + ", completed", nil
}

func (r *modelRun) embed(in *modelInst, op modelOp) (diagnosticsRule, string, error) {
	if in.port == nil {
		return r.skip("the adapter declares no embedding port")
	}
	if in.m.closed {
		return r.skip("SPEC says nothing of an embedding port after shutdown")
	}
	texts := gen.EmbeddingTexts(600).Example(op.seed)
	id := in.port.Identity()
	vecs, err := in.port.Embed(r.ctx, slices.Clone(texts))
	if err != nil {
		return diagnosticsRule{}, "", failed("the embedding port must embed every batch of texts", err)
	}
	desc := fmt.Sprintf("%d texts", len(texts))
	if len(vecs) != len(texts) {
		return diagnosticsRule{}, "", broken("an embedding port returns one vector per text, in order, whatever the batch", fmt.Sprintf("%d vectors", len(texts)), fmt.Sprintf("%s: %d vectors", desc, len(vecs)))
	}
	for i, v := range vecs {
		if len(v) != id.Dimensions {
			return diagnosticsRule{}, "", broken("every vector has the port's dimensions", fmt.Sprintf("%d numbers", id.Dimensions), fmt.Sprintf("%s: vector #%d of %d", desc, i, len(v)))
		}
		zero := true
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return diagnosticsRule{}, "", broken("every vector is finite", "finite numbers", fmt.Sprintf("%s: vector #%d is not", desc, i))
			}
			zero = zero && x == 0
		}
		// latitude: SPEC says nothing of the vector of a text without
		// letters or digits (or an empty one); others are non-zero.
		if zero && strings.ContainsFunc(texts[i], func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			return diagnosticsRule{}, "", broken("a text with letters or digits embeds into a non-zero vector", "a non-zero vector", fmt.Sprintf("%s: vector #%d (a text of %d bytes) is zero", desc, i, len(texts[i])))
		}
		for j := range v {
			v[j] = math.NaN()
		}
	}
	return diagnosticsRule{}, desc, nil
}

func (r *modelRun) shutdown(in *modelInst, rnd *rand.Rand) (diagnosticsRule, string, error) {
	if in.kv != nil && !in.m.closed && in.kv.port.Shutdowns() != 0 {
		return diagnosticsRule{}, "", broken(ruleKVShutdown, "no port shutdown while the adapter is open", fmt.Sprintf("%d port shutdowns", in.kv.port.Shutdowns()))
	}
	rule, desc, err := r.shutdownOnce(in, rnd)
	if err == nil && in.kv != nil {
		if n := in.kv.port.Shutdowns(); n != 1 {
			return diagnosticsRule{}, "", broken(ruleKVShutdown, "one port shutdown once the adapter is shut down", fmt.Sprintf("%s: %d port shutdowns", desc, n))
		}
	}
	return rule, desc, err
}

// ruleKVShutdown is §11's rule for the port's shutdown.
const ruleKVShutdown = "Shutdown calls the local KV port's shutdown exactly once, on the first shutdown, however often and concurrently the adapter is shut down (§11)"

// localKV compares the local KV counters of an instance with a port with
// the model's.
func (r *modelRun) localKV(in *modelInst) (diagnosticsRule, string, error) {
	d, ok := in.a.localKVDiagnostics()
	if !ok {
		// latitude: the counters are offered through an optional interface
		// (localkv.DiagnosticsProvider).
		return r.skip("the adapter keeps no local KV counters")
	}
	if err := in.kv.checkCounters(in.m.reference, d); err != nil {
		return diagnosticsRule{}, "", err
	}
	want := 0
	if in.m.closed {
		want = 1
	}
	if n := in.kv.port.Shutdowns(); n != want {
		return diagnosticsRule{}, "", broken(ruleKVShutdown, fmt.Sprintf("%d port shutdowns (the adapter closed: %t)", want, in.m.closed), fmt.Sprintf("%d port shutdowns", n))
	}
	return diagnosticsRule{}, fmt.Sprintf("%d requests, %d hits", d.Requests, d.Hits), nil
}

func (r *modelRun) shutdownOnce(in *modelInst, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	wasOpen := !m.closed
	rule := diagnosticsRule{none: true}
	if wasOpen {
		m.record(contract.DiagnosticAdapterClosed, contract.SeverityInfo)
		rule = diagnosticsRule{records: []contract.Diagnostic{{Code: contract.DiagnosticAdapterClosed, Severity: contract.SeverityInfo}}}
	}
	m.closed = true
	switch rnd.IntN(5) {
	case 0:
		ctx, cancel := context.WithCancel(r.ctx)
		cancel()
		// latitude: SPEC does not say whether Shutdown with an ended
		// context closes; if it errs, a later Shutdown must.
		if err := in.a.Shutdown(ctx); err != nil {
			if err := in.a.Shutdown(r.ctx); err != nil {
				return diagnosticsRule{}, "", failed("Shutdown is idempotent and succeeds (after one with a cancelled context failed)", err)
			}
		}
		return rule, "cancelled context", nil
	case 1:
		const callers = 8
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				errs[i] = guard(func() error { return in.a.Shutdown(r.ctx) })
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return diagnosticsRule{}, "", failed("Shutdown is idempotent, also when calls overlap", err)
		}
		return rule, "8 at once", nil
	}
	if err := in.a.Shutdown(r.ctx); err != nil {
		return diagnosticsRule{}, "", failed("Shutdown is idempotent and succeeds", err)
	}
	return rule, "", nil
}

// burst runs completions, snapshots and enforcements at once; each
// answers as it would alone, and the transport receives exactly the
// payloads sent.
func (r *modelRun) burst(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	if m.closed || m.corrupt {
		return r.skip("bursts run on an open instance with a valid history")
	}
	k := 2 + rnd.IntN(7)
	type item struct {
		kind    opKind
		payload drawnPayload
		want    contract.PrivacyResult
		res     contract.CompletionResult
		pr      contract.PrivacyResult
		snap    contract.HistorySnapshot
		err     error
	}
	items := make([]item, k)
	fx := m.fixture
	for i := range items {
		raw, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("burst %d item %d [ds4:internal]note[/ds4:internal]", op.n, i)}}})
		it := &items[i]
		it.kind = []opKind{opComplete, opComplete, opSnapshot, opEnforce}[rnd.IntN(4)]
		it.payload = drawnPayload{raw: raw}
		if it.kind != opSnapshot {
			w, err := r.predictPrivacy(in, fx.Model.Provider, it.payload)
			if err != nil {
				return diagnosticsRule{}, "", failed("EnforcePrivacy must sanitise an inspectable payload", err)
			}
			it.want = w
		}
	}
	in.tr.script(answerObject, nil)
	var wg sync.WaitGroup
	for i := range items {
		it := &items[i]
		wg.Go(func() {
			it.err = guard(func() error {
				var err error
				switch it.kind {
				case opComplete:
					it.res = in.a.Complete(r.ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: it.payload.value()})
				case opSnapshot:
					it.snap, err = in.a.SnapshotHistory(r.ctx)
				default:
					it.pr, err = in.a.EnforcePrivacy(r.ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: it.payload.value()})
				}
				return err
			})
		})
	}
	wg.Wait()
	reqs, _ := in.tr.take()
	if in.kv != nil {
		// None of the burst's payloads holds a local KV prompt.
		if err := in.kv.quiet("a completion whose payload holds no local KV prompt does not reach the local KV port (§11: prepare finds none)", fmt.Sprintf("burst of %d", k)); err != nil {
			return diagnosticsRule{}, "", err
		}
		for i := range items {
			if items[i].kind == opComplete {
				in.kv.slack++
			}
		}
	}
	var sent []any
	for i := range items {
		it := &items[i]
		where := fmt.Sprintf("burst of %d, item #%d (%s)", k, i, opNames[it.kind])
		if it.err != nil {
			return diagnosticsRule{}, "", withNote(failed("concurrent calls answer as serial calls do", it.err), where)
		}
		switch it.kind {
		case opComplete:
			sent = append(sent, json.RawMessage(it.want.Payload))
			if it.res.Status != contract.StatusCompleted || !sameJSON(it.res.Output, outputFor(answerObject, it.want.Payload)) || it.res.Privacy != it.want.Summary() {
				return diagnosticsRule{}, "", broken("an adapter is safe for concurrent use: each completion gets its own output and privacy summary", "completed with its own output", where+": "+describeModelResult(it.res))
			}
		case opSnapshot:
			if err := checkSnapshot(&it.snap, fx.RuntimeID, fx.SessionID, m.root, in.s.asHeld(m.msgs, it.snap.Messages, 0)); err != nil {
				return diagnosticsRule{}, "", withNote(err, where)
			}
			if err := m.checkRevision("SnapshotHistory", it.snap.Revision); err != nil {
				return diagnosticsRule{}, "", withNote(err, where)
			}
		default:
			if d := diffPrivacy(it.want, it.pr); d != "" {
				return diagnosticsRule{}, "", broken("an adapter is safe for concurrent use: each enforcement answers as it would alone", "the engine's result", where+": "+d)
			}
		}
	}
	if missing, extra := payloadMultisetDiff(sent, reqs); missing > 0 || extra > 0 || len(reqs) != len(sent) {
		return diagnosticsRule{}, "", broken("an adapter is safe for concurrent use: the transport receives each completion's own sanitised payload, once", fmt.Sprintf("%d requests, one per completion", len(sent)),
			fmt.Sprintf("burst of %d: %d requests, %d unmatched, %d payloads missing", k, len(reqs), extra, missing))
	}
	return diagnosticsRule{}, fmt.Sprintf("%d calls at once", k), nil
}

// unknownRequestIDs are capability ids outside the registry, some of them
// registry ids in other casing or with spaces.
var unknownRequestIDs = []contract.CapabilityID{"Embeddings", " compaction", "local-kv-reuse ", "LOCAL-KV-REUSE", "provider_continuation", "x-vendor", ""}

func drawRequests(rnd *rand.Rand) []contract.CapabilityRequest {
	ids := contract.CapabilityIDs()
	n := rnd.IntN(9)
	out := make([]contract.CapabilityRequest, n)
	for i := range out {
		id := ids[rnd.IntN(len(ids))]
		if rnd.IntN(4) == 0 {
			id = unknownRequestIDs[rnd.IntN(len(unknownRequestIDs))]
		}
		out[i] = contract.CapabilityRequest{ID: id, Required: rnd.IntN(2) == 0}
	}
	return out
}

func nonNilDecls(ds []contract.CapabilityDeclaration) []contract.CapabilityDeclaration {
	if ds == nil {
		return []contract.CapabilityDeclaration{}
	}
	return ds
}

func declIDs(ds []contract.CapabilityDeclaration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.ID)
	}
	return out
}

func describeModel(d contract.ModelDescriptor) string {
	return fmt.Sprintf("provider of %d bytes, id of %d bytes, contextWindow %d, maxTokens set %t, reasoning set %t, %d inputs, cost set %t",
		len(d.Provider), len(d.ID), d.ContextWindow, d.MaxTokens != nil, d.Reasoning != nil, len(d.Input), d.Cost != nil)
}

func describeModelPtr(d *contract.ModelDescriptor) string {
	if d == nil {
		return "no model"
	}
	return describeModel(*d)
}

// The edits below prove a returned value is a copy: they change every
// part of it the adapter might share with its own state.

func editDiagnostics(ds []contract.Diagnostic) {
	for i := range ds {
		ds[i] = contract.Diagnostic{Code: "edited", Severity: "edited", Message: "edited", Capability: "edited"}
	}
}

func editNegotiation(n *contract.Negotiation) {
	for i := range n.Statuses {
		n.Statuses[i] = contract.CapabilityStatus{ID: "edited", Version: "edited", Reason: "edited", Supported: true, Enabled: true}
	}
	for i := range n.Enabled {
		n.Enabled[i] = "edited"
	}
	for i := range n.Disabled {
		n.Disabled[i] = "edited"
	}
	editDiagnostics(n.Diagnostics)
}

func editModel(d *contract.ModelDescriptor) {
	d.Provider, d.ID, d.ContextWindow = "edited", "edited", -1
	if d.MaxTokens != nil {
		*d.MaxTokens = -1
	}
	if d.Reasoning != nil {
		*d.Reasoning = !*d.Reasoning
	}
	for i := range d.Input {
		d.Input[i] = "edited"
	}
	if d.Cost != nil {
		d.Cost.Input, d.Cost.Output = -1, -1
	}
}
