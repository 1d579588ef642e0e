package conformance_test

import (
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// Every check that draws random input says so (Check.Seeded) and records
// the seed it drew from, given or fresh; no other check records one. A
// check that draws without saying so, or says so and records nothing,
// fails here.
func TestEveryDrawingCheckRecordsItsSeed(t *testing.T) {
	t.Parallel()
	small := []conformance.Option{conformance.WithHistories(4), conformance.WithModelSteps(60)}
	for _, seed := range []uint64{0, 0x5eed} {
		rep := conformance.RunChecks(ctx, correct(), append(small, conformance.WithSeed(seed))...)
		seeded := 0
		for _, r := range rep.Checks {
			c, _ := conformance.CheckByID(r.ID)
			switch {
			case r.Status == conformance.StatusSkip:
			case c.Seeded() && seed != 0 && r.Seed != seed:
				t.Errorf("%s drew from seed %#x, want the given %#x", r.ID, r.Seed, seed)
			case c.Seeded() && r.Seed == 0:
				t.Errorf("%s draws random input and records no seed", r.ID)
			case !c.Seeded() && r.Seed != 0:
				t.Errorf("%s records seed %#x but does not say it draws random input (Check.Seeded)", r.ID, r.Seed)
			}
			if c.Seeded() {
				seeded++
			}
		}
		if seeded < 4 {
			t.Fatalf("%d checks draw random input; want privacy-probes, privacy-engine, projection and model at least", seeded)
		}
	}
}
