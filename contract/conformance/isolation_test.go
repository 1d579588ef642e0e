package conformance

import (
	"testing"

	"github.com/ds4context/adapterkit/contract/gen"
)

// Every family but long-history, which is never a limit, has its
// isolation histories within the bound of draws, whatever the seed.
func TestIsolationHistoriesExistForEveryFamily(t *testing.T) {
	for _, f := range gen.Families() {
		if f == gen.FamilyLongHistory {
			continue
		}
		for _, seed := range []uint64{0, 1, 11, 0x5eed0f5ca7, 1 << 63} {
			hs, draws, err := isolationDraws(f, seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != isolationHistories || len(draws) != isolationHistories {
				t.Fatalf("%s, seed %d: %d histories", f, seed, len(hs))
			}
			for i, h := range hs {
				if fams := gen.FamiliesOf(h); len(fams) != 1 || fams[0] != f {
					t.Fatalf("%s, seed %d, draw %d: families %v", f, seed, draws[i], fams)
				}
			}
		}
	}
}
