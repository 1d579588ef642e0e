package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/fixtures"
	"github.com/ds4context/adapterkit/reference"
)

// writeReference writes messages as a reference history file of the
// fixture identity with the reference adapter's own writer, in a temporary
// folder, and returns the bytes with the folder's project root replaced by
// the ProjectRoot placeholder, so the result does not depend on where it
// was made.
func writeReference(messages []contract.Message) ([]byte, error) {
	dir, err := os.MkdirTemp("", "fixturegen-reference-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "project")
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "history", "session.jsonl")
	h := reference.Header{RuntimeID: fixtures.HistoryRuntimeID, SessionID: fixtures.HistorySessionID, ProjectRoot: root}
	if err := reference.CreateHistory(context.Background(), path, h, messages); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	quoted := str(root)
	if n := bytes.Count(data, quoted); n != 1 {
		return nil, fmt.Errorf("build: the project root occurs %d times in the reference file, want once (in the header)", n)
	}
	return bytes.Replace(data, quoted, str(fixtures.ProjectRoot), 1), nil
}
