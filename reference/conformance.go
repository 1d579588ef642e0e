package reference

import (
	"context"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// NewConformanceFactory returns the conformance factory of the reference
// adapter. Each Create makes a fresh temporary folder holding a project
// root and a history file written with CreateHistory from the fixture,
// and an adapter over them with the fixture's runtime id and model and the
// given transport. The instance's cleanup removes the folder.
func NewConformanceFactory() conformance.Factory {
	return conformance.NewFactory(AdapterName, createConformanceInstance)
}

func createConformanceInstance(ctx context.Context, setup conformance.Setup) (inst conformance.Instance, err error) {
	dir, err := os.MkdirTemp("", "ds4-reference-conformance-")
	if err != nil {
		return inst, err
	}
	cleanup := func(context.Context) error { return os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	rootPath := filepath.Join(dir, "project")
	if err := os.Mkdir(rootPath, 0o700); err != nil {
		return inst, err
	}
	root, err := resolveRoot(rootPath)
	if err != nil {
		return inst, err
	}
	fx := setup.Fixture
	path := filepath.Join(dir, "history", "session.jsonl")
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
	if err := CreateHistory(ctx, path, h, fx.Messages); err != nil {
		return inst, err
	}
	a, err := New(Options{
		HistoryPath: path,
		RuntimeID:   fx.RuntimeID,
		ProjectRoot: root,
		Model:       &fx.Model,
		Transport:   setup.Transport,
	})
	if err != nil {
		return inst, err
	}
	return conformance.Instance{Adapter: a, ExpectedProjectRoot: root, Cleanup: cleanup}, nil
}
