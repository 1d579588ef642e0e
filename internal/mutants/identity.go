package mutants

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The identity mutants: an adapter and its factory agreeing on a root that
// is not canonical, and a model descriptor that loses members.
var identityCatalogue = []Mutant{
	{
		Name: "trusted-root-through-a-symlink", Breaks: "the trusted project root is symlink-resolved, whatever the factory expects",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder),
		wrap:  plain,
		instance: func(inst *conformance.Instance) error {
			dir, err := os.MkdirTemp("", "mutant-root-*")
			if err != nil {
				return err
			}
			link := filepath.Join(dir, "project")
			if err := os.Symlink(inst.ExpectedProjectRoot, link); err != nil {
				return errors.Join(err, os.RemoveAll(dir))
			}
			inst.Adapter = &linkedRoot{decorator{inst.Adapter}, inst.ExpectedProjectRoot, link}
			inst.ExpectedProjectRoot = link
			clean := inst.Cleanup
			inst.Cleanup = func(ctx context.Context) error {
				var err error
				if clean != nil {
					err = clean(ctx)
				}
				return errors.Join(err, os.RemoveAll(dir))
			}
			return nil
		},
	},
	{
		Name: "model-loses-members", Breaks: "CurrentModel reports the whole model descriptor",
		Fails: all(conformance.CaseIdentity, conformance.CheckInOrder, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return partialModel{decorator{a}} },
	},
}

// linkedRoot reports a symlink to the real root as the trusted root, in
// snapshots too, so that only the rule of a canonical root breaks.
type linkedRoot struct {
	decorator
	root, link string
}

func (m *linkedRoot) TrustedProjectRoot(ctx context.Context) (string, error) {
	_, err := m.Adapter.TrustedProjectRoot(ctx)
	return m.link, err
}

func (m *linkedRoot) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if s.ProjectRoot == m.root {
		s.ProjectRoot = m.link
	}
	return s, err
}

func (m *linkedRoot) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.RebuildDerivedState(ctx)
	if s.ProjectRoot == m.root {
		s.ProjectRoot = m.link
	}
	return s, err
}

// partialModel keeps the provider, id and context window of the model and
// drops the rest.
type partialModel struct{ decorator }

func (m partialModel) CurrentModel(ctx context.Context) (*contract.ModelDescriptor, error) {
	d, err := m.Adapter.CurrentModel(ctx)
	if d != nil {
		d = &contract.ModelDescriptor{Provider: d.Provider, ID: d.ID, ContextWindow: d.ContextWindow}
	}
	return d, err
}
