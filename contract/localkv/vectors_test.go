package localkv

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/ds4context/adapterkit/internal/vectors"
	"strings"
	"testing"
)

func TestEligibilityVectors(t *testing.T) {
	vs := vectors.Read(t, "eligibility.jsonl")
	reproduced, notExpressible := 0, 0
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			var in EligibilityInput
			if err := json.Unmarshal(v.Input, &in); errors.Is(err, ErrTokenCountNotInteger) {
				// The vector gives a fractional token count. EligibilityInput
				// holds int64 counts, so decoding refuses it; the contract's
				// answer for it (invalid-token-count) is what a caller
				// decoding JSON must give, and the output confirms it.
				var out struct {
					Reason Reason `json:"reason"`
				}
				if err := json.Unmarshal(v.Output, &out); err != nil || out.Reason != ReasonInvalidTokenCount {
					t.Fatalf("fractional token count expected to be invalid-token-count, output %s", v.Output)
				}
				notExpressible++
				t.Skip("not expressible: EligibilityInput token counts are int64 and this vector has a fractional count")
			} else if err != nil {
				t.Fatal(err)
			}
			got := DeriveEligibility(in)
			gotJSON, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !vectors.SameJSON(t, gotJSON, v.Output) {
				t.Fatalf("\n got %s\nwant %s", gotJSON, v.Output)
			}
			// Key fields byte for byte.
			var want struct {
				Key Key `json:"key"`
			}
			if err := json.Unmarshal(v.Output, &want); err != nil {
				t.Fatal(err)
			}
			if got.Key != want.Key {
				t.Fatalf("key\n got %+v\nwant %+v", got.Key, want.Key)
			}
			// The same options given as decoded Go values give the same key.
			if got.Eligible {
				in.SystemOptions, in.ToolOptions = decodeAny(t, rawOption(in.SystemOptions)), decodeAny(t, rawOption(in.ToolOptions))
				if again := DeriveEligibility(in); again.Key != got.Key {
					t.Fatalf("decoded options give key %+v, raw options %+v", again.Key, got.Key)
				}
			}
			reproduced++
		})
	}
	t.Logf("eligibility vectors: %d reproduced, %d not expressible, %d total", reproduced, notExpressible, len(vs))
	if reproduced+notExpressible != len(vs) {
		t.Errorf("reproduced %d of %d vectors", reproduced, len(vs)-notExpressible)
	}
	if notExpressible != 1 {
		t.Errorf("expected exactly one not expressible vector (invalid-token-count-fraction), got %d", notExpressible)
	}
}

// decodeAny decodes raw JSON into Go values with json.Number numbers; nil
// raw stays a nil interface (absent).
func decodeAny(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return JSONNull{}
	}
	return v
}

func TestStableJSONVectors(t *testing.T) {
	for _, v := range vectors.Read(t, "stable.jsonl") {
		var want struct {
			Text   string `json:"text"`
			SHA256 string `json:"sha256"`
		}
		if err := json.Unmarshal(v.Output, &want); err != nil {
			t.Fatal(err)
		}
		// The same value as raw JSON, as Go values with json.Number numbers
		// and as Go values with float64 numbers.
		inputs := map[string]any{
			"raw":     v.Input,
			"number":  decodeAny(t, v.Input),
			"float64": decodeFloat(t, v.Input),
		}
		for form, in := range inputs {
			got, err := StableJSON(in)
			if err != nil {
				t.Errorf("%s (%s): %v", v.Name, form, err)
				continue
			}
			if string(got) != want.Text {
				t.Errorf("%s (%s):\n got %s\nwant %s", v.Name, form, got, want.Text)
			}
			sum := sha256.Sum256(got)
			if hex.EncodeToString(sum[:]) != want.SHA256 {
				t.Errorf("%s (%s): sha256 mismatch", v.Name, form)
			}
			h, err := StableHash(in)
			if err != nil || h != want.SHA256 {
				t.Errorf("%s (%s): StableHash = %q, %v", v.Name, form, h, err)
			}
		}
	}
}

func decodeFloat(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// rawOption returns a decoded option's raw JSON (nil when absent).
func rawOption(v any) json.RawMessage {
	raw, _ := v.(json.RawMessage)
	return raw
}

// The JSON form round-trips every vector input that EligibilityInput can
// express, byte for byte after a first encoding.
func TestEligibilityInputJSONRoundTrip(t *testing.T) {
	for _, v := range vectors.Read(t, "eligibility.jsonl") {
		var in EligibilityInput
		if err := json.Unmarshal(v.Input, &in); errors.Is(err, ErrTokenCountNotInteger) {
			continue
		} else if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		first, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		var back EligibilityInput
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		second, _ := json.Marshal(back)
		if string(first) != string(second) || !vectors.SameJSON(t, first, v.Input) {
			t.Errorf("%s: round trip\n%s\n%s\nvector %s", v.Name, first, second, v.Input)
		}
		if DeriveEligibility(back) != DeriveEligibility(in) {
			t.Errorf("%s: decoded again, the input derives differently", v.Name)
		}
	}
}

func TestEligibilityInputJSONIsStrict(t *testing.T) {
	base := `"enabled":true,"capabilityEnabled":true,"capabilityVersion":"v","destination":"local","runtimeId":"r",` +
		`"runtimeRevision":"r1","provider":"p","model":"m","modelRevision":"m1","privacyPolicyVersion":"pp","promptPrefix":"x"`
	for name, doc := range map[string]string{
		"missing counts":  "{" + base + "}",
		"case-folded":     "{" + strings.Replace(base, `"enabled"`, `"Enabled"`, 1) + `,"prefixTokenCount":1,"contextTokenCount":2}`,
		"repeated member": "{" + base + `,"provider":"q","prefixTokenCount":1,"contextTokenCount":2}`,
		"unknown member":  "{" + base + `,"prefixTokenCount":1,"contextTokenCount":2,"extra":1}`,
		"wrong type":      "{" + strings.Replace(base, `"enabled":true`, `"enabled":"yes"`, 1) + `,"prefixTokenCount":1,"contextTokenCount":2}`,
	} {
		var in EligibilityInput
		if err := json.Unmarshal([]byte(doc), &in); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	var in EligibilityInput
	if err := json.Unmarshal([]byte("{"+base+`,"systemOptions":null,"prefixTokenCount":1,"contextTokenCount":2}`), &in); err != nil {
		t.Fatal(err)
	}
	if string(rawOption(in.SystemOptions)) != "null" || in.ToolOptions != nil {
		t.Errorf("null and absent options must stay distinct: %#v, %#v", in.SystemOptions, in.ToolOptions)
	}
}
