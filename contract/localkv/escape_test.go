package localkv

import (
	"strings"
	"testing"
)

// TestInputErrorNamesTheMemberNotItsValue decodes a member whose name needs
// an escape and whose string value fails part-way: the error must name the
// member, and must not quote the prompt text read before the failure.
func TestInputErrorNamesTheMemberNotItsValue(t *testing.T) {
	var in EligibilityInput
	err := in.UnmarshalJSON([]byte(`{"pr\u006fmptPrefix":"SECRET\n` + "\x01" + `"}`))
	if err == nil {
		t.Fatal("a control character in a string was accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "promptPrefix") || strings.Contains(msg, "SECRET") {
		t.Fatalf("error %q does not name promptPrefix, or quotes the prompt", msg)
	}
}
