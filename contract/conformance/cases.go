package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
)

func q(s string) string { return fmt.Sprintf("%q", scrub(s)) }

func qs(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = q(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func checkIdentity(ctx context.Context, s *Session) error {
	a, fx := s.Adapter(), s.fixture
	id := a.Identity()
	if id.ContractVersion != contract.ContractVersion {
		return broken("Identity().ContractVersion must name the contract the adapter implements", q(contract.ContractVersion), q(id.ContractVersion))
	}
	if id.RuntimeID != fx.RuntimeID {
		return broken("Identity().RuntimeID must be the runtime id the factory was given", q(fx.RuntimeID), q(id.RuntimeID))
	}
	if contract.IsBlank(id.AdapterName) {
		return broken("Identity().AdapterName must not be blank", "a non-blank name", q(id.AdapterName))
	}
	if contract.IsBlank(id.AdapterVersion) {
		return broken("Identity().AdapterVersion must not be blank", "a non-blank version", q(id.AdapterVersion))
	}
	root, err := a.TrustedProjectRoot(ctx)
	if err != nil {
		return failed("TrustedProjectRoot must return the trusted root of an open adapter", err)
	}
	if err := checkCanonicalRoot(root); err != nil {
		return err
	}
	if root != s.instance.ExpectedProjectRoot {
		return broken("TrustedProjectRoot must return the canonical project root the factory expects", q(s.instance.ExpectedProjectRoot), q(root))
	}
	m, err := a.CurrentModel(ctx)
	if err != nil {
		return failed("CurrentModel must return the selected model of an open adapter", err)
	}
	if m == nil {
		return broken("CurrentModel must return the fixture's model", "the model "+q(fx.Model.ID), "no model")
	}
	if d := diffModel(fx.Model, *m); d != "" {
		return broken("CurrentModel must return the fixture's model descriptor, every member of it", "the fixture's model", "a different model: "+d)
	}
	return nil
}

// checkCanonicalRoot checks, independently of what the factory expects,
// that root is canonical: absolute, clean and symlink-resolved.
func checkCanonicalRoot(root string) error {
	const rule = "TrustedProjectRoot returns the canonical project root: absolute, clean and with every symlink resolved"
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return broken(rule, "an absolute, clean path", q(root))
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return broken(rule, "an existing folder", q(root)+" does not resolve: "+scrub(err.Error()))
	}
	if resolved != root {
		return broken(rule, "the resolved path "+q(resolved), q(root))
	}
	return nil
}

// diffModel describes the first member in which got differs from want, or
// returns "".
func diffModel(want, got contract.ModelDescriptor) string {
	show := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return "(not JSON)"
		}
		return scrub(string(b))
	}
	for _, m := range []struct {
		name      string
		want, got any
	}{
		{"provider", want.Provider, got.Provider},
		{"id", want.ID, got.ID},
		{"contextWindow", want.ContextWindow, got.ContextWindow},
		{"maxTokens", want.MaxTokens, got.MaxTokens},
		{"reasoning", want.Reasoning, got.Reasoning},
		{"input", want.Input, got.Input},
		{"cost", want.Cost, got.Cost},
	} {
		if w, g := show(m.want), show(m.got); w != g {
			return fmt.Sprintf("%s %s expected, %s got", m.name, w, g)
		}
	}
	return ""
}

func checkCapabilities(_ context.Context, s *Session) error {
	ids := contract.CapabilityIDs()
	reqs := make([]contract.CapabilityRequest, len(ids))
	for i, id := range ids {
		reqs[i] = contract.CapabilityRequest{ID: id}
	}
	n := s.Adapter().NegotiateCapabilities(reqs)
	if n.ContractVersion != contract.ContractVersion {
		return broken("a negotiation must name the contract version", q(contract.ContractVersion), q(n.ContractVersion))
	}
	if len(n.Statuses) != len(ids) {
		got := make([]string, len(n.Statuses))
		for i, st := range n.Statuses {
			got[i] = st.ID
		}
		return broken("a negotiation must report one status per registry capability", fmt.Sprintf("%d statuses %s", len(ids), qs(ids)), fmt.Sprintf("%d statuses %s", len(got), qs(got)))
	}
	for _, st := range n.Statuses {
		if st.Supported {
			if contract.IsBlank(st.Version) {
				return broken("a supported capability must carry its version", "capability "+q(st.ID)+" with a version", "capability "+q(st.ID)+" supported without a version")
			}
			continue
		}
		if contract.IsBlank(st.Reason) {
			return broken("an unsupported capability must carry a reason", "capability "+q(st.ID)+" with a reason", "capability "+q(st.ID)+" unsupported without a reason")
		}
		named := slices.ContainsFunc(n.Diagnostics, func(d contract.Diagnostic) bool { return d.Capability == st.ID })
		if !named {
			codes := make([]string, len(n.Diagnostics))
			for i, d := range n.Diagnostics {
				codes[i] = d.Code + "(" + d.Capability + ")"
			}
			return broken("a requested capability that is not supported must have a negotiation diagnostic naming it",
				"a diagnostic for "+q(st.ID), "diagnostics "+qs(codes))
		}
	}
	return nil
}

func messageIDs(ms []contract.Message) []string {
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].ID
	}
	return ids
}

func issueCodes(is []contract.ValidationIssue) []string {
	codes := make([]string, len(is))
	for i, x := range is {
		codes[i] = x.Code
	}
	return codes
}

// describeGroups shows groups as metadata: ids, members, calls, completeness.
func describeGroups(gs []contract.ToolAtomicGroup) string {
	if len(gs) == 0 {
		return "no groups"
	}
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = fmt.Sprintf("{id %s, messages %s, calls %s, complete %t}", q(g.ID), qs(g.MessageIDs), qs(g.ToolCallIDs), g.Complete)
	}
	return strings.Join(parts, ", ")
}

// checkSnapshot checks that snap is a faithful projection of the given
// canonical history: runtime and session ids, project root, the messages
// member by member in order, an empty validation and exactly the groups
// BuildToolAtomicGroups derives, compared as a set. It returns a
// *brokenRule, or nil.
func checkSnapshot(snap *contract.HistorySnapshot, runtimeID, sessionID, root string, messages []contract.Message) error {
	if snap.RuntimeID != runtimeID {
		return broken("the snapshot's runtimeId must be the runtime id the factory was given (the fixture's)", q(runtimeID), q(snap.RuntimeID))
	}
	if snap.SessionID != sessionID {
		return broken("the snapshot's sessionId must be the fixture's session", q(sessionID), q(snap.SessionID))
	}
	if snap.ProjectRoot != root {
		return broken("the snapshot's projectRoot must be the trusted project root", q(root), q(snap.ProjectRoot))
	}
	if d, kind := describeMessages(messages, snap.Messages); d != "" {
		return brokenKind(prefixKinds("snapshot ", kind), "the snapshot holds the canonical messages — all of them, in history order, every member as the runtime holds it, unknown members included",
			"the canonical messages", d)
	}
	if is := contract.ValidateHistorySnapshot(snap); len(is) > 0 {
		return brokenKind("snapshot issue "+string(is[0].Code), "the snapshot must validate (ValidateHistorySnapshot returns no issue)", "no issue", "issues "+qs(issueCodes(is)))
	}
	if d := diffGroups(contract.BuildToolAtomicGroups(messages), snap.ToolAtomicGroups); d != "" {
		return brokenKind("snapshot groups", "the snapshot's tool atomic groups are exactly BuildToolAtomicGroups of its messages (a set keyed by group id; the order inside a group is fixed)",
			"the derived groups", d)
	}
	return nil
}

func checkCanonicalHistory(ctx context.Context, s *Session) error {
	if err := s.judgeHeld(); err != nil {
		return err
	}
	snap, err := s.Adapter().SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history", err)
	}
	if err := checkSnapshot(&snap, s.fixture.RuntimeID, s.fixture.SessionID, s.instance.ExpectedProjectRoot, s.fixture.Messages); err != nil {
		return err
	}
	g := snap.ToolAtomicGroups
	if len(g) != 1 || !g[0].Complete || !slices.Equal(g[0].ToolCallIDs, []string{FixtureToolCallID}) {
		return broken("the fixture's tool call and result must form exactly one complete atomic group",
			fmt.Sprintf("one complete group with calls [%q]", FixtureToolCallID), describeGroups(g))
	}
	s.baseline = &snap
	return nil
}

func checkRebuild(ctx context.Context, s *Session) error {
	a := s.Adapter()
	base := s.baseline
	if base == nil {
		snap, err := a.SnapshotHistory(ctx)
		if err != nil {
			return failed("SnapshotHistory must project a valid canonical history", err)
		}
		base = &snap
	}
	r, err := a.RebuildDerivedState(ctx)
	if err != nil {
		return failed("RebuildDerivedState must rebuild from a valid canonical history", err)
	}
	if is := contract.ValidateHistorySnapshot(&r); len(is) > 0 {
		return broken("the rebuilt snapshot must validate", "no issue", "issues "+qs(issueCodes(is)))
	}
	switch {
	case r.Revision != base.Revision:
		return broken("rebuilding must not change the revision of an unchanged canonical history", "revision "+q(base.Revision), "revision "+q(r.Revision))
	case r.SessionID != base.SessionID:
		return broken("rebuilding must keep the session", q(base.SessionID), q(r.SessionID))
	case r.ProjectRoot != base.ProjectRoot:
		return broken("rebuilding must keep the trusted project root", q(base.ProjectRoot), q(r.ProjectRoot))
	}
	if d := diffMessages(base.Messages, r.Messages); d != "" {
		return broken("rebuilding must reproduce the canonical messages, every member of them, in order", "the snapshot's messages", d)
	}
	if d := diffGroups(base.ToolAtomicGroups, r.ToolAtomicGroups); d != "" {
		return broken("rebuilding must reproduce the tool atomic groups", "the snapshot's groups", d)
	}
	return nil
}

func describeResult(r contract.CompletionResult) string {
	if r.Status == contract.StatusFallback {
		return fmt.Sprintf("fallback %s (retryable %t)", q(string(r.Code)), r.Retryable)
	}
	return "status " + q(string(r.Status))
}

func checkPrivacy(ctx context.Context, s *Session) error {
	a, tr, fx := s.Adapter(), s.transport, s.fixture
	provider := fx.Model.Provider
	res, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: provider, Payload: PrivacyPayload()})
	if err != nil {
		return failed("EnforcePrivacy must sanitise an inspectable payload", err)
	}
	if res.Destination != contract.DestinationRemote {
		return broken("the fixture's provider is remote: enforcement must say so", q(string(contract.DestinationRemote)), q(string(res.Destination)))
	}
	if !res.Changed {
		return broken("enforcement must report that it changed a payload holding local-only content and a secret", "changed true", "changed false")
	}
	if ContainsProbe(res.Payload) {
		return broken("a sanitised remote payload must hold neither local-only content nor secrets", "no probe in the sanitised payload", "a probe in the sanitised payload (not shown)")
	}
	before := tr.Len()
	c := a.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: fx.Model.ID, Payload: PrivacyPayload()})
	if c.Status != contract.StatusCompleted {
		return broken("a completion with a sanitisable payload and a working transport must complete", "status \"completed\"", describeResult(c))
	}
	if n := tr.Len() - before; n != 1 {
		return broken("a completion must call the transport exactly once", "1 transport request", fmt.Sprintf("%d transport requests", n))
	}
	sent := tr.Requests()[before]
	if sent.Destination != contract.DestinationRemote {
		return broken("the transport must be told the destination privacy decided", q(string(contract.DestinationRemote)), q(string(sent.Destination)))
	}
	if ContainsProbe(sent.Payload) {
		return broken("the transport must receive the sanitised payload only", "no probe in the transported payload", "a probe in the transported payload (not shown)")
	}
	before = tr.Len()
	h := a.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: fx.Model.ID, Payload: HostilePayload()})
	if h.Status != contract.StatusFallback || h.Code != contract.FallbackPrivacyEnforcementFail {
		return broken("a payload that cannot be inspected must fail closed with a privacy-enforcement-failed fallback",
			fmt.Sprintf("fallback %q", contract.FallbackPrivacyEnforcementFail), describeResult(h))
	}
	if n := tr.Len() - before; n != 0 {
		return broken("the transport must not be called when privacy enforcement fails", "0 transport requests", fmt.Sprintf("%d transport requests", n))
	}
	return nil
}

func diagnosticCodes(ds []contract.Diagnostic) []string {
	codes := make([]string, len(ds))
	for i, d := range ds {
		codes[i] = d.Code
	}
	return codes
}

func checkFallback(ctx context.Context, s *Session) error {
	a, tr, fx := s.Adapter(), s.transport, s.fixture
	before := tr.Len()
	tr.FailNext()
	c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PlainPayload()})
	if tr.Disarm() {
		return broken("a completion must call the transport (here armed to fail)", "one failed transport call", "no transport call; result "+describeResult(c))
	}
	if c.Status != contract.StatusFallback || c.Code != contract.FallbackTransportFailed || !c.Retryable {
		return broken("a transport failure must become a retryable transport-failed fallback",
			fmt.Sprintf("fallback %q (retryable true)", contract.FallbackTransportFailed), describeResult(c))
	}
	if n := tr.Len() - before; n != 0 {
		return broken("a failed transport call must not be recorded as a request", "0 recorded transport requests", fmt.Sprintf("%d recorded transport requests", n))
	}
	if d := a.Diagnostics(); !slices.ContainsFunc(d, func(d contract.Diagnostic) bool { return d.Code == contract.DiagnosticCompletionTransportFailed }) {
		return broken("a transport failure must record a completion-transport-failed diagnostic", "a \"completion-transport-failed\" diagnostic", "diagnostics "+qs(diagnosticCodes(d)))
	}
	return nil
}

func checkLifecycle(ctx context.Context, s *Session) error {
	a, fx := s.Adapter(), s.fixture
	if err := a.Shutdown(ctx); err != nil {
		return failed("Shutdown must succeed", err)
	}
	if err := a.Shutdown(ctx); err != nil {
		return failed("Shutdown must be idempotent: a second call must not fail", err)
	}
	before := s.transport.Len()
	c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PlainPayload()})
	if c.Status != contract.StatusFallback || c.Code != contract.FallbackAdapterClosed {
		return broken("after shutdown, a completion must fall back with adapter-closed", fmt.Sprintf("fallback %q", contract.FallbackAdapterClosed), describeResult(c))
	}
	if n := s.transport.Len() - before; n != 0 {
		return broken("after shutdown, a completion must not reach the transport", "0 transport requests", fmt.Sprintf("%d transport requests", n))
	}
	if _, err := a.SnapshotHistory(ctx); err == nil {
		return broken("after shutdown, SnapshotHistory must return an error", "an error", "a snapshot")
	}
	if d := a.Diagnostics(); !slices.ContainsFunc(d, func(d contract.Diagnostic) bool { return d.Code == contract.DiagnosticAdapterClosed }) {
		return broken("shutdown must record an adapter-closed diagnostic", "an \"adapter-closed\" diagnostic", "diagnostics "+qs(diagnosticCodes(d)))
	}
	return nil
}
