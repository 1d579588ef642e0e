package bridge

import (
	"testing"

	"github.com/ds4context/adapterkit/spec"
)

// The whole Ginkgo suite — the seven cases each on a fresh instance, the
// extended checks and the property check — passes for the reference
// adapter in a child process.
func TestSuiteOverAProcess(t *testing.T) {
	spec.Run(t, childFactory("serve-reference", Options{}))
}
