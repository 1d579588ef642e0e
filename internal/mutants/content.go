package mutants

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// The content mutants: snapshots that keep every id and group but lose
// what the messages hold — the defects a projection that compares ids only
// lets through — and one that reorders groups, which the contract allows.
var contentCatalogue = []Mutant{
	{
		Name: "empties-text-blocks", Breaks: "a snapshot keeps every block's content",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				for i, b := range m.Blocks {
					if t, ok := b.(*contract.TextBlock); ok {
						m.Blocks[i] = &contract.TextBlock{Text: "", Extra: t.Extra}
					}
				}
			}}
		},
	},
	{
		Name: "every-role-becomes-user", Breaks: "a snapshot keeps every message's role",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				if m.Role != contract.RoleTool {
					m.Role = contract.RoleUser
				}
			}}
		},
	},
	{
		Name: "drops-image-and-reference-blocks", Breaks: "a snapshot keeps blocks of every type",
		Fails: all(conformance.CheckProjection, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				m.Blocks = slices.DeleteFunc(m.Blocks, func(b contract.Block) bool {
					switch b.Type() {
					case contract.BlockImage, contract.BlockFileReference, contract.BlockArtifactReference, contract.BlockSummaryReference:
						return true
					}
					return false
				})
			}}
		},
	},
	{
		Name: "drops-unknown-members", Breaks: "a snapshot keeps the members it does not understand, verbatim",
		Fails: all(conformance.CheckProjection, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				m.Extra = nil
				m.Provenance.Extra = nil
				m.Flags.Extra = nil
			}}
		},
	},
	{
		Name: "drops-created-at", Breaks: "a snapshot keeps each message's createdAt",
		Fails: all(conformance.CheckProjection, conformance.CheckModel),
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) { m.CreatedAt = nil }}
		},
	},
	{
		Name: "ids-stripped-of-combining-marks", Breaks: "ids are kept exactly as the runtime wrote them",
		Fails: all(conformance.CheckProjection, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return strippedIDs{decorator{a}} },
	},
	{
		Name: "edits-the-history-it-was-given", Breaks: "a snapshot holds the canonical history as the runtime was given it",
		Fails: all(conformance.CaseCanonicalHistory, conformance.CheckInOrder, conformance.CheckProjection, conformance.CheckSourceAppend, conformance.CheckModel),
		wrap:  plain,
		before: func(setup *conformance.Setup) error {
			for _, m := range setup.Fixture.Messages {
				for i, b := range m.Blocks {
					if t, ok := b.(*contract.TextBlock); ok {
						t.Text = ""
						m.Blocks[i] = t
					}
				}
			}
			return nil
		},
	},
	{
		// Allowed: the contract does not fix the order of groups across
		// implementations, so a snapshot with its groups reversed passes.
		Name: "reverses-group-order", Breaks: "nothing: groups are compared as a set",
		wrap: func(a contract.Adapter, _ *env) contract.Adapter { return reversedGroups{decorator{a}} },
	},
	{
		Name: "completion-written-to-history", Breaks: "completion output is runtime-owned and never written to canonical history",
		Fails: all(conformance.CheckConcurrency, conformance.CheckCancellation, conformance.CheckModel),
		wrap:  func(a contract.Adapter, _ *env) contract.Adapter { return &writesCompletions{decorator: decorator{a}} },
	},
}

// projected changes every message of every snapshot and rebuild with edit,
// on copies.
type projected struct {
	decorator
	edit func(m *contract.Message)
}

func (p projected) apply(s contract.HistorySnapshot, err error) (contract.HistorySnapshot, error) {
	if err != nil {
		return s, err
	}
	s.Messages = contract.CloneMessages(s.Messages)
	for i := range s.Messages {
		p.edit(&s.Messages[i])
	}
	return s, nil
}

func (p projected) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	return p.apply(p.Adapter.SnapshotHistory(ctx))
}

func (p projected) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	return p.apply(p.Adapter.RebuildDerivedState(ctx))
}

// reversedGroups lists every snapshot's groups in reverse order.
type reversedGroups struct{ decorator }

func (m reversedGroups) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	s.ToolAtomicGroups = slices.Clone(s.ToolAtomicGroups)
	slices.Reverse(s.ToolAtomicGroups)
	return s, err
}

// writesCompletions appends a synthetic message to its snapshots once a
// completion has completed, as an adapter persisting provider output into
// canonical history would.
type writesCompletions struct {
	decorator
	wrote atomic.Bool
}

func (m *writesCompletions) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	r := m.Adapter.Complete(ctx, req)
	if r.Status == contract.StatusCompleted {
		m.wrote.Store(true)
	}
	return r
}

func (m *writesCompletions) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := m.Adapter.SnapshotHistory(ctx)
	if err == nil && m.wrote.Load() {
		entry := "completion-output"
		s.Messages = append(slices.Clone(s.Messages), contract.NewRuntimeMessage(s.RuntimeID, s.SessionID, entry, contract.RoleAssistant,
			&contract.TextBlock{Text: "completion"}))
		s.Revision += "+output"
	}
	return s, err
}
