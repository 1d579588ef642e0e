package privacy

import (
	"strings"
	"testing"
)

// TestEscapedContentKeyIsSanitised checks that a content key written with
// JSON escapes still starts content context, whatever strings came before
// it: a secret in it is redacted and the key is kept.
func TestEscapedContentKeyIsSanitised(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	raw := `{"a":"\u00e9 012345678901234567890123456789","pr\u006fmpt":"password: hunter22 \u00e9"}`
	r, err := e.SanitizePayload("remote.example", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(r.Value), "hunter22") || r.SecretRedactions != 1 {
		t.Errorf("secret under an escaped content key not redacted (%d redactions)", r.SecretRedactions)
	}
	if !strings.Contains(string(r.Value), `"prompt":`) {
		t.Error("the escaped member name prompt did not come out as prompt")
	}
}
