package conformance

import (
	"encoding/json"
	"testing"
)

func TestContainsAnyFindsEscapedProbesInEveryJSONValue(t *testing.T) {
	const probe = "s3cret"
	for _, c := range []struct {
		data string
		want bool
	}{
		{"plain s3cret text", true},
		{"plain text", false},
		{`{"k":"s\u0033cret"}`, true},
		{" \t\r\n[\"s\\u0033cret\"]", true},
		{`"s\u0033cret"`, true},
		{`{"s\u0033cret":1}`, true},
		{`{"k":"other"}`, false},
		{`s\u0033cret`, false}, // not JSON: the escape is text
		{`-1`, false},
		{`null`, false},
		{"", false},
	} {
		if got := ContainsAny([]byte(c.data), probe); got != c.want {
			t.Errorf("ContainsAny(%q) = %t, want %t", c.data, got, c.want)
		}
	}
}

// mayBeJSON must never turn away what json.Unmarshal decodes.
func FuzzMayBeJSON(f *testing.F) {
	for _, s := range []string{`{}`, ` []`, `"x"`, `-0`, `7`, `true`, `false`, `null`, "\n\t{", `x`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) == nil && !mayBeJSON(data) {
			t.Fatalf("mayBeJSON(%q) = false, but it decodes", data)
		}
	})
}
