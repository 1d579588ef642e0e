package memadapter

import (
	"context"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// ConformanceFactory returns the factory the conformance suite runs: each
// instance gets its own canonical temporary project root, removed by the
// instance's cleanup. With embeddings set, instances expose an embedding port.
func ConformanceFactory(embeddings bool) conformance.Factory {
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
			Embeddings:  embeddings,
		})
		if err != nil {
			return conformance.Instance{Cleanup: cleanup}, err
		}
		return conformance.Instance{Adapter: a, ExpectedProjectRoot: root, Cleanup: cleanup}, nil
	})
}
