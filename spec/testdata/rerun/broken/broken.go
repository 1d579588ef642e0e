// Package broken is the broken adapter of the spec package's rerun tests:
// the example adapter with three defects, which the test packages beside
// it run the suite on.
package broken

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
)

// ChildEnv must be set for the suites to run.
const ChildEnv = "ADAPTERKIT_RERUN_CHILD"

// broken is the example adapter with three defects: snapshots drop their
// last message, Shutdown blocks from its second call on, and privacy
// enforcement lets the payload through to a remote provider unsanitised.
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

// release unblocks every blocked Shutdown once closed.
var (
	release = make(chan struct{})
	once    sync.Once
)

// Release unblocks every blocked Shutdown; a suite calls it when it ends.
func Release() { once.Do(func() { close(release) }) }

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

// Factory returns the broken adapter's factory.
func Factory() conformance.Factory {
	base := memadapter.ConformanceFactory()
	return conformance.NewFactory("broken example", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		if err == nil {
			inst.Adapter = &broken{Adapter: inst.Adapter}
		}
		return inst, err
	})
}

func (b *broken) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	res, err := b.Adapter.EnforcePrivacy(ctx, req)
	if err != nil {
		return res, err
	}
	raw, err := json.Marshal(req.Payload)
	if err != nil {
		return res, err
	}
	res.Payload = raw
	return res, nil
}
