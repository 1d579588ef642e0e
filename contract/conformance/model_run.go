package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// This file runs the model check's sequences: it starts the instances,
// runs each operation on the adapter with the inputs model_draw.go draws,
// and hands what it observed to the comparisons of model_compare.go, which
// compare it with the answers the model (model.go) predicts.

// modelInst is one instance under the model check: the adapter, its
// source hook, its transport and the model of it.
type modelInst struct {
	s       *Session
	a       *boundedAdapter
	src     *boundedSource
	rewrite func(context.Context, contract.Message) error
	// brk and repair damage and repair the source (SourceBreaker).
	brk    func(context.Context, Damage) error
	repair func(context.Context) error
	tr     *modelTransport
	m      *model
	port   contract.EmbeddingPort
	// kv is the model of the instance's local KV, for an instance whose
	// factory was given a port and whose adapter then declares
	// local-kv-reuse; nil otherwise.
	kv *kvModel
	// diags is the last diagnostics list read (a copy).
	diags []contract.Diagnostic
	// cleanDiags are the texts (message and code) of diagnostics read
	// and found to hold none of modelLeaks.
	cleanDiags map[string]bool
	// lastPayload is the raw payload of the last completion, for
	// duplicate requests.
	lastPayload json.RawMessage
	// kept is a snapshot returned earlier and left as returned, and
	// keptCopy a copy of it: later calls must never change it.
	kept, keptCopy *contract.HistorySnapshot
	// keptKey is contentKey of keptCopy's messages: a read encodes only
	// the kept snapshot to see it unchanged.
	keptKey string
	// splitCalls are the ids of the calls splitExchange appended whose
	// results it has not appended yet.
	splitCalls []string
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

// modelHostileMember names the member of a partly inspectable payload
// that cannot be inspected: payload text, which no reason names.
const modelHostileMember = "ds4-model-uninspectable-member-5d"

// modelLeaks are texts no error, diagnostic or fallback reason may hold:
// history text, the name of a payload's member, the transport error's
// text, and the secrets and class content of gen.Payload.
var modelLeaks = []string{modelHistoryProbe, modelHostileMember, modelTransportCredential, "provider rejected the request", "abcdefgh12345678", "hunter2hunter2",
	"s3cretvalue", "local only", "sensitive note", "internal note", "MIIB", LocalKVHandleProbe, modelKVPrefixMarker, localKVMessageText}

// leaksAny reports whether s holds one of modelLeaks.
func leaksAny(s string) bool { return ContainsAny([]byte(s), modelLeaks...) }

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
		in.brk, in.repair = breakerOf(in.src)
	}
	if cfg := s.instance.PrivacyConfig; cfg != nil {
		if in.m.engine, err = privacy.New(*cfg); err != nil {
			return nil, broken("the privacy configuration a factory declares is valid", "a configuration privacy.New accepts", "error: "+scrub(err.Error()))
		}
	}
	if err := in.learn(port); err != nil {
		return nil, err
	}
	return in, nil
}

// learn reads what the adapter says of itself first — identity,
// declarations, embedding port, diagnostics — into the model, and checks
// what SPEC pins of it.
func (in *modelInst) learn(port *RecordingKVPort) error {
	fx := in.m.fixture
	id := in.a.Identity()
	if id.ContractVersion != contract.ContractVersion || id.RuntimeID != fx.RuntimeID || contract.IsBlank(id.AdapterName) || contract.IsBlank(id.AdapterVersion) {
		return broken("an adapter reports the contract version, the runtime id it was given and a non-blank name and version",
			fmt.Sprintf("contract %s, runtime %s", contract.ContractVersion, q(fx.RuntimeID)), fmt.Sprintf("contract %s, runtime %s, name blank %t, version blank %t",
				q(id.ContractVersion), q(id.RuntimeID), contract.IsBlank(id.AdapterName), contract.IsBlank(id.AdapterVersion)))
	}
	in.m.identity = &id
	in.m.reference = id.AdapterName == referenceAdapterName
	in.m.decls = slices.Clone(in.a.CapabilityDeclarations())
	embeds := capabilityDeclared(in.a, contract.CapabilityEmbeddings)
	p, _ := in.a.embeddingPort()
	if embeds {
		if p == nil {
			return broken("an adapter declaring embeddings exposes its port (contract.EmbeddingPortProvider)", "an embedding port", "none")
		}
		in.port = p
	}
	// §12: the reference adapter declares embeddings supported exactly
	// when a port is configured (and then exposes it).
	//
	// latitude: SPEC ties no other adapter's declaration to a port it
	// exposes; one may offer a port and declare the capability
	// unsupported, and its embedding checks then skip.
	if in.m.reference && !embeds && p != nil {
		return broken("the reference adapter declares embeddings supported exactly when an embedding port is configured (§12)",
			"supported (its EmbeddingPort returns a port)", "unsupported")
	}
	// §12: the reference adapter declares local-kv-reuse supported when a
	// port is configured, and unsupported otherwise.
	if declared := capabilityDeclared(in.a, contract.CapabilityLocalKVReuse); in.m.reference && declared != (port != nil) {
		return broken("the reference adapter declares local-kv-reuse supported exactly when a local KV port is configured (§12)",
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
	return nil
}

// kvCall is a completion the local KV path looks at: the prompt prepare
// finds in its sanitised payload, and its eligibility.
type kvCall struct {
	prompt LocalKVPrompt
	elig   localkv.Eligibility
}

// kvCall returns the local KV prompt of c when the instance has a port and
// §11's local KV path looks at c — a valid completion to a local
// destination whose sanitised payload holds a prompt (the factory reads
// it with ReadLocalKVPrompt, see Setup) — and nil otherwise.
func (in *modelInst) kvCall(m *model, c completionCall, want contract.PrivacyResult, werr error) *kvCall {
	if in.kv == nil || !m.validCompletion(c) || werr != nil || want.Destination != contract.DestinationLocal {
		return nil
	}
	p, ok := ReadLocalKVPrompt(want.Payload)
	if !ok {
		return nil
	}
	return &kvCall{prompt: p, elig: kvEligibility(c.provider, c.model, p)}
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
	log, _, err = runSeqAt(ctx, e, seq, counts)
	return log, err
}

// runSeqAt is runSeq, also returning how many of the sequence's operations
// were started: all of them, or up to and including the one that failed.
func runSeqAt(ctx context.Context, e *env, seq *modelSeq, counts *modelCounts) (log []string, ran int, err error) {
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
			return r.log, 0, errBeforeOps{err}
		}
		r.insts = append(r.insts, in)
	}
	for i, op := range seq.ops {
		if err := guard(func() error { return r.do(op) }); err != nil {
			return r.log, i + 1, err
		}
	}
	for _, in := range r.insts {
		if err := in.checkKept(); err != nil {
			return r.log, len(seq.ops), withNote(err, "at the end of the sequence")
		}
	}
	return r.log, len(seq.ops), nil
}

// checkKept checks that the snapshot kept as returned (if any) is as it
// was returned. It runs when a read keeps a newer one and when the
// sequence ends: a change made by any call in between stays until then,
// and a history of thousands of messages is not encoded after every read.
func (in *modelInst) checkKept() error {
	if in.kept == nil || contentKey(in.kept.Messages) == in.keptKey && diffGroups(in.keptCopy.ToolAtomicGroups, in.kept.ToolAtomicGroups) == "" {
		return nil
	}
	d := contentDiff(in.keptCopy, in.kept)
	if d == "" {
		d = "a different encoding of the same messages"
	}
	return broken("a snapshot returned earlier is the caller's: later calls, failed ones included, never change it", "the earlier snapshot as returned", d)
}

// do runs one operation and compares everything it observed with the
// model: its own outputs, the diagnostics, the transport, and the other
// instance.
func (r *modelRun) do(op modelOp) error {
	in := r.insts[op.inst]
	rnd := rand.New(rand.NewPCG(uint64(op.seed), 0x6d6f64656c))
	before := in.diags
	rule, desc, err := r.exec(in, op, rnd)
	if errors.Is(err, errSkipOp) {
		return nil
	}
	tag := ""
	if len(r.insts) > 1 {
		tag = fmt.Sprintf("@%d", op.inst)
	}
	r.log = append(r.log, fmt.Sprintf("%s%s(%s)", opNames[op.kind], tag, desc))
	if err != nil {
		return err
	}
	if op.kind != opComplete && op.kind != opCancelled && op.kind != opBurst && op.kind != opMixed {
		if reqs, _ := in.tr.take(); len(reqs) > 0 {
			return broken("only a completion reaches the transport", "no transport request", fmt.Sprintf("%s: %d transport request(s)", opNames[op.kind], len(reqs)))
		}
		if in.kv != nil {
			if err := in.kv.quiet("only a completion reaches the local KV port", opNames[op.kind]); err != nil {
				return err
			}
		}
	}
	if err := in.readDiagnostics(opNames[op.kind], rule, before); err != nil {
		return err
	}
	return r.checkIndependent(op)
}

// readDiagnostics reads the diagnostics after an operation and compares
// them with what the operation may record (rule) and with before.
func (in *modelInst) readDiagnostics(op string, rule diagnosticsRule, before []contract.Diagnostic) error {
	got := in.a.Diagnostics()
	after := slices.Clone(got)
	editDiagnostics(got) // a copy: editing it changes nothing the adapter returns later
	in.diags = after
	for i, d := range after {
		// A text read before and found clean is clean: modelLeaks never
		// change.
		if text := d.Message + d.Code; !in.cleanDiags[text] {
			if leaksAny(text) {
				return broken("diagnostics are metadata only: never payload text, secrets, a transport error's text, a prompt prefix or a local KV port error's text", "no such text",
					fmt.Sprintf("%s: diagnostic #%d (%s) holds some", op, i, q(d.Code)))
			}
			if in.cleanDiags == nil {
				in.cleanDiags = map[string]bool{}
			}
			in.cleanDiags[text] = true
		}
		if in.kv != nil && in.kv.holdsKey(d.Message+" "+d.Code) {
			return broken("diagnostics are metadata only: never an eligibility key (§11)", "no key digest",
				fmt.Sprintf("%s: diagnostic #%d (%s) holds one", op, i, q(d.Code)))
		}
	}
	return in.m.checkDiagnostics(op, rule, before, after)
}

// checkIndependent checks nothing op did shows in the other instances:
// no transport request, no local KV call, no new diagnostic.
func (r *modelRun) checkIndependent(op modelOp) error {
	const rule = "instances are independent: nothing one does shows in another"
	for j, other := range r.insts {
		if j == op.inst {
			continue
		}
		if reqs, _ := other.tr.take(); len(reqs) > 0 {
			return broken(rule, "no request through the other instance's transport",
				fmt.Sprintf("%s on instance %d: %d request(s) through instance %d's transport", opNames[op.kind], op.inst, len(reqs), j))
		}
		if other.kv != nil {
			if err := other.kv.quiet(rule+" (no call through the other instance's local KV port)",
				fmt.Sprintf("%s on instance %d", opNames[op.kind], op.inst)); err != nil {
				return err
			}
		}
		if ds := other.a.Diagnostics(); !reflect.DeepEqual(nonNilDiags(ds), nonNilDiags(other.diags)) {
			return broken(rule, fmt.Sprintf("instance %d's %d diagnostics unchanged", j, len(other.diags)),
				fmt.Sprintf("%s on instance %d: instance %d now has %d diagnostics", opNames[op.kind], op.inst, j, len(ds)))
		}
	}
	return nil
}

// localKV compares the local KV counters of an instance with the model's:
// every counter 0 without a port.
func (r *modelRun) localKV(in *modelInst) (diagnosticsRule, string, error) {
	d, ok := in.a.localKVDiagnostics()
	if !ok {
		// latitude: the counters are offered through an optional interface
		// (localkv.DiagnosticsProvider).
		return r.skip("the adapter keeps no local KV counters")
	}
	if in.kv == nil {
		if d.Requests != 0 || d.EligibleRequests != 0 || d.Hits != 0 || d.FullReplays != 0 || d.TransportFailures != 0 || d.PrefixTokens != 0 {
			return diagnosticsRule{}, "", broken("local KV counters count local KV requests only: with no port configured, none", "every counter 0",
				fmt.Sprintf("requests %d, eligible %d, hits %d, replays %d", d.Requests, d.EligibleRequests, d.Hits, d.FullReplays))
		}
		return diagnosticsRule{}, "", nil
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

// exec runs one operation and checks its outputs; it returns what SPEC
// makes the operation do to the diagnostics and a metadata description.
func (r *modelRun) exec(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	switch op.kind {
	case opSnapshot, opRebuild:
		return r.read(in, op.kind == opRebuild, rnd)
	case opAppend:
		return r.sourceAppend(in, op)
	case opRewrite:
		return r.sourceRewrite(in, op)
	case opCorrupt:
		return r.sourceCorrupt(in)
	case opEnforce:
		return r.enforce(in, op, rnd)
	case opComplete, opCancelled:
		return r.complete(in, op, rnd)
	case opNegotiate:
		return r.negotiate(in, rnd)
	case opDeclarations, opIdentity:
		return r.describe(in, op.kind)
	case opRoot, opModel:
		return r.selected(in, op.kind)
	case opDiagnostics:
		return diagnosticsRule{}, fmt.Sprintf("%d diagnostics", len(in.diags)), nil
	case opEmbed:
		return r.embed(in, op)
	case opLocalKV:
		return r.localKV(in)
	case opShutdown:
		return r.shutdown(in, rnd, -1)
	case opShutdownCancelled:
		return r.shutdown(in, rnd, shutdownCancelled)
	case opBurst:
		return r.burst(in, op, rnd)
	case opFlood:
		return r.flood(in, rnd)
	case opBreak:
		return r.breakSource(in, op, rnd)
	case opRepair:
		return r.repairSource(in)
	case opMixed:
		return r.mixed(in, op, rnd)
	case opBounds:
		return r.bounds(in, op)
	case opRewriteSameSize:
		return r.rewriteSameSize(in, op)
	case opSplitExchange:
		return r.splitExchange(in, op)
	}
	return diagnosticsRule{}, "", fmt.Errorf("unknown operation %d", op.kind)
}

// sourceAppend appends drawn messages through the source hook.
func (r *modelRun) sourceAppend(in *modelInst, op modelOp) (diagnosticsRule, string, error) {
	m := in.m
	if in.src == nil {
		return r.skip(noSource)
	}
	if m.closed || m.corrupt || m.damage != nil {
		return r.skip("no source writes to a closed or corrupt instance")
	}
	msgs := gen.AppendedMessages(m.fixture.RuntimeID, m.fixture.SessionID, op.n, r.leave...).Example(op.seed)
	plantHistoryProbe(msgs)
	bytes := 0
	for k, msg := range msgs {
		if err := in.src.Append(r.ctx, msg); err != nil {
			ref, ok := refusalOf(err)
			if !ok {
				return diagnosticsRule{}, "", failed("the instance's Source must append a valid message with a new id", err)
			}
			// The runtime cannot hold the message: a limit, if the
			// message holds the family. Nothing more of the exchange is
			// appended (a result without its call breaks a history).
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
}

// sourceRewrite changes a message of the history in place through the
// source hook.
func (r *modelRun) sourceRewrite(in *modelInst, op modelOp) (diagnosticsRule, string, error) {
	m := in.m
	switch {
	case in.src == nil:
		return r.skip(noSource)
	case in.rewrite == nil:
		return r.skip(noRewrite)
	case m.closed || m.corrupt || m.damage != nil || len(m.msgs) == 0:
		return r.skip("no source writes to a closed or corrupt instance")
	}
	i := op.seed % len(m.msgs)
	msg := gen.RewrittenMessage(m.msgs[i], r.leave...).Example(op.seed)
	if err := in.rewrite(r.ctx, msg); err != nil {
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
}

// sourceCorrupt damages the canonical history through the source hook.
func (r *modelRun) sourceCorrupt(in *modelInst) (diagnosticsRule, string, error) {
	m := in.m
	if in.src == nil {
		return r.skip(noSource)
	}
	if m.closed || m.corrupt || m.damage != nil {
		return r.skip("no source writes to a closed or corrupt instance")
	}
	if err := in.src.Corrupt(r.ctx); err != nil {
		return diagnosticsRule{}, "", failed("the instance's Source must corrupt the canonical history", err)
	}
	m.corrupt = true
	m.sourceWritten()
	return diagnosticsRule{}, "", nil
}

// negotiate negotiates a drawn request set.
func (r *modelRun) negotiate(in *modelInst, rnd *rand.Rand) (diagnosticsRule, string, error) {
	reqs := drawRequests(rnd)
	got := in.a.NegotiateCapabilities(slices.Clone(reqs))
	want := contract.NegotiateCapabilities(in.m.decls, reqs)
	if d := negotiationDiff(want, got); d != "" {
		return diagnosticsRule{}, "", broken("NegotiateCapabilities applies the contract's negotiation (§5) to the adapter's own declarations, before and after shutdown",
			"the negotiation of "+describeRequests(reqs), d)
	}
	editNegotiation(&got)
	// §9: negotiation records no diagnostic.
	return diagnosticsRule{none: true}, fmt.Sprintf("%d requests", len(reqs)), nil
}

// describe reads the declarations or the identity, which stay what they
// were first (nothing in SPEC lets them change during a run).
func (r *modelRun) describe(in *modelInst, kind opKind) (diagnosticsRule, string, error) {
	m := in.m
	if kind == opIdentity {
		if got := in.a.Identity(); got != *m.identity {
			return diagnosticsRule{}, "", broken("an adapter's identity stays what it was, also after shutdown", "the identity of the first call",
				fmt.Sprintf("runtime %s, name %s, version %s, contract %s", q(got.RuntimeID), q(got.AdapterName), q(got.AdapterVersion), q(got.ContractVersion)))
		}
		return diagnosticsRule{}, "", nil
	}
	got := in.a.CapabilityDeclarations()
	if !reflect.DeepEqual(nonNilDecls(got), nonNilDecls(m.decls)) {
		return diagnosticsRule{}, "", broken("an adapter's capability declarations stay what they were, also after shutdown (§9: declarations keep working)",
			fmt.Sprintf("the %d declarations of the first call", len(m.decls)), fmt.Sprintf("%d declarations, ids %s", len(got), qs(declIDs(got))))
	}
	editDeclarations(got)
	return diagnosticsRule{}, fmt.Sprintf("%d declarations", len(got)), nil
}

// selected reads the trusted root or the current model: what the factory
// expects and the fixture gives while the adapter is open, an error after
// shutdown (§9).
func (r *modelRun) selected(in *modelInst, kind opKind) (diagnosticsRule, string, error) {
	m := in.m
	method, what := "TrustedProjectRoot", "the root"
	var root string
	var got *contract.ModelDescriptor
	var err error
	if kind == opRoot {
		root, err = in.a.TrustedProjectRoot(r.ctx)
	} else {
		method, what = "CurrentModel", "a model"
		got, err = in.a.CurrentModel(r.ctx)
	}
	switch {
	case m.closed && err == nil:
		return diagnosticsRule{}, "", broken("after shutdown, "+method+" returns an error (§9)", "an error", what)
	case m.closed:
		return diagnosticsRule{}, "closed", nil
	case err != nil && kind == opRoot:
		return diagnosticsRule{}, "", failed("TrustedProjectRoot must return the trusted root", err)
	case err != nil:
		return diagnosticsRule{}, "", failed("CurrentModel must return the selected model", err)
	case kind == opRoot && root != m.root:
		return diagnosticsRule{}, "", broken("TrustedProjectRoot is the canonical project root the factory expects", q(m.root), q(root))
	case kind == opModel && (got == nil || !reflect.DeepEqual(*got, m.fixture.Model)):
		return diagnosticsRule{}, "", broken("CurrentModel returns the model the runtime selected, every member as given (§3), at any point of the instance's life",
			describeModel(m.fixture.Model), describeModelPtr(got))
	}
	if got != nil {
		editModel(got)
	}
	return diagnosticsRule{}, "", nil
}

// read is a snapshot or a rebuild.
func (r *modelRun) read(in *modelInst, rebuild bool, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	method, call := "SnapshotHistory", in.a.SnapshotHistory
	if rebuild {
		method, call = "RebuildDerivedState", in.a.RebuildDerivedState
	}
	snap, err := call(r.ctx)
	want := m.read(method, rebuild)
	switch {
	case want.fails != "" && err == nil:
		return diagnosticsRule{}, "", broken(want.fails, "an error", describeHistory(&snap))
	case want.fails != "":
		if err := readError(method, err); err != nil {
			return diagnosticsRule{}, "", err
		}
		return want.rule, want.desc, nil
	case err != nil:
		return diagnosticsRule{}, "", failed(method+" must project a valid canonical history", err)
	}
	fx := m.fixture
	if err := checkSnapshot(&snap, fx.RuntimeID, fx.SessionID, m.root, in.s.asHeld(m.msgs, snap.Messages, 0)); err != nil {
		return diagnosticsRule{}, "", withNote(err, fmt.Sprintf("%s of %d messages", method, len(m.msgs)))
	}
	if err := m.checkRevision(method, snap.Revision); err != nil {
		return diagnosticsRule{}, "", err
	}
	if rnd.IntN(2) == 0 {
		// Kept as returned, to see later calls leave it alone; the one
		// kept before must be as it was returned.
		if err := in.checkKept(); err != nil {
			return diagnosticsRule{}, "", err
		}
		kept := snap
		keptCopy := contract.CloneSnapshot(&snap)
		in.kept, in.keptCopy, in.keptKey = &kept, &keptCopy, contentKey(keptCopy.Messages)
	} else {
		editSnapshot(&snap)
	}
	return want.rule, fmt.Sprintf("%d messages", len(m.msgs)), nil
}

// enforce enforces privacy on a drawn payload for a drawn provider.
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
	if m.enforceRefused(provider) {
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
		return m.enforceFailedClosed(), desc + ", failed closed", nil
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

// complete runs a drawn completion and compares what it answered, what the
// transport and the local KV port received and what it recorded with the
// model's answer.
func (r *modelRun) complete(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	return r.completeCall(in, r.drawCompletion(in, op, rnd))
}

// completeCall runs the completion c and compares what it answered, what
// the transport and the local KV port received and what it recorded with
// the model's answer.
func (r *modelRun) completeCall(in *modelInst, c completionCall) (diagnosticsRule, string, error) {
	m := in.m
	var want contract.PrivacyResult
	var werr error
	if m.validCompletion(c) {
		want, werr = r.predictPrivacy(in, c.provider, c.payload)
	}
	kv := in.kvCall(m, c, want, werr)
	if kv != nil {
		// latitude: SPEC says nothing of a local KV path whose context
		// ends, or of a port and a transport racing a deadline: such a
		// completion runs with a live context and a transport that
		// answers at once.
		c.ctx = ctxNever
		if c.mode == answerBlock {
			c.mode = answerObject
		}
	}
	seen := in.runCompletion(r.ctx, c)
	desc := c.String()
	switch {
	case seen.changed:
		return diagnosticsRule{}, "", broken("a completion never modifies the caller's payload", "the payload as the caller built it", desc+": changed")
	case seen.unended > 0:
		return diagnosticsRule{}, "", broken("the transport gets the completion's context: when the call's context ends, so does the transport's", "a context that ended",
			desc+": the transport waited "+modelBlockBound.String()+" for it")
	case in.kv != nil && in.kv.holdsKey(seen.res.Reason):
		return diagnosticsRule{}, "", broken("a fallback reason is metadata only: never an eligibility key (§11)", "a reason without one", desc+": the reason holds one")
	}
	if !c.payload.hostile {
		in.lastPayload = c.payload.raw
	}
	return r.compareCompletion(in, kv, m.completion(c, want, werr, seen.ended), seen, desc)
}

// completionSeen is what one completion was observed to do.
type completionSeen struct {
	res contract.CompletionResult
	// reqs are the transport's requests; unended counts its blocking
	// calls whose context never ended.
	reqs    []contract.TransportRequest
	unended int
	// changed says the caller's payload changed.
	changed bool
	// ended says the call's context had ended when the call returned.
	ended bool
}

// runCompletion runs c on the instance: its context cancelled before the
// call, when the transport is called, or (for a transport that blocks)
// after 2 ms.
func (in *modelInst) runCompletion(parent context.Context, c completionCall) completionSeen {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var onCalled context.CancelFunc
	switch {
	case c.ctx == ctxBefore:
		cancel()
	case c.ctx == ctxDuring:
		onCalled = cancel
	case c.mode == answerBlock:
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, 2*time.Millisecond)
		defer c2()
	}
	in.tr.script(c.mode, onCalled)
	given := c.payload.value()
	res := in.a.Complete(ctx, contract.CompletionRequest{Provider: c.provider, Model: c.model, Payload: given})
	ended := ctx.Err() != nil
	in.tr.script(answerObject, nil)
	reqs, unended := in.tr.take()
	return completionSeen{res: res, reqs: reqs, unended: unended, changed: !c.payload.unchanged(given), ended: ended}
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
	if err := compareVectors(desc, texts, vecs, id.Dimensions); err != nil {
		return diagnosticsRule{}, "", err
	}
	for _, v := range vecs {
		for j := range v {
			v[j] = math.NaN()
		}
	}
	return diagnosticsRule{}, desc, nil
}

// shutdown shuts the instance down one of the ways shutdownOnce draws
// (way < 0), or the way it names.
func (r *modelRun) shutdown(in *modelInst, rnd *rand.Rand, way int) (diagnosticsRule, string, error) {
	if way < 0 {
		way = rnd.IntN(shutdownWays)
	}
	if in.kv != nil && !in.m.closed && in.kv.port.Shutdowns() != 0 {
		return diagnosticsRule{}, "", broken(ruleKVShutdown, "no port shutdown while the adapter is open", fmt.Sprintf("%d port shutdowns", in.kv.port.Shutdowns()))
	}
	rule, desc, err := r.shutdownOnce(in, way)
	if err == nil && in.kv != nil {
		if n := in.kv.port.Shutdowns(); n != 1 {
			return diagnosticsRule{}, "", broken(ruleKVShutdown, "one port shutdown once the adapter is shut down", fmt.Sprintf("%s: %d port shutdowns", desc, n))
		}
	}
	return rule, desc, err
}

// ruleKVShutdown is §11's rule for the port's shutdown.
const ruleKVShutdown = "Shutdown calls the local KV port's shutdown exactly once, on the first shutdown, however often and concurrently the adapter is shut down (§11)"

// burstItem is one call of a burst: what it sends, the model's enforcement
// of its payload, and what it answered.
type burstItem struct {
	kind    opKind
	payload drawnPayload
	want    contract.PrivacyResult
	res     contract.CompletionResult
	pr      contract.PrivacyResult
	snap    contract.HistorySnapshot
	err     error
}

// burst runs completions, snapshots and enforcements at once; each
// answers as it would alone, and the transport receives exactly the
// payloads sent.
func (r *modelRun) burst(in *modelInst, op modelOp, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	if m.closed || m.corrupt || m.damage != nil {
		return r.skip("bursts run on an open instance with a valid history")
	}
	items := make([]burstItem, 2+rnd.IntN(7))
	for i := range items {
		raw, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("burst %d item %d [ds4:internal]note[/ds4:internal]", op.n, i)}}})
		it := &items[i]
		it.kind = []opKind{opComplete, opComplete, opSnapshot, opEnforce}[rnd.IntN(4)]
		it.payload = drawnPayload{raw: raw}
		if it.kind != opSnapshot {
			w, err := r.predictPrivacy(in, m.fixture.Model.Provider, it.payload)
			if err != nil {
				return diagnosticsRule{}, "", failed("EnforcePrivacy must sanitise an inspectable payload", err)
			}
			it.want = w
		}
	}
	in.runBurst(r.ctx, items)
	reqs, _ := in.tr.take()
	if in.kv != nil {
		// None of the burst's payloads holds a local KV prompt.
		if err := in.kv.quiet("a completion whose payload holds no local KV prompt does not reach the local KV port (§11: prepare finds none)", fmt.Sprintf("burst of %d", len(items))); err != nil {
			return diagnosticsRule{}, "", err
		}
		for i := range items {
			if items[i].kind == opComplete {
				in.kv.slack++
			}
		}
	}
	if err := in.compareBurst(items, reqs); err != nil {
		return diagnosticsRule{}, "", err
	}
	return diagnosticsRule{}, fmt.Sprintf("%d calls at once", len(items)), nil
}

// runBurst runs the burst's calls at once.
func (in *modelInst) runBurst(ctx context.Context, items []burstItem) {
	fx := in.m.fixture
	in.tr.script(answerObject, nil)
	var wg sync.WaitGroup
	for i := range items {
		it := &items[i]
		wg.Go(func() {
			it.err = guard(func() error {
				var err error
				switch it.kind {
				case opComplete:
					it.res = in.a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: it.payload.value()})
				case opSnapshot:
					it.snap, err = in.a.SnapshotHistory(ctx)
				default:
					it.pr, err = in.a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: it.payload.value()})
				}
				return err
			})
		})
	}
	wg.Wait()
}

// compareBurst checks each call of a burst answered as it would alone,
// and the transport received each completion's sanitised payload once.
func (in *modelInst) compareBurst(items []burstItem, reqs []contract.TransportRequest) error {
	m, fx := in.m, in.m.fixture
	var sent []any
	for i := range items {
		it := &items[i]
		where := fmt.Sprintf("burst of %d, item #%d (%s)", len(items), i, opNames[it.kind])
		if it.err != nil {
			return withNote(failed("concurrent calls answer as serial calls do", it.err), where)
		}
		switch it.kind {
		case opComplete:
			sent = append(sent, json.RawMessage(it.want.Payload))
			if it.res.Status != contract.StatusCompleted || !sameJSON(it.res.Output, outputFor(answerObject, it.want.Payload)) || it.res.Privacy != it.want.Summary() {
				return broken("an adapter is safe for concurrent use: each completion gets its own output and privacy summary", "completed with its own output", where+": "+describeModelResult(it.res))
			}
		case opSnapshot:
			if err := checkSnapshot(&it.snap, fx.RuntimeID, fx.SessionID, m.root, in.s.asHeld(m.msgs, it.snap.Messages, 0)); err != nil {
				return withNote(err, where)
			}
			if err := m.checkRevision("SnapshotHistory", it.snap.Revision); err != nil {
				return withNote(err, where)
			}
		default:
			if d := diffPrivacy(it.want, it.pr); d != "" {
				return broken("an adapter is safe for concurrent use: each enforcement answers as it would alone", "the engine's result", where+": "+d)
			}
		}
	}
	if missing, extra := payloadMultisetDiff(sent, reqs); missing > 0 || extra > 0 || len(reqs) != len(sent) {
		return broken("an adapter is safe for concurrent use: the transport receives each completion's own sanitised payload, once", fmt.Sprintf("%d requests, one per completion", len(sent)),
			fmt.Sprintf("burst of %d: %d requests, %d unmatched, %d payloads missing", len(items), len(reqs), extra, missing))
	}
	return nil
}

// The ways shutdownOnce shuts down: with a context already cancelled, by
// 8 callers at once, or plainly (the rest).
const (
	shutdownCancelled = 0
	shutdownAtOnce    = 1
	shutdownWays      = 5
)

func (r *modelRun) shutdownOnce(in *modelInst, way int) (diagnosticsRule, string, error) {
	rule := in.m.shutdown()
	switch way {
	case shutdownCancelled:
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
	case shutdownAtOnce:
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

// flood crosses the diagnostics bound in one operation: 101 to 160
// fallbacks and failed enforcements that reach no transport — completions
// with a blank provider or an uninspectable payload, enforcements of one —
// each answered as SPEC says, so that every run sees what a full list keeps
// (§12: the reference adapter's newest 100, oldest first, compared
// exactly after the operation).
func (r *modelRun) flood(in *modelInst, rnd *rand.Rand) (diagnosticsRule, string, error) {
	m := in.m
	if m.closed {
		return r.skip("a closed adapter records nothing")
	}
	fx := m.fixture
	n := referenceDiagnosticsKept + 1 + rnd.IntN(60)
	var last contract.Diagnostic
	for i := range n {
		where := fmt.Sprintf("flood of %d, call #%d", n, i)
		switch kind := rnd.IntN(3); kind {
		case 0, 1:
			req := contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: HostilePayload()}
			code := contract.FallbackPrivacyEnforcementFail
			if kind == 0 {
				req.Provider, req.Payload, code = blankNames[rnd.IntN(len(blankNames))], PlainPayload(), contract.FallbackInvalidRequest
			}
			if err := m.checkFallback(where, in.a.Complete(r.ctx, req), code, modelLeaks); err != nil {
				return diagnosticsRule{}, "", err
			}
			last = m.fellBack(code, nil).records[0]
		default:
			_, err := in.a.EnforcePrivacy(r.ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: HostilePayload()})
			if err == nil {
				return diagnosticsRule{}, "", broken("enforcement fails closed: a payload that cannot be fully inspected is an error (§8)", "an error", where+": a result")
			}
			if leaksAny(err.Error()) {
				return diagnosticsRule{}, "", broken("an enforcement error is metadata only: it never quotes the payload it refused", "an error without payload text", where+": the error quotes some")
			}
			last = m.enforceFailedClosed().records[0]
		}
	}
	// Which entries a full list drops is the adapter's choice (but the
	// reference adapter's, §12): the last call's diagnostic is there.
	return diagnosticsRule{records: []contract.Diagnostic{last}, many: true}, fmt.Sprintf("%d fallbacks and failed enforcements", n), nil
}
