package conformance

import "testing"

// Payloads compare as JSON values: numbers as JavaScript compares them
// (-0 === 0, 1e21 === 1000000000000000000000), members as sets, strings
// by their text. A decoded payload crossing the bridge came back with 0
// where the engine in process wrote -0, and the model called them
// different payloads.
func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"n":-0}`, `{"n":0}`, true},
		{`[-0.0,0e5]`, `[0,0]`, true},
		{`{"big":1e21}`, `{"big":1000000000000000000000}`, true},
		{`{"a":1,"b":"\u003c"}`, `{ "b" : "<", "a" : 1.0 }`, true},
		{`{"n":0}`, `{"n":1e-400}`, true}, // a double underflows to 0
		{`{"n":-1}`, `{"n":1}`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`not json`, `not json`, false},
	} {
		if got := sameJSON([]byte(tc.a), []byte(tc.b)); got != tc.same {
			t.Errorf("sameJSON(%s, %s) = %t, want %t", tc.a, tc.b, got, tc.same)
		}
	}
}

// The same bytes are the same value without decoding them — also a number
// no float64 holds, which decoding cannot compare — while text that is not
// JSON still equals nothing, not even itself.
func TestSameJSONOfTheSameBytes(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{`{"n":1e400}`, true},
		{`[1,"x",null]`, true},
		{`{"a":`, false},
		{``, false},
		{`not json`, false},
	} {
		if got := sameJSON([]byte(tc.text), []byte(tc.text)); got != tc.want {
			t.Errorf("sameJSON(%q, itself) = %t, want %t", tc.text, got, tc.want)
		}
	}
}
