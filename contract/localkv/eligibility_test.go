package localkv

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// baseInput is an eligible input (the baseline vector).
func baseInput() EligibilityInput {
	return EligibilityInput{
		Enabled:              true,
		CapabilityEnabled:    true,
		CapabilityVersion:    "llama-kv-v1",
		Destination:          "local",
		RuntimeID:            "local-test-runtime",
		RuntimeRevision:      "runtime-build-1",
		Provider:             "ollama",
		Model:                "codestral:latest",
		ModelRevision:        "sha256-model-a",
		PrivacyPolicyVersion: "privacy-policy-a",
		PromptPrefix:         []byte("system\x00tools\x00stable-prefix"),
		SystemOptions:        map[string]any{"temperature": 0, "seed": 7},
		ToolOptions:          []any{map[string]any{"name": "read", "schema": map[string]any{"type": "object"}}},
		PrefixTokenCount:     120,
		ContextTokenCount:    160,
	}
}

const baselineFingerprint = "d8028f14ed83fb46ff0352f8132e98dccfc88fafdd7f78263988a9d5f8d3a9e7"

func TestBaselineKeyFromGoValues(t *testing.T) {
	el := DeriveEligibility(baseInput())
	if !el.Eligible || el.Reason != "" {
		t.Fatalf("baseline not eligible: %+v", el)
	}
	if el.Key.Fingerprint != baselineFingerprint || el.Key.Version != contract.LocalKVEligibilityVersion {
		t.Fatalf("key = %+v", el.Key)
	}
	if el.PrefixTokenCount != 120 || el.ContextTokenCount != 160 {
		t.Fatalf("counts = %d, %d", el.PrefixTokenCount, el.ContextTokenCount)
	}
}

// breakers make an eligible input fail exactly one check, in check order.
var breakers = []struct {
	reason Reason
	brk    func(*EligibilityInput)
}{
	{ReasonDisabled, func(in *EligibilityInput) { in.Enabled = false }},
	{ReasonCapabilityUnsupported, func(in *EligibilityInput) { in.CapabilityEnabled = false }},
	{ReasonNonLocalDestination, func(in *EligibilityInput) { in.Destination = "remote" }},
	{ReasonInvalidProvider, func(in *EligibilityInput) { in.Provider = "" }},
	{ReasonInvalidModel, func(in *EligibilityInput) { in.Model = " m" }},
	{ReasonInvalidModelRevision, func(in *EligibilityInput) { in.ModelRevision = "rev\x01" }},
	{ReasonInvalidRuntimeIdentity, func(in *EligibilityInput) { in.RuntimeID = strings.Repeat("r", 257) }},
	{ReasonInvalidRuntimeRevision, func(in *EligibilityInput) { in.RuntimeRevision = "build\x7f" }},
	{ReasonInvalidCapabilityVersion, func(in *EligibilityInput) { in.CapabilityVersion = strings.Repeat("c", 65) }},
	{ReasonInvalidPrivacyPolicyVersion, func(in *EligibilityInput) { in.PrivacyPolicyVersion = "  " }},
	{ReasonInvalidPromptPrefix, func(in *EligibilityInput) { in.PromptPrefix = nil }},
	{ReasonInvalidTokenCount, func(in *EligibilityInput) { in.PrefixTokenCount = 161 }},
	{ReasonInvalidOptions, func(in *EligibilityInput) { in.ToolOptions = func() {} }},
}

func TestEachReason(t *testing.T) {
	if len(breakers) != len(Reasons()) {
		t.Fatalf("%d breakers for %d reasons", len(breakers), len(Reasons()))
	}
	for i, b := range breakers {
		if Reasons()[i] != b.reason {
			t.Fatalf("Reasons()[%d] = %s, want %s", i, Reasons()[i], b.reason)
		}
		in := baseInput()
		b.brk(&in)
		el := DeriveEligibility(in)
		if el.Eligible || el.Reason != b.reason || el.Key != (Key{}) || el.PrefixTokenCount != 0 {
			t.Errorf("%s: got %+v", b.reason, el)
		}
	}
}

func TestFirstFailureWins(t *testing.T) {
	// Break every check from i onwards: the reason is always check i.
	for i := range breakers {
		in := baseInput()
		for _, b := range breakers[i:] {
			b.brk(&in)
		}
		if el := DeriveEligibility(in); el.Reason != breakers[i].reason {
			t.Errorf("breaking checks %d..: reason %s, want %s", i, el.Reason, breakers[i].reason)
		}
	}
}

func TestEligibilityJSONShape(t *testing.T) {
	in := baseInput()
	in.PrefixTokenCount, in.ContextTokenCount = 0, 0
	b, err := json.Marshal(DeriveEligibility(in))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"prefixTokenCount":0,"contextTokenCount":0`) || strings.Contains(string(b), "reason") {
		t.Errorf("eligible JSON = %s", b)
	}
	in.Enabled = false
	b, err = json.Marshal(DeriveEligibility(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"eligible":false,"reason":"disabled"}` {
		t.Errorf("ineligible JSON = %s", b)
	}
}

func TestIdentifierRule(t *testing.T) {
	smile := "\U0001F600" // one character, two UTF-16 code units
	cases := []struct {
		name string
		id   string
		ok   bool
	}{
		{"one unit", "a", true},
		{"empty", "", false},
		{"256 units", strings.Repeat("a", 256), true},
		{"257 units", strings.Repeat("a", 257), false},
		{"128 astral = 256 units", strings.Repeat(smile, 128), true},
		{"128 astral + 1 = 257 units", strings.Repeat(smile, 128) + "a", false},
		{"256 BMP multibyte", strings.Repeat("é", 256), true},
		{"257 BMP multibyte", strings.Repeat("é", 257), false},
		{"inner space", "a b", true},
		{"leading space", " a", false},
		{"trailing space", "a ", false},
		{"leading NBSP", "\u00a0a", false},
		{"trailing BOM", "a\ufeff", false},
		{"ideographic space", "\u3000a", false},
		{"en quad", "a\u2000", false},
		{"hair space", "a\u200a", false},
		{"line separator", "a\u2028", false},
		{"paragraph separator", "\u2029a", false},
		{"narrow NBSP", "a\u202f", false},
		{"ogham space", "\u1680a", false},
		{"NEL is not trimmed by JavaScript", "\u0085a\u0085", true},
		{"zero width space is not trimmed", "\u200ba", true},
		{"NUL", "a\x00b", false},
		{"unit separator", "a\x1fb", false},
		{"DEL", "a\x7fb", false},
		{"tab", "a\tb", false},
		{"trailing newline", "a\n", false},
		{"invalid UTF-8", "a\xffb", false},
	}
	for _, c := range cases {
		if got := validIdentifier(c.id, MaxIdentifierLength); got != c.ok {
			t.Errorf("%s: valid = %v, want %v", c.name, got, c.ok)
		}
		// The rule applies to every identifier field.
		in := baseInput()
		in.Model = c.id
		if got := DeriveEligibility(in).Reason != ReasonInvalidModel; got != c.ok {
			t.Errorf("%s as model: eligible past the model check = %v, want %v", c.name, got, c.ok)
		}
	}
	in := baseInput()
	in.CapabilityVersion = strings.Repeat("c", 64)
	if el := DeriveEligibility(in); !el.Eligible {
		t.Errorf("64-unit capability version: %s", el.Reason)
	}
	in.CapabilityVersion = strings.Repeat(smile, 32) + "c"
	if el := DeriveEligibility(in); el.Reason != ReasonInvalidCapabilityVersion {
		t.Errorf("65-unit capability version: %+v", el)
	}
}

func TestTokenCounts(t *testing.T) {
	cases := []struct {
		prefix, context int64
		ok              bool
	}{
		{0, 0, true},
		{160, 160, true},
		{MaxSafeInteger, MaxSafeInteger, true},
		{0, MaxSafeInteger + 1, false},
		{MaxSafeInteger + 1, MaxSafeInteger + 1, false},
		{-1, 160, false},
		{0, -1, false},
		{161, 160, false},
	}
	for _, c := range cases {
		in := baseInput()
		in.PrefixTokenCount, in.ContextTokenCount = c.prefix, c.context
		el := DeriveEligibility(in)
		if el.Eligible != c.ok || (!c.ok && el.Reason != ReasonInvalidTokenCount) {
			t.Errorf("prefix %d context %d: %+v", c.prefix, c.context, el)
		}
	}
}

func TestPromptPrefix(t *testing.T) {
	in := baseInput()
	in.PromptPrefix = []byte{}
	if el := DeriveEligibility(in); el.Reason != ReasonInvalidPromptPrefix {
		t.Errorf("empty prefix: %+v", el)
	}
	// Binary prefixes are fine: the prefix is bytes, not text.
	in.PromptPrefix = []byte{0xff, 0x00, 0xfe}
	if el := DeriveEligibility(in); !el.Eligible {
		t.Errorf("binary prefix: %+v", el)
	}
	// A one-byte change changes the prefix hash and the fingerprint only.
	a, b := baseInput(), baseInput()
	b.PromptPrefix = []byte("system\x00tools\x00stable-prefiy")
	ka, kb := DeriveEligibility(a).Key, DeriveEligibility(b).Key
	if ka.PrefixHash == kb.PrefixHash || ka.Fingerprint == kb.Fingerprint || ka.OptionsHash != kb.OptionsHash {
		t.Errorf("prefix change: %+v vs %+v", ka, kb)
	}
}

func TestDeriveEligibilityDoesNotModifyInput(t *testing.T) {
	in := baseInput()
	prefix := string(in.PromptPrefix)
	DeriveEligibility(in)
	if string(in.PromptPrefix) != prefix {
		t.Fatal("prefix modified")
	}
}
