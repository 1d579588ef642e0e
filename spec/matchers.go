package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// Gomega matchers for an adapter author's own tests, built on the checks of
// the conformance catalogue. Like the suite, their failure messages are
// metadata only: codes, counts, member paths and sizes — never a payload,
// history text or a probe.

// BeValidSnapshot succeeds for a contract.HistorySnapshot (or a pointer to
// one) that contract.ValidateHistorySnapshot finds no issue in. Its failure
// lists the issue codes.
func BeValidSnapshot() types.GomegaMatcher { return &validSnapshot{} }

type validSnapshot struct{ codes []string }

func (m *validSnapshot) Match(actual any) (bool, error) {
	snap, err := snapshotOf(actual, "BeValidSnapshot")
	if err != nil {
		return false, err
	}
	m.codes = nil
	for _, is := range contract.ValidateHistorySnapshot(&snap) {
		m.codes = append(m.codes, is.Code)
	}
	return len(m.codes) == 0, nil
}

func (m *validSnapshot) FailureMessage(any) string {
	return fmt.Sprintf("Expected a valid history snapshot, but validation found %d issue(s): %s", len(m.codes), redactedList(m.codes))
}

func (m *validSnapshot) NegatedFailureMessage(any) string {
	return "Expected an invalid history snapshot, but validation found no issue"
}

// HoldHistory succeeds for a snapshot that is the faithful projection of the
// canonical messages: every message member by member, in order, no
// validation issue, exactly the derived tool atomic groups (see
// conformance.CompareSnapshot). Its failure names the first differing
// member path with sizes and kinds.
func HoldHistory(messages []contract.Message) types.GomegaMatcher {
	return &holdHistory{messages: messages}
}

type holdHistory struct {
	messages []contract.Message
	failure  *conformance.Failure
}

func (m *holdHistory) Match(actual any) (bool, error) {
	snap, err := snapshotOf(actual, "HoldHistory")
	if err != nil {
		return false, err
	}
	m.failure = nil
	if err := conformance.CompareSnapshot(snap, m.messages); err != nil {
		if !errors.As(err, &m.failure) {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

func (m *holdHistory) FailureMessage(any) string {
	f := m.failure
	return fmt.Sprintf("Expected the snapshot to hold the %d canonical messages\nrule:     %s\nexpected: %s\nactual:   %s", len(m.messages), f.Rule, f.Expected, f.Actual)
}

func (m *holdHistory) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected the snapshot not to hold the %d canonical messages, but it does", len(m.messages))
}

// FallBackWith succeeds for a contract.CompletionResult that is a fallback
// with the given code and retryable flag.
func FallBackWith(code contract.FallbackCode, retryable bool) types.GomegaMatcher {
	return &fallBack{code: code, retryable: retryable}
}

type fallBack struct {
	code      contract.FallbackCode
	retryable bool
	got       string
}

func (m *fallBack) Match(actual any) (bool, error) {
	r, ok := actual.(contract.CompletionResult)
	if p, isPtr := actual.(*contract.CompletionResult); isPtr && p != nil {
		r, ok = *p, true
	}
	if !ok {
		return false, fmt.Errorf("FallBackWith expects a contract.CompletionResult, got %T", actual)
	}
	if r.Status == contract.StatusFallback {
		m.got = fmt.Sprintf("fallback %q (retryable %t)", conformance.Redact(string(r.Code)), r.Retryable)
	} else {
		m.got = fmt.Sprintf("status %q", conformance.Redact(string(r.Status)))
	}
	return r.Status == contract.StatusFallback && r.Code == m.code && r.Retryable == m.retryable, nil
}

func (m *fallBack) FailureMessage(any) string {
	return fmt.Sprintf("Expected fallback %q (retryable %t), got %s", m.code, m.retryable, m.got)
}

func (m *fallBack) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected anything but fallback %q (retryable %t), got it", m.code, m.retryable)
}

// HaveDiagnostic succeeds for a []contract.Diagnostic, or a
// contract.Adapter whose Diagnostics() hold, a diagnostic with the given
// code and severity.
func HaveDiagnostic(code string, severity contract.Severity) types.GomegaMatcher {
	return &haveDiagnostic{code: code, severity: severity}
}

type haveDiagnostic struct {
	code     string
	severity contract.Severity
	got      []string
}

func (m *haveDiagnostic) Match(actual any) (bool, error) {
	var ds []contract.Diagnostic
	switch a := actual.(type) {
	case []contract.Diagnostic:
		ds = a
	case contract.Adapter:
		ds = a.Diagnostics()
	default:
		return false, fmt.Errorf("HaveDiagnostic expects []contract.Diagnostic or a contract.Adapter, got %T", actual)
	}
	m.got = nil
	found := false
	for _, d := range ds {
		m.got = append(m.got, d.Code+"("+string(d.Severity)+")")
		found = found || d.Code == m.code && d.Severity == m.severity
	}
	return found, nil
}

func (m *haveDiagnostic) FailureMessage(any) string {
	return fmt.Sprintf("Expected a diagnostic %q (%s) among %d: %s", m.code, m.severity, len(m.got), redactedList(m.got))
}

func (m *haveDiagnostic) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected no diagnostic %q (%s), found one", m.code, m.severity)
}

// BeMetadataOnly succeeds when none of the probes appears in actual: a
// string, []byte, error (its text), or any value encoding/json can encode
// (diagnostics, completion results, snapshots, reports) — verbatim or inside
// any JSON string or member name once decoded. Its failure says which probe
// (by position) and never shows it.
func BeMetadataOnly(probes ...string) types.GomegaMatcher { return &metadataOnly{probes: probes} }

type metadataOnly struct {
	probes []string
	found  int
}

func (m *metadataOnly) Match(actual any) (bool, error) {
	var texts []string
	switch a := actual.(type) {
	case nil:
		return true, nil
	case string:
		texts = []string{a}
	case []byte:
		texts = []string{string(a)}
	case error:
		texts = []string{a.Error()}
	default:
		if rv := reflect.ValueOf(actual); rv.Kind() == reflect.Slice && rv.Type().Elem().Implements(reflect.TypeFor[error]()) {
			for i := range rv.Len() {
				if e, ok := rv.Index(i).Interface().(error); ok && e != nil {
					texts = append(texts, e.Error())
				}
			}
			break
		}
		b, err := json.Marshal(actual)
		if err != nil {
			return false, fmt.Errorf("BeMetadataOnly cannot encode a %T: %s", actual, conformance.Redact(err.Error()))
		}
		texts = []string{string(b)}
	}
	for i, p := range m.probes {
		for _, t := range texts {
			if conformance.ContainsAny([]byte(t), p) {
				m.found = i
				return false, nil
			}
		}
	}
	return true, nil
}

func (m *metadataOnly) FailureMessage(any) string {
	return fmt.Sprintf("Expected metadata only, but it holds probe #%d of %d (not shown)", m.found+1, len(m.probes))
}

func (m *metadataOnly) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected one of the %d probes to appear, but none does", len(m.probes))
}

// snapshotOf accepts a snapshot or a pointer to one.
func snapshotOf(actual any, matcher string) (contract.HistorySnapshot, error) {
	switch s := actual.(type) {
	case contract.HistorySnapshot:
		return s, nil
	case *contract.HistorySnapshot:
		if s != nil {
			return *s, nil
		}
	}
	return contract.HistorySnapshot{}, fmt.Errorf("%s expects a contract.HistorySnapshot, got %T", matcher, actual)
}

// redactedList shows adapter-given codes, each redacted.
func redactedList(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", conformance.Redact(s))
	}
	return "[" + strings.Join(out, ", ") + "]"
}
