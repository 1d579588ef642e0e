package conformance

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// Setup is what a Factory receives to create one adapter instance: the
// fixture whose history the instance must hold, and the completion transport
// it must inject at its provider boundary.
//
// LocalKVPort is nil except in the local KV checks. When it is set, a
// factory whose adapter supports local KV reuse must configure the adapter
// with this port, enabled, and read the reusable prefix of a payload with
// ReadLocalKVPrompt; a factory whose adapter does not support it ignores
// the port, and the checks are skipped because the capability is not
// declared.
//
// TB is the running test when the checks run under one (package spec sets
// it, and WithTB): a factory may use its TempDir, Cleanup and Log. It is
// nil otherwise, for example under the CLI.
type Setup struct {
	Fixture     Fixture
	Transport   contract.Transport
	LocalKVPort localkv.RuntimePort
	TB          testing.TB
}

// Instance is one adapter created by a Factory, with the project root the
// adapter must report as trusted and a cleanup to run when the run is over.
type Instance struct {
	Adapter             contract.Adapter
	ExpectedProjectRoot string
	// Cleanup, if non-nil, releases what Create made (temporary files). It
	// runs after the adapter's final shutdown, also when a case failed.
	Cleanup func(ctx context.Context) error
	// Source, if non-nil, writes to the runtime's canonical history behind
	// the adapter, so that the source checks can change and damage it. The
	// checks that need it are skipped when it is nil.
	Source Source
	// PrivacyConfig, if non-nil, is the privacy configuration the adapter
	// enforces: the privacy-engine check then requires its enforcement to
	// equal privacy.Engine's under it exactly. It is skipped when nil.
	PrivacyConfig *privacy.Config
	// Limits, if non-empty, declares up front the families of history
	// shapes (gen.Families) the runtime cannot hold: the projection check
	// then draws no history holding one of them, and shows each as a limit
	// of the run, as it shows a refused family. long-history cannot be
	// declared (see MinLongHistoryRefusal).
	Limits []gen.Family
	// Held, if non-nil, is the canonical history as the runtime holds it
	// after seeding, for a runtime that stores a history in its own form.
	// The checks compare every snapshot and rebuild with it, and compare
	// it with the history given: every difference must be one of the
	// holding differences (HoldingDifferences), each shown as a limit of
	// the run; any other difference fails canonical-history and projection.
	Held []contract.Message
}

// Source is the canonical history an instance's adapter projects, as the
// runtime itself writes it. A factory offers it in Instance.Source; the
// adapter never sees these calls, only their effect on the history it
// reads. Its methods take and return plain values (a message in wire JSON
// and an error), so it can cross a process boundary.
type Source interface {
	// Append appends msg, a valid message of the fixture's runtime and
	// session with a new id, at the end of the canonical history, as the
	// runtime would record a new entry. A runtime that cannot hold msg
	// returns Unrepresentable(family), naming a family msg holds, and
	// appends nothing: the family is a limit of the run, and the checks
	// append no more of it.
	Append(ctx context.Context, msg contract.Message) error
	// Corrupt damages the canonical history so that it no longer reads as
	// a valid history (for a file, bytes that do not parse): the adapter
	// must then refuse to project it.
	Corrupt(ctx context.Context) error
}

// Factory creates adapter instances for conformance runs. Adapter authors
// implement it (or use NewFactory) to map the fixture and transport into
// their native runtime.
type Factory interface {
	// Name identifies the factory in reports.
	Name() string
	// Create builds one instance holding setup.Fixture's history.
	Create(ctx context.Context, setup Setup) (Instance, error)
}

// NewFactory returns a Factory with the given name and create function.
func NewFactory(name string, create func(ctx context.Context, setup Setup) (Instance, error)) Factory {
	return funcFactory{name: name, create: create}
}

type funcFactory struct {
	name   string
	create func(ctx context.Context, setup Setup) (Instance, error)
}

func (f funcFactory) Name() string { return f.name }

func (f funcFactory) Create(ctx context.Context, setup Setup) (Instance, error) {
	return f.create(ctx, setup)
}
