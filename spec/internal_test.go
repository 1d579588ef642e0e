package spec

import (
	"flag"
	"testing"
)

func TestSetChecksRespectsTheUser(t *testing.T) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		t.Fatal("rapid registers -rapid.checks")
	}
	before := f.Value.String()
	restore := setChecks(7)
	if userChecks() {
		if f.Value.String() != before {
			t.Fatal("an explicit -rapid.checks was overridden")
		}
	} else if f.Value.String() != "7" {
		t.Fatalf("checks = %s, want 7", f.Value.String())
	}
	restore()
	if f.Value.String() != before {
		t.Fatalf("checks not restored: %s, want %s", f.Value.String(), before)
	}
}
