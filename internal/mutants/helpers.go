package mutants

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// ownAdapterName is the adapterName of the mutants and variants that stand
// for an adapter of their own rather than for the reference adapter.
const ownAdapterName = "acme-jsonl-adapter"

// ownName is its adapter under a name of its own: only an adapter naming
// itself ds4-context-reference-adapter-go is held to what SPEC says of the
// reference adapter alone (§9's reasons, §12's diagnostics), so a defect
// another adapter can have is shown on one that is not the reference.
type ownName struct{ decorator }

func (m ownName) Identity() contract.Identity {
	id := m.Adapter.Identity()
	id.AdapterName = ownAdapterName
	return id
}

// named returns a wrap giving the adapter wrap makes a name of its own.
func named(wrap func(contract.Adapter, *env) contract.Adapter) func(contract.Adapter, *env) contract.Adapter {
	return func(a contract.Adapter, e *env) contract.Adapter { return ownName{decorator{wrap(a, e)}} }
}

// errNoHistoryFile is returned when the base factory's instance has no
// history file a mutant can read (it is not the reference factory).
var errNoHistoryFile = errors.New("mutants: the base factory's Source is not the reference factory's history file")

// historyPath returns the history file of an instance the reference
// factory created: its Source names that file (its String is the path).
func historyPath(inst *conformance.Instance) (string, error) {
	if inst.Source == nil {
		return "", errNoHistoryFile
	}
	path := fmt.Sprint(inst.Source)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", errNoHistoryFile
	}
	return path, nil
}

// closedOrCancelled reports whether err is the error of a closed adapter
// or of an ended context: no read failed.
func closedOrCancelled(err error) bool {
	return errors.Is(err, reference.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
