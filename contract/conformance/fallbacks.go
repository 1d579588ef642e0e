package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
)

// The ids of the checks of the fallback and diagnostics table (SPEC §9).
const (
	// CheckFallbacks checks each of the four fallbacks: code, retryable,
	// and the diagnostic it records with its severity.
	CheckFallbacks = "fallbacks"
	// CheckInvalidRequests sends a completion with every blank form of
	// provider and model.
	CheckInvalidRequests = "invalid-requests"
	// CheckClosedFirst checks that a closed adapter answers closed before
	// it looks at the request.
	CheckClosedFirst = "closed-first"
	// CheckRecordedDiagnostics checks which calls record a diagnostic and
	// which do not.
	CheckRecordedDiagnostics = "recorded-diagnostics"
)

// completionDiagnostics are the diagnostic codes of the fallback table: a
// completion records at most the one of its row.
var completionDiagnostics = []string{
	contract.DiagnosticCompletionRequestInvalid,
	contract.DiagnosticPrivacyEnforcementFailed,
	contract.DiagnosticCompletionTransportFailed,
	contract.DiagnosticAdapterClosed,
}

// fallbackRow is one row of the fallback table of SPEC §9.
type fallbackRow struct {
	code      contract.FallbackCode
	retryable bool
	// diagnostic is the code the fallback records ("" for none) and
	// severity its severity.
	diagnostic string
	severity   contract.Severity
}

var (
	rowAdapterClosed  = fallbackRow{code: contract.FallbackAdapterClosed}
	rowInvalidRequest = fallbackRow{contract.FallbackInvalidRequest, false, contract.DiagnosticCompletionRequestInvalid, contract.SeverityWarning}
	rowPrivacyFailed  = fallbackRow{contract.FallbackPrivacyEnforcementFail, false, contract.DiagnosticPrivacyEnforcementFailed, contract.SeverityError}
	rowTransport      = fallbackRow{contract.FallbackTransportFailed, true, contract.DiagnosticCompletionTransportFailed, contract.SeverityWarning}
)

// wantResult checks a completion's result against the row: status, code,
// retryable and a reason.
func (r fallbackRow) wantResult(rule, when string, c contract.CompletionResult) error {
	if c.Status != contract.StatusFallback || c.Code != r.code || c.Retryable != r.retryable {
		return broken(rule, fmt.Sprintf("fallback %q (retryable %t) %s", r.code, r.retryable, when), describeResult(c))
	}
	if contract.IsBlank(c.Reason) {
		return broken("a fallback explains itself: its reason is not blank", fmt.Sprintf("fallback %q with a reason %s", r.code, when), "a blank reason")
	}
	return nil
}

// wantRecorded checks the diagnostics a completion added against the row:
// exactly one of the row's code with the row's severity, and no other code
// of the fallback table (none at all for adapter-closed). Codes of the
// adapter's own may accompany a diagnostic the row records.
func (r fallbackRow) wantRecorded(when string, added []contract.Diagnostic) error {
	if r.diagnostic == "" {
		if len(added) > 0 {
			return broken(fmt.Sprintf("%s fallback records no diagnostic", article(string(r.code))), "no new diagnostic "+when,
				"new diagnostics "+describeDiagnostics(added))
		}
		return nil
	}
	rule := fmt.Sprintf("%s fallback records one %s diagnostic of severity %s", article(string(r.code)), r.diagnostic, r.severity)
	var mine []contract.Diagnostic
	for _, d := range added {
		switch {
		case d.Code == r.diagnostic:
			mine = append(mine, d)
		case slices.Contains(completionDiagnostics, d.Code):
			return broken(rule, fmt.Sprintf("one %q diagnostic %s, and no other code of the fallback table", r.diagnostic, when),
				"new diagnostics "+describeDiagnostics(added))
		}
	}
	if len(mine) != 1 || mine[0].Severity != r.severity {
		return broken(rule, fmt.Sprintf("one %q diagnostic of severity %q %s", r.diagnostic, r.severity, when),
			"new diagnostics "+describeDiagnostics(added))
	}
	return nil
}

// describeDiagnostics shows diagnostics by code and severity only.
func describeDiagnostics(ds []contract.Diagnostic) string {
	if len(ds) == 0 {
		return "none"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = q(d.Code) + " (" + q(string(d.Severity)) + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// addedDiagnostics returns the diagnostics in after that were not in
// before. Diagnostics are a bounded list, oldest first, which may have
// dropped its oldest entries: the longest tail of before that starts after
// is taken as the part both share.
func addedDiagnostics(before, after []contract.Diagnostic) []contract.Diagnostic {
	for k := 0; k <= len(before); k++ {
		rest := before[k:]
		if len(after) >= len(rest) && slices.Equal(after[:len(rest)], rest) {
			return after[len(rest):]
		}
	}
	return after
}

// recorder takes what a call adds to an adapter's diagnostics.
type recorder struct {
	a    contract.Adapter
	last []contract.Diagnostic
}

func newRecorder(a contract.Adapter) *recorder { return &recorder{a: a, last: a.Diagnostics()} }

// added returns the diagnostics recorded since the last call (or since
// newRecorder).
func (r *recorder) added() []contract.Diagnostic {
	now := r.a.Diagnostics()
	out := addedDiagnostics(r.last, now)
	r.last = now
	return out
}

// addedAny returns the diagnostics recorded since the last call (or since
// newRecorder), reading them as adding one for which has holds when any
// alignment of the list before and after allows it, and whether one did.
//
// latitude: SPEC says only "bounded" for adapters other than the
// reference: a full list whose entries are alike may drop its oldest as it
// adds one and look unchanged, so which entries were added cannot always
// be told; a call is taken to have recorded a diagnostic when some reading
// of the two lists says so.
func (r *recorder) addedAny(has func(contract.Diagnostic) bool) ([]contract.Diagnostic, bool) {
	now := r.a.Diagnostics()
	before := r.last
	r.last = now
	for k := 0; k <= len(before); k++ {
		rest := before[k:]
		if len(now) >= len(rest) && slices.Equal(now[:len(rest)], rest) && slices.ContainsFunc(now[len(rest):], has) {
			return now[len(rest):], true
		}
	}
	return addedDiagnostics(before, now), false
}

// quotes reports whether s holds a run of 12 or more bytes of text: a
// quotation, where a shorter run may be a common word.
func quotes(s, text string) bool {
	const run = 12
	for i := 0; i+run <= len(text); i++ {
		if strings.Contains(s, text[i:i+run]) {
			return true
		}
	}
	return false
}

// tokenPayload returns a chat payload whose content is a fresh random token
// under label, and the token. The token is payload text: no failure shows
// it.
func tokenPayload(label string) (any, string) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	tok := label + "-" + hex.EncodeToString(b[:])
	return chatPayload{Messages: []chatMessage{{Role: "user", Content: tok}}}, tok
}

func checkFallbacks(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, tr, fx := s.Adapter(), s.Transport(), s.Fixture()
	rec := newRecorder(a)
	valid := func(payload any) contract.CompletionRequest {
		return contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: payload}
	}
	noTransport := func(rule string, before int) error {
		if n := tr.Len() - before; n != 0 {
			return broken(rule, "no transport request", fmt.Sprintf("%d transport requests", n))
		}
		return nil
	}

	// invalid-request: a blank provider.
	before := tr.Len()
	req := valid(PlainPayload())
	req.Provider = ""
	c := a.Complete(ctx, req)
	if err := rowInvalidRequest.wantResult("a completion with a blank provider falls back with invalid-request, not retryable", "for an empty provider", c); err != nil {
		return err
	}
	if err := noTransport("an invalid request never reaches the transport", before); err != nil {
		return err
	}
	if err := rowInvalidRequest.wantRecorded("for an empty provider", rec.added()); err != nil {
		return err
	}

	// privacy-enforcement-failed: a payload that cannot be inspected.
	before = tr.Len()
	c = a.Complete(ctx, valid(HostilePayload()))
	if err := rowPrivacyFailed.wantResult("a payload that cannot be inspected falls back with privacy-enforcement-failed, not retryable", "for an uninspectable payload", c); err != nil {
		return err
	}
	if err := noTransport("the transport is not called when privacy enforcement fails", before); err != nil {
		return err
	}
	if err := rowPrivacyFailed.wantRecorded("for an uninspectable payload", rec.added()); err != nil {
		return err
	}

	// transport-failed: a transport error that echoes the request body and
	// a credential.
	before = tr.Len()
	payload, token := tokenPayload("fallback")
	tr.failNextEchoing()
	c = a.Complete(ctx, valid(payload))
	if tr.Disarm() {
		return broken("a valid completion calls the transport (here armed to fail)", "one failed transport call", "no transport call; result "+describeResult(c))
	}
	if err := rowTransport.wantResult("a transport error falls back with transport-failed, retryable", "for a failing transport", c); err != nil {
		return err
	}
	if err := noTransport("a failed transport call is not recorded as a request", before); err != nil {
		return err
	}
	if err := rowTransport.wantRecorded("for a failing transport", rec.added()); err != nil {
		return err
	}
	for i, d := range a.Diagnostics() {
		b, err := json.Marshal(d)
		if err != nil || ContainsProbe(b) || strings.Contains(string(b), token) {
			return broken("a transport error's text never reaches diagnostics: it may echo the payload or a credential",
				"no diagnostic holding the transport error's payload or credential",
				fmt.Sprintf("diagnostic #%d (code %q) holds one (not shown)", i, Redact(d.Code)))
		}
	}

	// adapter-closed: a valid request after shutdown.
	if err := a.Shutdown(ctx); err != nil {
		return failed("Shutdown must succeed", err)
	}
	rec.added()
	before = tr.Len()
	c = a.Complete(ctx, valid(PlainPayload()))
	if err := rowAdapterClosed.wantResult("after shutdown a completion falls back with adapter-closed, not retryable", "after shutdown", c); err != nil {
		return err
	}
	if err := noTransport("a closed adapter never reaches the transport", before); err != nil {
		return err
	}
	return rowAdapterClosed.wantRecorded("for a completion after shutdown", rec.added())
}

// blankForms are provider and model values that are blank: empty once
// trimmed as JavaScript trims (SPEC §7), which is not strings.TrimSpace.
var blankForms = []struct{ name, value string }{
	{"empty", ""},
	{"spaces", "   "},
	{"ASCII whitespace", "\t\n\v\f\r "},
	{"NBSP U+00A0", "\u00a0"},
	{"BOM U+FEFF", "\ufeff"},
	{"line separator U+2028", "\u2028"},
	{"paragraph separator U+2029", "\u2029"},
	{"ideographic space U+3000", "\u3000"},
	{"mixed", " \u00a0\ufeff\u2028\t"},
}

// nonBlankModels are models JavaScript's trim keeps, although Go's
// strings.TrimSpace empties the first: a completion naming them is valid.
var nonBlankModels = []struct{ name, value string }{
	{"NEL U+0085", "\u0085"},
	{"zero-width space U+200B", "\u200b"},
}

func checkInvalidRequests(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, tr, fx := s.Adapter(), s.Transport(), s.Fixture()
	rec := newRecorder(a)
	const rule = "a completion whose provider or model is blank (empty after JavaScript's trim) falls back with invalid-request without a transport call and records completion-request-invalid"
	try := func(field, name, provider, model string) error {
		when := fmt.Sprintf("for %s %s", article(name), field)
		before := tr.Len()
		c := a.Complete(ctx, contract.CompletionRequest{Provider: provider, Model: model, Payload: PlainPayload()})
		if c.Status != contract.StatusFallback || c.Code != contract.FallbackInvalidRequest {
			return broken(rule, fmt.Sprintf("fallback %q %s", contract.FallbackInvalidRequest, when), describeResult(c))
		}
		if quotes(c.Reason, fallbackText) {
			return broken("a fallback reason is metadata only: it never quotes the payload (§4, §9)", "a reason without payload text "+when, "a reason quoting some")
		}
		if n := tr.Len() - before; n != 0 {
			return broken(rule, "no transport request "+when, fmt.Sprintf("%d transport requests", n))
		}
		added, ok := rec.addedAny(func(d contract.Diagnostic) bool { return d.Code == contract.DiagnosticCompletionRequestInvalid })
		if !ok {
			return broken(rule, fmt.Sprintf("a %q diagnostic %s", contract.DiagnosticCompletionRequestInvalid, when), "new diagnostics "+describeDiagnostics(added))
		}
		return nil
	}
	for _, f := range blankForms {
		if err := try("provider", f.name, f.value, fx.Model.ID); err != nil {
			return err
		}
		if err := try("model", f.name, fx.Model.Provider, f.value); err != nil {
			return err
		}
	}
	if err := try("provider and model", "empty", "", ""); err != nil {
		return err
	}
	for _, f := range nonBlankModels {
		before := tr.Len()
		c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: f.value, Payload: PlainPayload()})
		if c.Status != contract.StatusCompleted || tr.Len()-before != 1 {
			return broken("blank means empty after JavaScript's trim: a model that trim keeps is not blank, and its completion goes through",
				fmt.Sprintf("status \"completed\" after one transport request, for a model of one %s", f.name),
				fmt.Sprintf("%s after %d transport requests", describeResult(c), tr.Len()-before))
		}
	}
	e.note = fmt.Sprintf("%d blank forms of provider and model, %d non-blank models", 2*len(blankForms)+1, len(nonBlankModels))
	return nil
}

func checkClosedFirst(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, tr, fx := s.Adapter(), s.Transport(), s.Fixture()
	if err := a.Shutdown(ctx); err != nil {
		return failed("Shutdown must succeed", err)
	}
	rec := newRecorder(a)
	const rule = "after shutdown, closed is checked first: every completion falls back with adapter-closed, records nothing and never reaches the transport"
	completions := []struct {
		name string
		req  contract.CompletionRequest
		arm  bool
	}{
		{"a blank provider", contract.CompletionRequest{Provider: "", Model: fx.Model.ID, Payload: PlainPayload()}, false},
		{"a blank model", contract.CompletionRequest{Provider: fx.Model.Provider, Model: "\u00a0", Payload: PlainPayload()}, false},
		{"an uninspectable payload", contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: HostilePayload()}, false},
		{"a failing transport", contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PlainPayload()}, true},
	}
	for _, k := range completions {
		when := "for a completion with " + k.name + " after shutdown"
		before := tr.Len()
		if k.arm {
			tr.FailNext()
		}
		c := a.Complete(ctx, k.req)
		called := k.arm && !tr.Disarm()
		if err := rowAdapterClosed.wantResult(rule, when, c); err != nil {
			return err
		}
		if n := tr.Len() - before; n != 0 || called {
			return broken(rule, "no transport call "+when, fmt.Sprintf("%d transport calls", max(n, 1)))
		}
		if added := rec.added(); len(added) > 0 {
			return broken(rule, "no new diagnostic "+when, "new diagnostics "+describeDiagnostics(added))
		}
	}
	const privacyRule = "after shutdown, EnforcePrivacy returns an error without recording a diagnostic, whatever the request"
	privacy := []struct {
		name string
		req  contract.PrivacyRequest
	}{
		{"a blank provider", contract.PrivacyRequest{Provider: " ", Payload: PlainPayload()}},
		{"an uninspectable payload", contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: HostilePayload()}},
	}
	for _, k := range privacy {
		when := "for EnforcePrivacy with " + k.name + " after shutdown"
		if _, err := a.EnforcePrivacy(ctx, k.req); err == nil {
			return broken(privacyRule, "an error "+when, "no error")
		}
		if added := rec.added(); len(added) > 0 {
			return broken(privacyRule, "no new diagnostic "+when, "new diagnostics "+describeDiagnostics(added))
		}
	}
	return nil
}

// negotiationCodes are the diagnostic codes of a negotiation.
var negotiationCodes = []string{contract.CodeCapabilityUnsupported, contract.CodeCapabilityDeclarationInvalid}

func checkRecordedDiagnostics(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	rec := newRecorder(a)
	// Negotiation: every request set, each asking for capabilities outside
	// the registry too, so every negotiation returns diagnostics.
	returned := 0
	for _, set := range requestSets() {
		set = append(slices.Clone(set), contract.CapabilityRequest{ID: "not-a-registry-capability"})
		returned += len(a.NegotiateCapabilities(set).Diagnostics)
	}
	if added := rec.added(); slices.ContainsFunc(added, func(d contract.Diagnostic) bool {
		return slices.Contains(negotiationCodes, d.Code) || d.Capability != ""
	}) {
		return broken("negotiation diagnostics are returned in the negotiation only, never recorded in Diagnostics()",
			fmt.Sprintf("no negotiation diagnostic in Diagnostics() after negotiations that returned %d", returned),
			"new diagnostics "+describeDiagnostics(added))
	}
	// A blank provider is refused before sanitisation: an error, no diagnostic.
	for _, f := range blankForms {
		for _, p := range []any{PlainPayload(), HostilePayload()} {
			if _, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: f.value, Payload: p}); err == nil {
				return broken("EnforcePrivacy with a blank provider returns an error", fmt.Sprintf("an error for %s provider", article(f.name)), "no error")
			}
			if added := rec.added(); len(added) > 0 {
				return broken("EnforcePrivacy with a blank provider returns an error without recording a diagnostic",
					fmt.Sprintf("no new diagnostic for %s provider", article(f.name)), "new diagnostics "+describeDiagnostics(added))
			}
		}
	}
	// A failure inside sanitisation records privacy-enforcement-failed.
	if _, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: HostilePayload()}); err == nil {
		return broken("EnforcePrivacy fails closed on a payload it cannot inspect", "an error", "no error")
	}
	added := rec.added()
	n := 0
	for _, d := range added {
		if d.Code == contract.DiagnosticPrivacyEnforcementFailed && d.Severity == contract.SeverityError {
			n++
		}
	}
	if n != 1 {
		return broken("a failure inside sanitisation records one privacy-enforcement-failed diagnostic of severity error",
			fmt.Sprintf("one %q diagnostic (%q) after EnforcePrivacy failed on an uninspectable payload", contract.DiagnosticPrivacyEnforcementFailed, contract.SeverityError),
			"new diagnostics "+describeDiagnostics(added))
	}
	return nil
}

func fallbackChecks() []Check {
	return []Check{
		{ID: CheckFallbacks, Kind: KindExtended, run: checkFallbacks,
			Summary: "each of the four fallbacks has its code, retryable flag and recorded diagnostic of its severity; a transport error's text never reaches diagnostics",
			Rule:    "invalid-request, privacy-enforcement-failed, transport-failed and adapter-closed fallbacks are as SPEC §9 tabulates them: retryable only transport-failed, recording completion-request-invalid (warning), privacy-enforcement-failed (error), completion-transport-failed (warning) and nothing; transport error text never reaches diagnostics"},
		{ID: CheckInvalidRequests, Kind: KindExtended, run: checkInvalidRequests,
			Summary: "every blank form of provider and model, JavaScript whitespace included, falls back invalid-request without a transport call",
			Rule:    "a provider or model that is blank after JavaScript's trim makes an invalid-request fallback that records completion-request-invalid and never reaches the transport; any other is not blank"},
		{ID: CheckClosedFirst, Kind: KindExtended, run: checkClosedFirst,
			Summary: "after shutdown, invalid, uninspectable and transport-failing requests all fall back adapter-closed and record nothing",
			Rule:    "closed is checked first: after shutdown every completion falls back with adapter-closed, never reaches the transport and records no diagnostic; EnforcePrivacy errors without recording one"},
		{ID: CheckRecordedDiagnostics, Kind: KindExtended, run: checkRecordedDiagnostics,
			Summary: "negotiation and blank-provider EnforcePrivacy record nothing; a sanitisation failure records privacy-enforcement-failed",
			Rule:    "negotiation diagnostics are not recorded in Diagnostics(); EnforcePrivacy with a blank provider errors without a diagnostic; only a failure inside sanitisation records privacy-enforcement-failed (error)"},
	}
}
