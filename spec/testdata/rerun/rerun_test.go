// Package rerun_test is a broken adapter's conformance suite, nested in a
// labelled container of its own as an adapter repository might nest it.
// The spec package's tests run it in a child process and paste the rerun
// commands its failures print; it is not part of go test ./... .
package rerun_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

// ChildEnv must be set for the suite to run.
const childEnv = "ADAPTERKIT_RERUN_CHILD"

// broken is the example adapter with two defects: snapshots drop their
// last message, and Shutdown blocks from its second call on.
type broken struct {
	contract.Adapter
	mu    sync.Mutex
	calls int
}

func (b *broken) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := b.Adapter.SnapshotHistory(ctx)
	if err == nil && len(s.Messages) > 0 {
		s.Messages = s.Messages[:len(s.Messages)-1]
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	}
	return s, err
}

// release unblocks every blocked Shutdown when the suite ends.
var release = make(chan struct{})

func (b *broken) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.calls++
	n := b.calls
	b.mu.Unlock()
	if n > 1 {
		<-release
	}
	return b.Adapter.Shutdown(ctx)
}

func factory() conformance.Factory {
	base := memadapter.ConformanceFactory(false)
	return conformance.NewFactory("broken example", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		if err == nil {
			inst.Adapter = &broken{Adapter: inst.Adapter}
		}
		return inst, err
	})
}

var _ = ginkgo.Describe("my adapter", ginkgo.Label("my-adapter"), func() {
	spec.Describe(factory(), conformance.WithCallTimeout(300*time.Millisecond), conformance.WithHistories(5))
})

func TestRerunSuite(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as a child process of the spec package's rerun test")
	}
	defer close(release)
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "rerun")
}

// FuzzBroken runs the projection fuzz target on the broken adapter.
func FuzzBroken(f *testing.F) {
	if os.Getenv(childEnv) == "" {
		f.Skip("runs as a child process of the spec package's fuzz test")
	}
	spec.Fuzz(f, factory(), conformance.WithCallTimeout(300*time.Millisecond))
}
