package mutants

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The mutants of operations of different kinds at the same time: each
// answers every call made alone exactly as the reference adapter does, and
// breaks a rule only when a call of another kind runs meanwhile — a source
// write during a snapshot, a completion to another provider during a
// completion.
var pendingConcurrency = []Mutant{
	{
		// The model's mixed bursts catch it when the scheduler puts an
		// append between its two reads: in some runs of one seed only, so
		// no face may count on it.
		Name: "snapshot-revision-read-before-messages", Family: FamilyConcurrency,
		Breaks: "a revision names one content (§7, §12: the SHA-256 of the bytes read); this snapshot takes the revision from one read of the source and the messages from a second, " +
			"so an append between the two gives the new messages the old revision",
		Awaits:        all(conformance.CheckModel),
		ModelByChance: true,
		wrap:          func(a contract.Adapter, _ *env) contract.Adapter { return twoReads{decorator{a}} },
	},
	{
		Name: "completions-share-the-active-provider", Family: FamilyConcurrency,
		Breaks: "the transport receives the payload sanitised for its own request's provider (§8, §9); this adapter keeps the provider whose policy applies " +
			"in one field all completions set, so a remote completion running beside a local one can be sanitised under the local policy and send local-only text",
		Fails:  all(conformance.CheckModel),
		before: substituteAtTransport,
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return &activeProvider{decorator: decorator{a}} },
	},
}

// betweenReads runs between the two reads of a twoReads snapshot, and
// betweenSetAndRead between an activeProvider completion's setting of the
// active provider and its reading of it: they yield, and a test makes
// them wait for the call of another kind that shows the defect.
var (
	betweenReads      = runtime.Gosched
	betweenSetAndRead = runtime.Gosched
)

// twoReads reads the source twice per snapshot: the revision from the
// first read, the messages from the second.
type twoReads struct{ decorator }

func (m twoReads) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	first, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return first, err
	}
	betweenReads()
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err != nil {
		return s, err
	}
	s.Revision = first.Revision
	return s, nil
}

// substituteKey carries, in a completion's context, the payload the
// transport is to receive instead of the one the adapter hands it.
type substituteKey struct{}

// substituteAtTransport makes the transport send the payload a mutant put
// in the request's context, when it put one.
func substituteAtTransport(setup *conformance.Setup) error {
	tr := setup.Transport
	setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
		if p, ok := ctx.Value(substituteKey{}).(json.RawMessage); ok {
			req.Payload = p
		}
		return tr.Send(ctx, req)
	})
	return nil
}

// activeProvider sets the provider of each completion as the active one,
// then sanitises its payload under the policy of whichever provider is
// active by then: the policy of its own, unless another completion set
// another meanwhile. The payload so sanitised is what its transport sends.
type activeProvider struct {
	decorator
	mu     sync.Mutex
	active string
}

func (m *activeProvider) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	m.mu.Lock()
	m.active = req.Provider
	m.mu.Unlock()
	betweenSetAndRead()
	m.mu.Lock()
	active := m.active
	m.mu.Unlock()
	if !contract.IsBlank(active) {
		if res, err := defaultEngine.SanitizePayload(active, req.Payload); err == nil {
			ctx = context.WithValue(ctx, substituteKey{}, res.ForProvider(active).Payload)
		}
	}
	return m.Adapter.Complete(ctx, req)
}
