package privacy

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// credentialOracle is the credential pattern as a regular expression. Go's
// regexp picks the match a backtracking engine picks, so it is an exact
// model of the JavaScript pattern; the engine scans in code for speed.
var credentialOracle = regexp.MustCompile(`\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{12,}|AKIA[0-9A-Z]{16})\b`)

func TestCredentialScanMatchesPattern(t *testing.T) {
	pieces := []string{"sk-", "ant-", "gh", "p", "o", "x", "_", "-", "AKIA", "ABCD", "abcd", "1234", " ", ".", "é", "Z", "ghs_", "sk-ant-"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		n := 0
		got := redactCredentials(s, &n)
		want := credentialOracle.ReplaceAllString(s, redactedCredential)
		if got != want || n != len(credentialOracle.FindAllStringIndex(s, -1)) {
			t.Fatalf("%q: got %q (%d), want %q", s, got, n, want)
		}
	}
}
