package jsonw

import "testing"

// TestParseKeepsEscapedMemberNames checks that a member name written with
// escapes survives the parse of its value, when an earlier escaped string
// has left the scanner's scratch buffer large enough to be reused.
func TestParseKeepsEscapedMemberNames(t *testing.T) {
	raw := `{"a":"\u00e9 012345678901234567890123456789","pr\u006fmpt":"password: hunter22 \u00e9","l":[{"n\u0061me":{"x":"\u00e9\u00e9\u00e9\u00e9\u00e9"}}]}`
	v, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Members[1].Name; got != "prompt" {
		t.Errorf("second member name %q, want \"prompt\"", got)
	}
	if got := v.Members[2].Value.Items[0].Members[0].Name; got != "name" {
		t.Errorf("nested member name %q, want \"name\"", got)
	}
}
