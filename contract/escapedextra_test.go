package contract_test

import (
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// TestDecodeKeepsEscapedUnknownMemberNames checks that an unknown member
// whose name is written with escapes keeps its name when its value holds
// escaped strings too (unknown members are kept verbatim).
func TestDecodeKeepsAnEscapedUnknownMemberName(t *testing.T) {
	raw := `{"id":"s:e1","sourceEntryId":"e\u0031","role":"user","blocks":[{"type":"text","text":"\u00e9 0123456789012345678901234567"}],` +
		`"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e1","runtimeId":"rt"},"flags":{"pinned":false,"atomic":false,"localOnly":false,"synthetic":false},` +
		`"vend\u006fr":{"note":"\u00e9\u00e9\u00e9\u00e9 abcdefgh"}}`
	m, err := contract.DecodeMessage([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Extra) != 1 || m.Extra[0].Name != "vendor" {
		names := make([]string, len(m.Extra))
		for i, f := range m.Extra {
			names[i] = f.Name
		}
		t.Fatalf("unknown members %q, want [\"vendor\"]", names)
	}
}
