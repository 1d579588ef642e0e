package privacy

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// The secret patterns as regular expressions. They need neither
// look-behind nor back-references, so Go's regexp, which picks the match a
// backtracking engine picks, is an exact model of the JavaScript patterns;
// \b is ASCII in both, as JavaScript's is without the u flag, and
// case-insensitive parts are spelt out as ASCII classes (Go's (?i) would
// also fold U+017F and U+212A onto s and k, which JavaScript does not). The
// engine scans in code for speed; these tests hold it to the patterns.
var (
	credentialOracle = regexp.MustCompile(`\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{12,}|AKIA[0-9A-Z]{16})\b`)
	pemOracle        = regexp.MustCompile(`-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----(?s:.*?)-----END (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----`)
	bearerOracle     = regexp.MustCompile(`\b([Bb][Ee][Aa][Rr][Ee][Rr]` + jsstring.SpaceClass + `+)[A-Za-z0-9._~+/=-]{8,}`)
)

// oracleReplace replaces every match of re with repl, keeping the first
// submatch in front of it when keepPrefix is set, and counts the matches.
func oracleReplace(re *regexp.Regexp, s, repl string, keepPrefix bool) (string, int) {
	locs := re.FindAllStringSubmatchIndex(s, -1)
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		b.WriteString(s[last:loc[0]])
		if keepPrefix {
			b.WriteString(s[loc[2]:loc[3]])
		}
		b.WriteString(repl)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String(), len(locs)
}

// secretScans are the engine's scans beside the pattern each must agree
// with, and the pieces random texts for it are made of.
var secretScans = []struct {
	name       string
	scan       func(string, *int, []byte) (string, []byte)
	oracle     *regexp.Regexp
	repl       string
	keepPrefix bool
	pieces     []string
}{
	{"credential", redactCredentials, credentialOracle, redactedCredential, false,
		[]string{"sk-", "ant-", "gh", "p", "o", "x", "_", "-", "AKIA", "ABCD", "abcd", "1234", " ", ".", "é", "Z", "ghs_", "sk-ant-"}},
	{"pem", redactPEM, pemOracle, redactedPrivateKey, false,
		[]string{"-----BEGIN ", "-----END ", "-----", "-", "RSA ", "EC ", "OPENSSH ", "DSA ", "PUBLIC ", "PRIVATE KEY-----", "PRIVATE KEY", "\n", "MIIE", " ", "é"}},
	{"bearer", redactBearer, bearerOracle, redactedToken, true,
		[]string{"Bearer", "bearer", "BEARER", "bEaReR", "x", "_", " ", "\t", "\u00a0", "\u2028", "\ufeff", "abcd", "1234", ".~+/=-", ":", "é", "\n"}},
}

// TestSecretScansMatchPatterns compares each scan with its pattern on
// random texts made of the pieces that matter to it.
func TestSecretScansMatchPatterns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sc := range secretScans {
		for range 60000 {
			var b strings.Builder
			for range r.IntN(12) {
				b.WriteString(sc.pieces[r.IntN(len(sc.pieces))])
			}
			if err := agreeOnSecrets(sc.scan, sc.oracle, sc.repl, sc.keepPrefix, b.String()); err != "" {
				t.Fatalf("%s: %s", sc.name, err)
			}
		}
	}
}

// TestShortTextsSkipOnlyWhatHoldsNoSecret checks the short-text shortcut
// of redactSecrets: on random short texts made of every pattern's pieces
// it gives what the four scans give in turn.
func TestShortTextsSkipOnlyWhatHoldsNoSecret(t *testing.T) {
	var pieces []string
	for _, sc := range secretScans {
		pieces = append(pieces, sc.pieces...)
	}
	pieces = append(pieces, "password", "api", "key", "= ", ": ", "'", "hunter2", "K", "Kelvin\u212a")
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if err := agreeOnShortcut(b.String()); err != "" {
			t.Fatal(err)
		}
	}
}

// agreeOnShortcut describes how redactSecrets and the four scans in turn
// disagree on s, or returns "".
func agreeOnShortcut(s string) string {
	n := 0
	want := s
	for _, redact := range []func(string, *int, []byte) (string, []byte){redactPEM, redactCredentials, redactBearer, redactAssignments} {
		want, _ = redact(want, &n, nil)
	}
	var bufs [2][]byte
	var used [2]int
	got, gn := redactSecrets(s, &bufs, &used)
	if got != want || gn != n {
		return "in " + strconvQuote(s) + "\ngot " + strconvQuote(got) + "\nwant " + strconvQuote(want)
	}
	return ""
}

// agreeOnSecrets describes how scan and the pattern disagree on s, or
// returns "".
func agreeOnSecrets(scan func(string, *int, []byte) (string, []byte), re *regexp.Regexp, repl string, keepPrefix bool, s string) string {
	n := 0
	got, _ := scan(s, &n, nil)
	want, wn := oracleReplace(re, s, repl, keepPrefix)
	if got != want || n != wn {
		return strings.Join([]string{"in " + strconvQuote(s), "got " + strconvQuote(got), "want " + strconvQuote(want)}, "\n")
	}
	return ""
}

func strconvQuote(s string) string { return "\"" + strings.ReplaceAll(s, "\n", `\n`) + "\"" }

// FuzzSecretScansMatchPatterns is the fuzz target of the same comparison,
// for any text.
func FuzzSecretScansMatchPatterns(f *testing.F) {
	f.Add("token sk-ant-abcdefgh12 and ghp_abcdefghijkl1234 AKIA0123456789ABCDEF.")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END EC PRIVATE KEY----- x -----BEGIN PRIVATE KEY-----")
	f.Add("Authorization: Bearer\u00a0abc.def~gh/ij Bearer short xBearer abcdefghij _bearer abcdefghij")
	f.Add("------END RSA PRIVATE KEY----- -----BEGIN DSA PRIVATE KEY----------END PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, s string) {
		if err := agreeOnShortcut(s); err != "" {
			t.Fatal(err)
		}
		for _, sc := range secretScans {
			if err := agreeOnSecrets(sc.scan, sc.oracle, sc.repl, sc.keepPrefix, s); err != "" {
				t.Fatalf("%s: %s", sc.name, err)
			}
		}
	})
}
