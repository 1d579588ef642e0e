package golden_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/golden"
)

func TestGinkgoSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "golden")
}

// The helper works under Ginkgo through GinkgoTB().
var _ = Describe("golden.Assert under Ginkgo", Label("golden"), func() {
	It("passes on the pinned registry", func() {
		golden.Assert(GinkgoTB(), "registry-0.2", currentRegistry(), golden.Hint(registryHint))
	})
	It("reports a mismatch through the Ginkgo TB", func() {
		GinkgoT().Setenv(golden.UpdateEnv, "0")
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "n.golden"), []byte("1\n"), 0o644)).To(Succeed())
		Expect(golden.Check(GinkgoTB(), "n", 1, golden.Dir(dir))).To(Succeed())
		Expect(golden.Check(GinkgoTB(), "n", 2, golden.Dir(dir))).To(MatchError(golden.ErrMismatch))
	})
})
