package privacy

import (
	"strings"
	"testing"
)

func mustEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

type textCase struct {
	name     string
	in       string
	want     string
	class    Classification
	changed  bool
	blocked  int
	redacted int
}

func runText(t *testing.T, provider string, cfg Config, cases []textCase) {
	t.Helper()
	e := mustEngine(t, cfg)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.SanitizeText(provider, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != c.want {
				t.Errorf("text:\n got %q\nwant %q", got.Text, c.want)
			}
			if c.class == "" {
				c.class = Normal
			}
			if got.Classification != c.class {
				t.Errorf("classification = %q, want %q", got.Classification, c.class)
			}
			if got.Changed != c.changed {
				t.Errorf("changed = %v, want %v", got.Changed, c.changed)
			}
			if got.BlockedBlocks != c.blocked {
				t.Errorf("blocked = %d, want %d", got.BlockedBlocks, c.blocked)
			}
			if got.SecretRedactions != c.redacted {
				t.Errorf("redactions = %d, want %d", got.SecretRedactions, c.redacted)
			}
		})
	}
}

var (
	phLocal     = placeholder(LocalOnly)
	phSensitive = placeholder(Sensitive)
)

func TestMarkers(t *testing.T) {
	runText(t, "remote", DefaultConfig(), []textCase{
		{name: "empty", in: "", want: ""},
		{name: "plain", in: "hello", want: "hello"},
		{name: "escaped pair", in: `a \[ds4:local-only]x\[/ds4:local-only] b`, want: `a \[ds4:local-only]x\[/ds4:local-only] b`},
		// The open marker is escaped even though its backslash is itself
		// preceded by one; the close is then stray and raises the floor.
		{name: "double backslash", in: `\\[ds4:local-only]x[/ds4:local-only]`, want: phLocal, class: LocalOnly, changed: true, blocked: 1},
		{name: "escaped close inside pair", in: `[ds4:sensitive]a\[/ds4:sensitive]b[/ds4:sensitive]!`, want: phSensitive + "!", class: Sensitive, changed: true, blocked: 1},
		{name: "allowed pair", in: "a [ds4:internal]b[/ds4:internal] c", want: "a b c", class: Internal, changed: true},
		{name: "empty allowed pair", in: "a[ds4:internal][/ds4:internal]b", want: "ab", class: Internal, changed: true},
		{name: "empty blocked pair", in: "a[ds4:sensitive][/ds4:sensitive]b", want: "a" + phSensitive + "b", class: Sensitive, changed: true, blocked: 1},
		{name: "two blocked pairs, nothing between", in: "[ds4:sensitive]x[/ds4:sensitive][ds4:local-only]y[/ds4:local-only]", want: phSensitive + phLocal, class: LocalOnly, changed: true, blocked: 2},
		{name: "mixed case", in: "[Ds4:SENSITIVE]x[/dS4:sensitive]", want: phSensitive, class: Sensitive, changed: true, blocked: 1},
		{name: "unknown class is text", in: "[ds4:secret]x[/ds4:secret]", want: "[ds4:secret]x[/ds4:secret]"},
		{name: "shortest pair", in: "[ds4:internal]a[/ds4:internal]b[/ds4:internal]", want: "ab[/ds4:internal]", class: Internal, changed: true},
		{name: "leading marker", in: " \t[ds4:internal] \n hello ", want: "hello ", class: Internal, changed: true},
		{name: "leading blocked marker", in: "\u00a0[ds4:local-only]  all of it", want: phLocal, class: LocalOnly, changed: true, blocked: 1},
		{name: "leading marker alone", in: "[ds4:sensitive]", want: phSensitive, class: Sensitive, changed: true, blocked: 1},
		{name: "marker not leading", in: "a [ds4:internal] b", want: "a [ds4:internal] b", class: Internal},
		{name: "leading close is not a prefix", in: "[/ds4:internal] b", want: "[/ds4:internal] b", class: Internal},
		{name: "nested markers in a pair stay", in: "[ds4:normal]a [ds4:internal]b[/ds4:internal] c[/ds4:normal]", want: "a [ds4:internal]b[/ds4:internal] c", class: Internal, changed: true},
		{name: "nesting raises the floor", in: "x [ds4:normal]a [ds4:sensitive]b[/ds4:sensitive][/ds4:normal]", want: phSensitive + phSensitive, class: Sensitive, changed: true, blocked: 2},
	})
}

func TestMarkersLocalProvider(t *testing.T) {
	runText(t, " LMStudio", DefaultConfig(), []textCase{
		{name: "pair", in: "[ds4:local-only]a[/ds4:local-only] sk-abcdefgh12345678", want: "a sk-abcdefgh12345678", class: LocalOnly, changed: true},
		{name: "prefix", in: "[ds4:sensitive] password=hunter22", want: "password=hunter22", class: Sensitive, changed: true},
	})
}

func TestSecretPatterns(t *testing.T) {
	const (
		pk  = redactedPrivateKey
		cr  = redactedCredential
		tok = redactedToken
		sec = redactedSecret
	)
	runText(t, "remote", DefaultConfig(), []textCase{
		{name: "pem", in: "k:\n-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n", want: "k:\n" + pk + "\n", changed: true, redacted: 1},
		{name: "pem types need not agree", in: "-----BEGIN EC PRIVATE KEY-----x-----END OPENSSH PRIVATE KEY-----", want: pk, changed: true, redacted: 1},
		{name: "pem nearest end", in: "-----BEGIN DSA PRIVATE KEY-----a-----END DSA PRIVATE KEY-----b-----BEGIN RSA PRIVATE KEY-----c-----END RSA PRIVATE KEY-----", want: pk + "b" + pk, changed: true, redacted: 2},
		{name: "pem without end", in: "-----BEGIN RSA PRIVATE KEY-----abc", want: "-----BEGIN RSA PRIVATE KEY-----abc"},
		{name: "pem unknown type", in: "-----BEGIN FOO PRIVATE KEY-----a-----END FOO PRIVATE KEY-----", want: "-----BEGIN FOO PRIVATE KEY-----a-----END FOO PRIVATE KEY-----"},
		{name: "sk", in: "(sk-abcdefgh)", want: "(" + cr + ")", changed: true, redacted: 1},
		{name: "sk too short", in: "sk-abcdefg", want: "sk-abcdefg"},
		{name: "sk trailing dash outside", in: "sk-abcdefgh12-", want: cr + "-", changed: true, redacted: 1},
		{name: "sk not word bounded", in: "_sk-abcdefgh12 9sk-abcdefgh12", want: "_sk-abcdefgh12 9sk-abcdefgh12"},
		{name: "sk-ant", in: "sk-ant-api03-abcdefgh", want: cr, changed: true, redacted: 1},
		{name: "github", in: "ghp_abcdefghijkl gho_abcdefghijk ghx_abcdefghijkl ghs_abcdefghijkl", want: cr + " gho_abcdefghijk ghx_abcdefghijkl " + cr, changed: true, redacted: 2},
		{name: "github must end at a boundary", in: "ghu_abcdefghijkl_", want: "ghu_abcdefghijkl_"},
		{name: "aws", in: "AKIAABCDEFGHIJKLMNOP.", want: cr + ".", changed: true, redacted: 1},
		{name: "aws 17 is not a key", in: "AKIAABCDEFGHIJKLMNOPQ", want: "AKIAABCDEFGHIJKLMNOPQ"},
		{name: "aws lower case is not a key", in: "AKIAabcdefghijklmnop", want: "AKIAabcdefghijklmnop"},
		{name: "aws trailing dash outside", in: "AKIAABCDEFGHIJKLMNOP-", want: cr + "-", changed: true, redacted: 1},
		{name: "bearer keeps prefix", in: "BEARER\t abc.def~+/=_-", want: "BEARER\t " + tok, changed: true, redacted: 1},
		{name: "bearer javascript whitespace", in: "Bearer\u00a0abcdefgh", want: "Bearer\u00a0" + tok, changed: true, redacted: 1},
		{name: "bearer short", in: "Bearer abcdefg", want: "Bearer abcdefg"},
		{name: "bearer stops at other characters", in: "bearer abcdefgh!x", want: "bearer " + tok + "!x", changed: true, redacted: 1},
		{name: "assignments", in: "api-key: abcd ACCESS_TOKEN=abcd authtoken = 'abcd' client_secret:\n  \"abcd\" PassWord=abcd}",
			want: "api-key: " + sec + " ACCESS_TOKEN=" + sec + " authtoken = '" + sec + "' client_secret:\n  \"" + sec + "\" PassWord=" + sec + "}", changed: true, redacted: 5},
		{name: "assignment needs the same quote", in: `password='abcd"`, want: `password='abcd"`},
		{name: "assignment unclosed quote", in: `password="abcd`, want: `password="abcd`},
		{name: "assignment too short", in: `password="abc" api_key=ab,cd`, want: `password="abc" api_key=ab,cd`},
		{name: "assignment not word bounded", in: "mypassword=abcd my_api_key=abcd", want: "mypassword=abcd my_api_key=abcd"},
		{name: "assignment counts UTF-16 units", in: "password=\U0001F600\U0001F600 password=ab\u00e9", want: "password=" + sec + " password=ab\u00e9", changed: true, redacted: 1},
		{name: "assignment bad separator", in: "password - abcd", want: "password - abcd"},
		// Patterns run one after another over the already-redacted text.
		{name: "redaction over redaction", in: "password=sk-abcdefgh12", want: "password=" + sec + " REDACTED CREDENTIAL]", changed: true, redacted: 2},
		{name: "bearer after credential", in: "Bearer sk-abcdefgh12", want: "Bearer " + cr, changed: true, redacted: 1},
		{name: "secret across a pair", in: "api_key=[ds4:internal]abcd[/ds4:internal]", want: "api_key=" + sec, class: Internal, changed: true, redacted: 1},
		{name: "placeholder is not a secret", in: "[ds4:local-only]password=abcd[/ds4:local-only]", want: phLocal, class: LocalOnly, changed: true, blocked: 1},
	})
}

func TestRedactionOffAndLocal(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RedactSecrets = false
	runText(t, "remote", cfg, []textCase{{name: "off", in: "sk-abcdefgh12", want: "sk-abcdefgh12"}})
	runText(t, "ollama", DefaultConfig(), []textCase{{name: "local", in: "password=abcd", want: "password=abcd"}})
}

func TestPlaceholderText(t *testing.T) {
	if got := placeholder(Internal); got != "[DS4 internal content excluded by privacy policy]" {
		t.Fatal(got)
	}
	if strings.Contains(placeholder(LocalOnly), "ds4:") {
		t.Fatal("placeholder contains a marker")
	}
}
