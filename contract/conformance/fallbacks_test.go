package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

func diags(codes ...string) []contract.Diagnostic {
	out := make([]contract.Diagnostic, len(codes))
	for i, c := range codes {
		out[i] = contract.Diagnostic{Code: c, Severity: contract.SeverityWarning, Message: "m " + c}
	}
	return out
}

func TestAddedDiagnosticsFollowsABoundedList(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after []string
		want          []string
	}{
		{"nothing new", []string{"a", "b"}, []string{"a", "b"}, []string{}},
		{"appended", []string{"a", "b"}, []string{"a", "b", "c"}, []string{"c"}},
		{"from empty", nil, []string{"a"}, []string{"a"}},
		{"oldest dropped", []string{"a", "b", "c"}, []string{"b", "c", "d"}, []string{"d"}},
		{"all dropped", []string{"a", "b"}, []string{"c", "d"}, []string{"c", "d"}},
		{"two added, two dropped", []string{"a", "b", "c"}, []string{"c", "d", "e"}, []string{"d", "e"}},
	} {
		got := diagnosticCodes(addedDiagnostics(diags(tc.before...), diags(tc.after...)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: added %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBlankFormsAreJavaScriptBlank(t *testing.T) {
	goDisagrees := false
	for _, f := range blankForms {
		if !contract.IsBlank(f.value) {
			t.Errorf("blank form %s is not blank", f.name)
		}
		goDisagrees = goDisagrees || strings.TrimSpace(f.value) != ""
	}
	for _, f := range nonBlankModels {
		if contract.IsBlank(f.value) {
			t.Errorf("non-blank model %s is blank", f.name)
		}
	}
	// The forms tell JavaScript's trim from Go's both ways.
	if !goDisagrees || strings.TrimSpace(nonBlankModels[0].value) != "" {
		t.Error("the forms do not tell JavaScript's trim from strings.TrimSpace")
	}
}

func TestEchoingTransportFailureQuotesThePayloadOnce(t *testing.T) {
	tr := NewRecordingTransport()
	req := contract.TransportRequest{Provider: "p", Model: "m", Payload: json.RawMessage(`{"token":"t-1"}`)}
	tr.failNextEchoing()
	_, err := tr.Send(context.Background(), req)
	if !errors.Is(err, ErrInjectedTransportFailure) || !strings.Contains(err.Error(), `"t-1"`) || !ContainsProbe([]byte(err.Error())) {
		t.Fatalf("echoing failure = %v; want ErrInjectedTransportFailure quoting the payload and a probe", err)
	}
	if tr.Len() != 0 {
		t.Fatal("a failed request must not be recorded")
	}
	if _, err := tr.Send(context.Background(), req); err != nil || tr.Len() != 1 {
		t.Fatalf("the echoing failure must fail once: %v", err)
	}
	tr.failNextEchoing()
	tr.FailNext()
	if _, err := tr.Send(context.Background(), req); !errors.Is(err, ErrInjectedTransportFailure) || strings.Contains(err.Error(), "t-1") {
		t.Fatalf("FailNext after failNextEchoing = %v; want the plain failure", err)
	}
	tr.failNextEchoing()
	if !tr.Disarm() || tr.Disarm() {
		t.Fatal("Disarm must cancel an echoing failure once")
	}
	if _, err := tr.Send(context.Background(), req); err != nil {
		t.Fatalf("a disarmed transport answers: %v", err)
	}
	if strings.Contains(scrub(echoedTransportError{payload: "x"}.Error()), ProbeCredential) {
		t.Fatal("scrub must redact the echoed credential")
	}
}

func TestPayloadMultisetDiffCountsBothWays(t *testing.T) {
	sent := []any{map[string]any{"a": 1, "b": "x"}, map[string]any{"a": 1, "b": "x"}, map[string]any{"a": 2}}
	req := func(s string) contract.TransportRequest {
		return contract.TransportRequest{Payload: json.RawMessage(s)}
	}
	for _, tc := range []struct {
		name           string
		received       []contract.TransportRequest
		missing, extra int
	}{
		{"same, reordered and re-encoded", []contract.TransportRequest{req(`{"a":2}`), req(`{"b":"x","a":1}`), req(` {"a":1,"b":"x"}`)}, 0, 0},
		{"one duplicated instead of another", []contract.TransportRequest{req(`{"a":2}`), req(`{"a":2}`), req(`{"a":1,"b":"x"}`)}, 1, 1},
		{"corrupt", []contract.TransportRequest{req(`{"a":2}`), req(`{"a":1,"b":"x"}`), req(`{"a":1,"b":`)}, 1, 1},
		{"one short", []contract.TransportRequest{req(`{"a":2}`), req(`{"a":1,"b":"x"}`)}, 1, 0},
	} {
		missing, extra := payloadMultisetDiff(sent, tc.received)
		if missing != tc.missing || extra != tc.extra {
			t.Errorf("%s: missing %d, extra %d; want %d, %d", tc.name, missing, extra, tc.missing, tc.extra)
		}
	}
}

func TestTokenPayloadsAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		p, tok := tokenPayload("label")
		b, err := json.Marshal(p)
		if err != nil || !strings.Contains(string(b), tok) || seen[tok] {
			t.Fatalf("token payload %s (token %q, err %v): want a fresh token in the payload", b, tok, err)
		}
		seen[tok] = true
	}
}
