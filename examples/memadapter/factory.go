package memadapter

import (
	"context"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// FactoryOption configures ConformanceFactory.
type FactoryOption func(*Options)

// WithEmbeddings gives every instance a deterministic local embedding port.
func WithEmbeddings() FactoryOption { return func(o *Options) { o.Embeddings = true } }

// ConformanceFactory returns the factory the conformance suite runs: each
// instance gets its own canonical temporary project root, removed by the
// instance's cleanup. With WithEmbeddings, instances expose an embedding
// port.
// Each instance's Source appends to, rewrites messages of (it is a
// conformance.SourceRewriter) and corrupts the adapter's canonical history,
// for the suite's source checks and its model check.
func ConformanceFactory(opts ...FactoryOption) conformance.Factory {
	var configured Options
	for _, o := range opts {
		o(&configured)
	}
	return conformance.NewFactory(Name, func(_ context.Context, setup conformance.Setup) (conformance.Instance, error) {
		dir, err := os.MkdirTemp("", "memadapter-*")
		if err != nil {
			return conformance.Instance{}, err
		}
		cleanup := func(context.Context) error { return os.RemoveAll(dir) }
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return conformance.Instance{Cleanup: cleanup}, err
		}
		model := setup.Fixture.Model
		a, err := New(Options{
			RuntimeID:   setup.Fixture.RuntimeID,
			SessionID:   setup.Fixture.SessionID,
			ProjectRoot: root,
			Model:       &model,
			Messages:    setup.Fixture.Messages,
			Transport:   setup.Transport,
			Embeddings:  configured.Embeddings,
		})
		if err != nil {
			return conformance.Instance{Cleanup: cleanup}, err
		}
		cfg := privacy.DefaultConfig() // what the adapter enforces (privacy.go)
		return conformance.Instance{Adapter: a, ExpectedProjectRoot: root, Cleanup: cleanup, Source: source{a}, PrivacyConfig: &cfg}, nil
	})
}

// source is the conformance Source of an instance: the adapter's in-memory
// canonical history, written as the runtime writes it. Corrupt tears the
// last record in half.
type source struct{ a *Adapter }

func (s source) Append(ctx context.Context, msg contract.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.a.appendRecord(msg)
}

func (s source) Corrupt(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.a.tearLastRecord()
}
