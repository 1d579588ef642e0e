package mutants

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/reference"
)

// LegalVariants returns adapters that differ from the reference adapter
// only where SPEC allows: every check must pass them. A variant that some
// check fails today lists that check in OverDemands — a demand of the kit
// beyond SPEC.
func LegalVariants() []Mutant { return slices.Clone(legalVariants) }

// legalVariants differ from the reference adapter only where SPEC leaves
// the answer open; each says which latitude it takes. Every check must
// pass them: a check that fails one demands more than SPEC, and is listed
// in its OverDemands until the check is mended.
var legalVariants = []Mutant{
	{
		Name: "read-failed-diagnostic-names-message", Family: FamilyErrors,
		Breaks: "nothing: diagnostics are metadata only (§4), and a message id is metadata — the kit's own reports name ids — not history text; " +
			"this adapter of its own name names the id of the last message it read in its canonical-history-read-failed diagnostic",
		wrap: named(func(a contract.Adapter, _ *env) contract.Adapter { return &namingReadFailures{decorator: decorator{a}} }),
	},
	{
		Name: "gives-up-at-the-transport-once-cancelled", Family: FamilyTiming,
		Breaks: "nothing: a completion whose context ended before the transport was reached may give up without calling it, " +
			"falling back transport-failed (docs/conformance.md, the model's latitude on cancelled contexts); this one checks ctx.Err() just before the transport",
		before: func(setup *conformance.Setup) error {
			tr := setup.Transport
			setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return tr.Send(ctx, req)
			})
			return nil
		},
		wrap: plain,
	},
	{
		Name: "checks-the-context-first", Family: FamilyTiming,
		Breaks: "nothing: a completion whose context has ended (cancelled, or past its deadline) may give up before looking at the request, falling back transport-failed " +
			"(recorded) instead of invalid-request or privacy-enforcement-failed (the model's latitude on cancelled contexts); a closed adapter still answers adapter-closed first",
		port: watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			return newOwnLog(contextFirst{decorator{a}}, e, keepNewest(100))
		},
	},
	{
		Name: "own-name-keeps-18-diagnostics", Family: FamilyBounds,
		Breaks: "nothing: SPEC asks a bounded list of diagnostics of adapters other than the reference (§4; §12's 100 is the reference adapter's), " +
			"so one of its own name may keep its newest 18, and a full list may hold 18 entries of one code",
		port: watchReplays,
		wrap: named(func(a contract.Adapter, e *env) contract.Adapter { return newOwnLog(a, e, keepNewest(18)) }),
	},
	{
		Name: "own-name-keeps-2000-diagnostics", Family: FamilyBounds,
		Breaks: "nothing: SPEC names no bound for adapters other than the reference (§4), so one of its own name may keep its newest 2,000",
		port:   watchReplays,
		wrap:   named(func(a contract.Adapter, e *env) contract.Adapter { return newOwnLog(a, e, keepNewest(2000)) }),
	},
	{
		Name: "own-name-records-ineligible-kv", Family: FamilyLocalKV,
		Breaks: "nothing: \"an ineligible answer falls through to the ordinary transport without a diagnostic\" is in §11's reference adapter integration, " +
			"so an adapter of its own name may record one (here local-kv-bypassed, info) for every local completion that went through the ordinary transport",
		wrap: named(func(a contract.Adapter, _ *env) contract.Adapter { return &noisyFallThrough{decorator: decorator{a}} }),
	},
	{
		Name: "own-name-own-words", Family: FamilyNaming,
		Breaks: "nothing: an adapter of its own name words its fallback reasons and diagnostic messages itself (§9 and §12 give the reference adapter's) " +
			"and names revisions its own way (§7: any non-blank string; §12's SHA-256 is the reference adapter's)",
		wrap: named(func(a contract.Adapter, _ *env) contract.Adapter { return ownWords{decorator{a}} }),
	},
	{
		Name: "outputs-compacted", Family: FamilyOutputs,
		Breaks: "nothing: the output is compared as a JSON value (SPEC gives its bytes no meaning), so an adapter may pass it on compacted",
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return compactOutputs{decorator{a}} },
	},
	{
		Name: "kv-counters-not-offered", Family: FamilyLocalKV,
		Breaks: "nothing: aggregate local KV diagnostics are optional (§4), so an adapter with a local KV port need not offer its counters",
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return noCounters{a} },
	},
}

// reopen returns a reference adapter over the instance's history file,
// configured as the reference factory configures its own, then by change.
func reopen(setup conformance.Setup, inst *conformance.Instance, change func(*reference.Options)) (*reference.Adapter, error) {
	path, err := historyPath(inst)
	if err != nil {
		return nil, err
	}
	model := setup.Fixture.Model
	opts := reference.Options{HistoryPath: path, RuntimeID: setup.Fixture.RuntimeID, ProjectRoot: inst.ExpectedProjectRoot,
		Model: &model, Transport: setup.Transport}
	if setup.LocalKVPort != nil {
		opts.LocalKV = &reference.LocalKVOptions{Enabled: true, Port: setup.LocalKVPort, RuntimeRevision: conformance.LocalKVRuntimeRevision,
			ModelRevision: conformance.LocalKVModelRevision, Prepare: prepareKV}
	}
	if change != nil {
		change(&opts)
	}
	return reference.New(opts)
}

// prepareKV reads the local KV prompt of the conformance payloads, as the
// reference factory does.
func prepareKV(payload json.RawMessage) (reference.LocalKVPrepared, bool) {
	p, ok := conformance.ReadLocalKVPrompt(payload)
	if !ok {
		return reference.LocalKVPrepared{}, false
	}
	system, tool := p.Options()
	return reference.LocalKVPrepared{PromptPrefix: []byte(p.Prefix), SystemOptions: system, ToolOptions: tool,
		PrefixTokenCount: p.PrefixTokens, ContextTokenCount: p.ContextTokens}, true
}

// contextFirst gives up a completion whose context was cancelled before it
// began, before it looks at the request: after the closed check, it falls
// back transport-failed.
type contextFirst struct{ decorator }

func (m contextFirst) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	if ctx.Err() != nil {
		if _, err := m.Adapter.CurrentModel(context.WithoutCancel(ctx)); err == nil {
			return contract.Fallback(contract.FallbackTransportFailed, reference.ReasonTransportFailed, true)
		}
	}
	return m.Adapter.Complete(ctx, req)
}

// ownReasons and ownMessages are the words of the adapter of its own name.
var (
	ownReasons = map[contract.FallbackCode]string{
		contract.FallbackAdapterClosed:          "the adapter has shut down",
		contract.FallbackInvalidRequest:         "a provider and a model are required",
		contract.FallbackPrivacyEnforcementFail: "the payload could not be checked for private content",
		contract.FallbackTransportFailed:        "the provider did not answer",
	}
	ownMessages = map[string]string{
		reference.CodeHistoryReadFailed:              "The session file could not be read",
		reference.CodeHistoryIdentityMismatch:        "The session file belongs to another runtime",
		reference.CodeHistoryInvalid:                 "The session file does not validate",
		reference.CodeDerivedStateRebuilt:            "Caches were rebuilt from the session file",
		contract.DiagnosticPrivacyEnforcementFailed:  "A payload could not be checked for private content",
		contract.DiagnosticCompletionRequestInvalid:  "A completion named no provider or model",
		contract.DiagnosticCompletionTransportFailed: "The provider did not answer",
		contract.DiagnosticLocalKVReplayFailed:       "Prefix reuse failed; the prompt was sent whole",
		contract.DiagnosticLocalKVShutdownFailed:     "The prefix cache did not shut down",
		contract.DiagnosticAdapterClosed:             "The adapter has shut down",
	}
)

// ownWords words reasons and messages itself and prefixes revisions.
type ownWords struct{ decorator }

func (m ownWords) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if w, ok := ownReasons[r.Code]; ok && r.Status == contract.StatusFallback {
		r.Reason = w
	}
	return r
}

func (m ownWords) Diagnostics() []contract.Diagnostic {
	ds := m.Adapter.Diagnostics()
	for i := range ds {
		if w, ok := ownMessages[ds[i].Code]; ok {
			ds[i].Message = w
		}
	}
	return ds
}

func ownRevision(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err == nil {
		s.Revision = "acme-" + s.Revision
	}
	return s, err
}

func (m ownWords) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return ownRevision(m.Adapter.SnapshotHistory(ctx))
}

func (m ownWords) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return ownRevision(m.Adapter.RebuildDerivedState(ctx))
}

// compactOutputs passes every completed output on compacted.
type compactOutputs struct{ decorator }

func (m compactOutputs) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted {
		var b bytes.Buffer
		if json.Compact(&b, r.Output) == nil {
			r.Output = b.Bytes()
		}
	}
	return r
}

// noCounters forwards everything but the local KV counters.
type noCounters struct{ contract.Adapter }

// EmbeddingPort forwards the wrapped adapter's port, if any.
func (m noCounters) EmbeddingPort() contract.EmbeddingPort {
	return decorator{m.Adapter}.EmbeddingPort()
}

// LocalKVPort forwards the wrapped adapter's local KV port, if any.
func (m noCounters) LocalKVPort() localkv.RuntimePort { return decorator{m.Adapter}.LocalKVPort() }
