package mutants_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// withoutLocalKV is the reference factory made blind to Setup.LocalKVPort:
// its adapter declares local-kv-reuse unsupported.
func withoutLocalKV() conformance.Factory {
	return conformance.NewFactory("no local KV", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		setup.LocalKVPort = nil
		return base().Create(ctx, setup)
	})
}

// The eight local KV checks run, and pass, on the reference adapter given a
// port; on an adapter that does not declare the capability each is skipped
// with a message saying so — never passed — and required, each fails.
func TestLocalKVChecksRunOrSkip(t *testing.T) {
	n := 0
	for _, c := range conformance.Checks() {
		if c.Capability != contract.CapabilityLocalKVReuse {
			continue
		}
		n++
		if r := c.Run(context.Background(), base()); r.Status != conformance.StatusPass {
			t.Errorf("%s on the reference adapter: %s %v", c.ID, r.Status, r.Failure)
		}
		r := c.Run(context.Background(), withoutLocalKV())
		if r.Status != conformance.StatusSkip || !strings.Contains(r.SkipReason, "does not declare the local-kv-reuse capability") {
			t.Errorf("%s without a port: %s (%q), want skipped saying why", c.ID, r.Status, r.SkipReason)
		}
		r = c.Run(context.Background(), withoutLocalKV(), conformance.WithRequiredCapabilities(contract.CapabilityLocalKVReuse))
		if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "does not declare") {
			t.Errorf("%s required without a port: %s %v, want a failure", c.ID, r.Status, r.Failure)
		}
	}
	if n != 8 {
		t.Fatalf("%d local KV checks, want 8", n)
	}
}
