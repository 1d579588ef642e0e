package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/ds4context/adapterkit/contract"
)

// This file compares what an adapter answered with what the model
// (model.go) says it must answer: every failure names the rule and shows
// expected and actual values as metadata only.

// checkRevision checks a snapshot's revision against every earlier one.
func (m *model) checkRevision(method, rev string) error {
	key := contentKey(m.msgs)
	if was, ok := m.revisions[rev]; ok && was != key {
		return broken("the revision tracks the canonical content: one revision never names two different contents",
			"a revision not seen with other content", method+" returned revision "+q(rev)+", seen before with other content")
	}
	if m.stable != "" && rev != m.stable {
		return broken("the revision of an unchanged canonical history is the same in every snapshot and rebuild",
			"revision "+q(m.stable)+" (the source was not written since)", method+" returned revision "+q(rev))
	}
	m.revisions[rev] = key
	m.stable = rev
	return nil
}

// checkRevisionOf checks the revision a read returned with msgs, a content
// the source held at some moment, against every earlier one: one revision
// never names two contents, and the content the model held last keeps its
// revision while the source is not written.
func (m *model) checkRevisionOf(method, rev string, msgs []contract.Message) error {
	key := contentKey(msgs)
	if was, ok := m.revisions[rev]; ok && was != key {
		return broken("the revision tracks the canonical content: one revision never names two different contents",
			"a revision not seen with other content", method+" returned revision "+q(rev)+", seen before with other content")
	}
	if m.stable != "" && rev != m.stable && key == contentKey(m.msgs) {
		return broken("the revision of an unchanged canonical history is the same in every snapshot and rebuild",
			"revision "+q(m.stable)+" (the source was not written since)", method+" returned revision "+q(rev))
	}
	m.revisions[rev] = key
	return nil
}

// checkDiagnostics checks the diagnostics an operation left: after, read
// right after it, against before, read right before it.
func (m *model) checkDiagnostics(op string, rule diagnosticsRule, before, after []contract.Diagnostic) error {
	for i, d := range after {
		if d.Severity != contract.SeverityInfo && d.Severity != contract.SeverityWarning && d.Severity != contract.SeverityError {
			return broken("a diagnostic's severity is info, warning or error", "one of the three", fmt.Sprintf("diagnostic #%d (%s) of severity %s", i, q(d.Code), q(string(d.Severity))))
		}
		if want, ok := pinnedSeverities[d.Code]; ok && d.Severity != want {
			return broken("a diagnostic of a code SPEC names has the severity SPEC gives it (§9, §11)", fmt.Sprintf("%s of severity %s", q(d.Code), want),
				fmt.Sprintf("diagnostic #%d of severity %s", i, q(string(d.Severity))))
		}
		if contract.IsBlank(d.Code) {
			return broken("a diagnostic has a code", "a non-blank code", fmt.Sprintf("diagnostic #%d with a blank code", i))
		}
	}
	if m.reference {
		// §12: the reference adapter keeps the newest 100, with the
		// messages §12 gives by code.
		if d := diffDiagnostics(m.diagnostics, after); d != "" {
			return broken("the reference adapter records exactly the diagnostics SPEC §9 and §12 name, with §12's messages, and keeps the newest 100",
				fmt.Sprintf("%d diagnostics ending %s", len(m.diagnostics), qs(diagnosticCodes(lastN(m.diagnostics, 3)))), op+": "+d)
		}
		return nil
	}
	if rule.none && !reflect.DeepEqual(nonNilDiags(before), nonNilDiags(after)) {
		return broken("an operation SPEC says records no diagnostic leaves the diagnostics as they were (§9: negotiation, enforcement refused for a closed adapter or a blank provider, a closed adapter's completion)",
			fmt.Sprintf("the %d diagnostics of before", len(before)), fmt.Sprintf("%s: %d diagnostics, codes %s", op, len(after), qs(diagnosticCodes(lastN(after, 3)))))
	}
	// latitude: SPEC says only "bounded" for adapters other than the
	// reference: once the list is full, which entries an adapter drops is
	// its choice. So a recorded code must be there after the operation,
	// and one more of it than before unless the list did not grow.
	for _, want := range rule.records {
		if !hasDiagnostic(after, want.Code, want.Severity) {
			return broken("an operation SPEC says records a diagnostic records it (§9)", fmt.Sprintf("a diagnostic %s (%s)", q(want.Code), want.Severity),
				fmt.Sprintf("%s: codes %s", op, qs(diagnosticCodes(lastN(after, 4)))))
		}
		if want.Capability != "" && !slices.ContainsFunc(after, func(d contract.Diagnostic) bool { return d.Code == want.Code && d.Capability == want.Capability }) {
			return broken("a diagnostic SPEC records for a capability names it (§11)", fmt.Sprintf("a diagnostic %s of capability %s", q(want.Code), want.Capability),
				fmt.Sprintf("%s: none names it", op))
		}
		if !rule.many && countCode(after, want.Code) <= countCode(before, want.Code) && len(after) > len(before) {
			return broken("an operation SPEC says records a diagnostic records it (§9)", fmt.Sprintf("one more %s than the %d before", q(want.Code), countCode(before, want.Code)),
				fmt.Sprintf("%s: still %d, though the list grew to %d", op, countCode(after, want.Code), len(after)))
		}
	}
	return nil
}

func nonNilDiags(ds []contract.Diagnostic) []contract.Diagnostic {
	if ds == nil {
		return []contract.Diagnostic{}
	}
	return ds
}

func lastN(ds []contract.Diagnostic, n int) []contract.Diagnostic { return ds[max(0, len(ds)-n):] }

func countCode(ds []contract.Diagnostic, code string) int {
	n := 0
	for _, d := range ds {
		if d.Code == code {
			n++
		}
	}
	return n
}

func hasDiagnostic(ds []contract.Diagnostic, code string, sev contract.Severity) bool {
	return slices.ContainsFunc(ds, func(d contract.Diagnostic) bool { return d.Code == code && d.Severity == sev })
}

// diffDiagnostics describes the first difference between two diagnostic
// lists, as metadata, or returns "".
func diffDiagnostics(want, got []contract.Diagnostic) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d diagnostics expected, %d got (last codes %s)", len(want), len(got), qs(diagnosticCodes(lastN(got, 3))))
	}
	for i := range want {
		w, g := want[i], got[i]
		switch {
		case w.Code != g.Code:
			return fmt.Sprintf("diagnostic #%d: code %s expected, %s got", i, q(w.Code), q(g.Code))
		case w.Severity != g.Severity:
			return fmt.Sprintf("diagnostic #%d (%s): severity %s expected, %s got", i, q(w.Code), w.Severity, q(string(g.Severity)))
		case w.Message != g.Message:
			return fmt.Sprintf("diagnostic #%d (%s): message of %d bytes expected (SPEC §12), %d bytes got", i, q(w.Code), len(w.Message), len(g.Message))
		case w.Capability != g.Capability:
			return fmt.Sprintf("diagnostic #%d (%s): capability %s expected, %s got", i, q(w.Code), q(string(w.Capability)), q(string(g.Capability)))
		}
	}
	return ""
}

// checkFallback checks a fallback result against SPEC §9's table.
//
// latitude: the reason text is free for adapters other than the
// reference (§9 gives the reference adapter's); it must be non-blank and
// metadata only — never a transport error's text.
func (m *model) checkFallback(op string, r contract.CompletionResult, want contract.FallbackCode, leaks []string) error {
	if r.Status != contract.StatusFallback || r.Code != want {
		return broken("a completion answers with the result SPEC §9 gives its case: checked in the order closed, invalid request, privacy, transport",
			"fallback "+q(string(want)), op+": "+describeModelResult(r))
	}
	if r.Retryable != fallbackRules[want].retryable {
		return broken("only a transport-failed fallback is retryable (§9)", fmt.Sprintf("retryable %t for %s", fallbackRules[want].retryable, want), fmt.Sprintf("%s: retryable %t", op, r.Retryable))
	}
	if contract.IsBlank(r.Reason) {
		return broken("a fallback carries a reason (§9)", "a non-blank reason", op+": a blank reason")
	}
	if m.reference && r.Reason != referenceReasons[want] {
		return broken("the reference adapter's fallback reasons are SPEC §9's", fmt.Sprintf("the reason of %d bytes for %s", len(referenceReasons[want]), want), fmt.Sprintf("%s: a reason of %d bytes", op, len(r.Reason)))
	}
	for _, l := range leaks {
		if l != "" && ContainsAny([]byte(r.Reason), l) {
			return broken("a fallback reason is metadata only: it never quotes a transport error, a payload or a credential", "a reason without them", op+": the reason quotes one")
		}
	}
	return nil
}

// describeModelResult shows a completion result as metadata.
func describeModelResult(r contract.CompletionResult) string {
	if r.Status == contract.StatusCompleted {
		return fmt.Sprintf("completed with %d output bytes, destination %s", len(r.Output), q(string(r.Privacy.Destination)))
	}
	return describeResult(r)
}

// compareCompletion compares what a completion did with the model's
// answer: the fallback of a call that must not reach the transport, the
// local KV path (§11), or the transport's request and the completed
// result.
func (r *modelRun) compareCompletion(in *modelInst, kv *kvCall, ans completionAnswer, seen completionSeen, desc string) (diagnosticsRule, string, error) {
	m := in.m
	code := ans.fallback
	if code != "" && ans.mayGiveUp && seen.res.Status == contract.StatusFallback && seen.res.Code == contract.FallbackTransportFailed {
		code = contract.FallbackTransportFailed
	}
	// kvRecords are the diagnostics a failed local KV path recorded
	// before the ordinary transport ran.
	var kvRecords []contract.Diagnostic
	switch {
	case code == "" && kv != nil && kv.elig.Eligible:
		served, d, err := r.kvPath(in, kv, ans, seen, desc)
		if err != nil || served {
			// latitude: as for a completed call (compareTransported).
			return diagnosticsRule{}, d, err
		}
		desc = d
		kvRecords = []contract.Diagnostic{{Code: contract.DiagnosticLocalKVReplayFailed, Severity: contract.SeverityWarning, Capability: contract.CapabilityLocalKVReuse}}
	case in.kv != nil:
		d, err := r.kvBypassed(in, code, kv, desc)
		if err != nil {
			return diagnosticsRule{}, "", err
		}
		desc = d
	}
	if code != "" {
		if len(seen.reqs) > 0 {
			return diagnosticsRule{}, "", broken("a completion that falls back before transport never reaches it (§9)", "no transport request", fmt.Sprintf("%s: %d request(s)", desc, len(seen.reqs)))
		}
		if err := m.checkFallback(desc, seen.res, code, modelLeaks); err != nil {
			return diagnosticsRule{}, "", err
		}
		return m.fellBack(code, kvRecords), desc + ", fallback " + string(code), nil
	}
	return compareTransported(m, ans, seen, kvRecords, desc)
}

// compareTransported compares a completion that reaches the transport: one
// request (none for a call that gave up), the one SPEC gives, and the
// transport-failed fallback or the completed result its answer makes.
func compareTransported(m *model, ans completionAnswer, seen completionSeen, kvRecords []contract.Diagnostic, desc string) (diagnosticsRule, string, error) {
	calls := 1
	if ans.mayGiveUp && len(seen.reqs) == 0 {
		calls = 0
	}
	if len(seen.reqs) != calls {
		return diagnosticsRule{}, "", broken("a completion calls the transport exactly once, also for a request identical to an earlier one", fmt.Sprintf("%d transport request(s)", calls),
			fmt.Sprintf("%s: %d", desc, len(seen.reqs)))
	}
	if want := ans.send; calls == 1 {
		got := seen.reqs[0]
		if got.Provider != want.Provider || got.Model != want.Model || got.Destination != want.Destination || !sameJSON(got.Payload, want.Payload) {
			return diagnosticsRule{}, "", broken("the transport receives the provider and model as given, the destination enforcement decided and the sanitised payload (§9)",
				fmt.Sprintf("provider of %d bytes, model of %d bytes, destination %s, the sanitised payload", len(want.Provider), len(want.Model), want.Destination),
				fmt.Sprintf("%s: provider equal %t, model equal %t, destination %s, payload equal %t", desc, got.Provider == want.Provider, got.Model == want.Model,
					q(string(got.Destination)), sameJSON(got.Payload, want.Payload)))
		}
	}
	if ans.fails {
		if err := m.checkFallback(desc, seen.res, contract.FallbackTransportFailed, modelLeaks); err != nil {
			return diagnosticsRule{}, "", err
		}
		return m.fellBack(contract.FallbackTransportFailed, kvRecords), desc + ", fallback transport-failed", nil
	}
	res := seen.res
	output := res.Output
	if output == nil {
		output = json.RawMessage("null")
	}
	switch {
	case res.Status != contract.StatusCompleted:
		return diagnosticsRule{}, "", broken("a completion whose transport answers is completed (§9)", "completed", desc+": "+describeModelResult(res))
	case !sameJSON(output, ans.output):
		return diagnosticsRule{}, "", broken("a completion passes the transport's output back unchanged, whatever JSON value it is (§9: output is runtime-owned)",
			"the transport's output", fmt.Sprintf("%s: %d output bytes, another value", desc, len(res.Output)))
	case res.Privacy != ans.summary:
		w := ans.summary
		return diagnosticsRule{}, "", broken("a completed result reports the privacy enforcement of its payload: provider as given, destination, changed and counts (§9)",
			fmt.Sprintf("destination %s, changed %t, blocked %d, redactions %d", w.Destination, w.Changed, w.BlockedBlocks, w.SecretRedactions),
			fmt.Sprintf("%s: provider equal %t, destination %s, changed %t, blocked %d, redactions %d", desc, res.Privacy.Provider == w.Provider,
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

// kvPath compares a completion the local KV path took (§11): served by the
// port — a hit or a full replay — it reaches no transport and carries the
// port's output and metadata; a failed path records local-kv-replay-failed
// and retries the full sanitised payload through the ordinary transport,
// which then answers as for any completion. It reports whether the port
// served the call.
func (r *modelRun) kvPath(in *modelInst, kv *kvCall, ans completionAnswer, seen completionSeen, desc string) (bool, string, error) {
	out, err := in.kv.use(in.m.reference, kv.elig, ans.send.Provider, ans.send.Model, ans.send.Payload, kv.prompt, desc)
	if err != nil {
		return false, "", err
	}
	if out == kvFailed {
		r.tally("failed replays")
		in.m.recordFor(contract.DiagnosticLocalKVReplayFailed, contract.SeverityWarning, contract.CapabilityLocalKVReuse)
		return false, desc + ", kv failed", nil
	}
	desc += ", kv " + map[kvOutcome]string{kvHit: "hit", kvReplayed: "full replay"}[out]
	r.tally(map[kvOutcome]string{kvHit: "hits", kvReplayed: "full replays"}[out])
	if len(seen.reqs) > 0 {
		return false, "", broken("a completion the local KV port served does not also go through the ordinary transport (§11)", "no transport request",
			fmt.Sprintf("%s: %d request(s)", desc, len(seen.reqs)))
	}
	if err := checkKVResult(seen.res, out, kv.prompt, ans.summary, desc); err != nil {
		return false, "", err
	}
	for i := range seen.res.Output {
		seen.res.Output[i] = ' '
	}
	return true, desc, nil
}

// kvBypassed checks a completion of an instance with a port that the local
// KV path does not take never reaches the port, and counts it as the
// model's counters do.
//
// latitude: see checkCounters; an ineligible prompt falls through quietly
// (§11).
func (r *modelRun) kvBypassed(in *modelInst, code contract.FallbackCode, kv *kvCall, desc string) (string, error) {
	switch {
	case code == "" && kv != nil:
		satAdd(&in.kv.want.Requests, 1)
		satAdd(&in.kv.want.BypassedRequests, 1)
	case code == "":
		in.kv.slack++
	}
	why := "a completion the local KV path does not take never reaches the port (§11: a remote destination, no prompt prepared, an ineligible request, a fallback before transport)"
	if err := in.kv.quiet(why, desc); err != nil {
		return "", err
	}
	if kv != nil && code == "" {
		desc += ", kv ineligible (" + string(kv.elig.Reason) + ")"
		r.tally("ineligible")
	}
	return desc, nil
}

// editDeclarations changes every declaration, to prove the list a copy.
func editDeclarations(ds []contract.CapabilityDeclaration) {
	for i := range ds {
		ds[i].ID, ds[i].Version, ds[i].Reason, ds[i].Supported = "edited", "edited", "edited", !ds[i].Supported
	}
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
