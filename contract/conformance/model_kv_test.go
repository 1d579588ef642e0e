package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract/localkv"
)

func TestKVHoldsKey(t *testing.T) {
	k := newKVModel(NewRecordingKVPort())
	digest := strings.Repeat("0123456789abcdef", 4)
	k.keys[digest] = true
	for s, want := range map[string]bool{
		digest:                           true,
		"state " + digest + " is warm":   true,
		"ab" + digest + "cd":             true, // inside a longer run of hex digits
		strings.ToUpper(digest):          false,
		digest[:63] + " " + digest[1:]:   false,
		strings.Repeat("fedcba98", 8):    false,
		"no digest here, just text 1234": false,
	} {
		if got := k.holdsKey(s); got != want {
			t.Errorf("holdsKey(%q) = %t, want %t", s, got, want)
		}
	}
}

func TestKVCountersSaturate(t *testing.T) {
	v := int64(kvMaxSafe - 1)
	satAdd(&v, 5)
	if v != kvMaxSafe {
		t.Fatalf("saturated counter %d, want %d", v, kvMaxSafe)
	}
	v = 3
	satAdd(&v, 4)
	if v != 7 {
		t.Fatalf("counter %d, want 7", v)
	}
}

// The model's key check accepts the key localkv derives, and refuses one
// whose parts §11 pins differ.
func TestKVCheckKey(t *testing.T) {
	p := LocalKVPrompt{Prefix: "prefix", SystemOptions: json.RawMessage(`{"seed":7}`), PrefixTokens: 2, ContextTokens: 4}
	e := kvEligibility(LocalKVProvider, LocalKVModel, p)
	if !e.Eligible {
		t.Fatalf("ineligible: %s", e.Reason)
	}
	other := p
	other.Prefix = "prefix!"
	otherKey := kvEligibility(LocalKVProvider, LocalKVModel, other).Key
	otherRuntime := e.Key
	otherRuntime.RuntimeHash = otherKey.PrefixHash
	otherRuntime.Fingerprint, _ = localkv.StableHash(map[string]any{"version": e.Key.Version, "prefixHash": e.Key.PrefixHash,
		"providerModelHash": e.Key.ProviderModelHash, "optionsHash": e.Key.OptionsHash, "privacyHash": e.Key.PrivacyHash, "runtimeHash": otherRuntime.RuntimeHash})
	badFingerprint := e.Key
	badFingerprint.Fingerprint = otherKey.Fingerprint
	for _, c := range []struct {
		name        string
		key         localkv.Key
		model       string
		reference   bool
		wantBroken  bool
		sendFirstOK bool
	}{
		{"the derived key", e.Key, LocalKVModel, true, false, false},
		{"another prompt's key", otherKey, LocalKVModel, false, true, false},
		{"a fingerprint over other parts", badFingerprint, LocalKVModel, false, true, false},
		{"one providerModelHash for two models", e.Key, LocalKVModel + "-other", false, true, true},
		{"another runtime hash, reference", otherRuntime, LocalKVModel, true, true, true},
		{"another runtime hash, another adapter", otherRuntime, LocalKVModel, false, false, true},
	} {
		k := newKVModel(NewRecordingKVPort())
		if c.sendFirstOK {
			if err := k.checkKey(c.reference, e.Key, e.Key, LocalKVProvider, LocalKVModel, "first"); err != nil {
				t.Fatalf("%s: the first key: %v", c.name, err)
			}
		}
		err := k.checkKey(c.reference, c.key, e.Key, LocalKVProvider, c.model, "second")
		if (err != nil) != c.wantBroken {
			t.Errorf("%s: error %v, want one %t", c.name, err, c.wantBroken)
		}
	}
}
