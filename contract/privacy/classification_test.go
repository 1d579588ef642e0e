package privacy

import "testing"

func TestClassificationOrder(t *testing.T) {
	cs := Classifications()
	want := []Classification{Normal, Internal, Sensitive, LocalOnly}
	for i, c := range want {
		if cs[i] != c || c.Rank() != i || !c.Valid() {
			t.Fatalf("class %d = %q (rank %d)", i, cs[i], c.Rank())
		}
	}
	cs[0] = "changed"
	if Classifications()[0] != Normal {
		t.Fatal("Classifications returned shared storage")
	}
	if Max(Internal, Sensitive) != Sensitive || Max(LocalOnly, Normal) != LocalOnly || Max("", Internal) != Internal {
		t.Fatal("Max")
	}
	if !Sensitive.AtLeast(Internal) || Internal.AtLeast(Sensitive) || !Normal.AtLeast(Normal) {
		t.Fatal("AtLeast")
	}
	for _, bad := range []Classification{"", "Normal", "local_only", "public"} {
		if bad.Valid() || bad.Rank() != -1 {
			t.Fatalf("%q is valid", bad)
		}
	}
}
