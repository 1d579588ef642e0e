package nodeadapter_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/spec"
)

// The Node.js adapter passes the whole Ginkgo suite through the bridge:
// the seven cases, the extended checks — with its embedding port, so the
// embedding check runs, its texts split into batches of two — and the
// property check.
func TestNodeAdapterPassesTheSuite(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter is not run")
	}
	// A generous call timeout: a loaded machine must not make a working
	// adapter time out.
	spec.Run(t, bridge.NewFactory(bridge.ExecConfig{Path: node, Args: []string{"adapter.mjs", "--embeddings"}, Stderr: os.Stderr,
		Options: bridge.Options{CallTimeout: time.Minute}}))
}
