package golden_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/fixtures"
	"github.com/ds4context/adapterkit/golden"
	"github.com/ds4context/adapterkit/reference"
)

// referencePin is what the reference adapter reports for one reference
// JSONL fixture: the class of its error, the diagnostics it recorded, the
// issues of an invalid history, and the groups of a valid one. Error texts
// and revisions are left out: they name the temporary folder.
type referencePin struct {
	Name        string                     `json:"name"`
	Error       string                     `json:"error"`
	Diagnostics []contract.Diagnostic      `json:"diagnostics"`
	Issues      []contract.ValidationIssue `json:"issues,omitempty"`
	Messages    int                        `json:"messages"`
	Groups      []contract.ToolAtomicGroup `json:"groups"`
}

// errorClass names the reference sentinel err wraps.
func errorClass(err error) string {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"none", nil},
		{"history-corrupt", reference.ErrHistoryCorrupt},
		{"history-missing", reference.ErrHistoryMissing},
		{"history-too-large", reference.ErrHistoryTooLarge},
		{"identity-mismatch", reference.ErrIdentityMismatch},
		{"history-invalid", reference.ErrHistoryInvalid},
	} {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "unexpected"
}

// TestReferenceJSONLGolden pins how the reference adapter reads every
// reference JSONL fixture, valid or corrupted.
func TestReferenceJSONLGolden(t *testing.T) {
	ctx := context.Background()
	set := fixtures.ReferenceJSONL()
	var pins []referencePin
	for _, f := range set.Files {
		path, root, err := f.Install(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		a, err := reference.New(reference.Options{
			HistoryPath: path, RuntimeID: set.RuntimeID, ProjectRoot: root,
			Transport: contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
				return nil, errors.New("no transport in this test")
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := a.SnapshotHistory(ctx)
		p := referencePin{Name: f.Name, Error: errorClass(err), Diagnostics: a.Diagnostics(),
			Messages: len(snap.Messages), Groups: snap.ToolAtomicGroups}
		var ve *reference.ValidationError
		if errors.As(err, &ve) {
			p.Issues = ve.Issues
		}
		if p.Groups == nil {
			p.Groups = []contract.ToolAtomicGroup{}
		}
		pins = append(pins, p)
		if err := a.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	golden.Assert(t, "reference-jsonl-outcomes", pins)
}
