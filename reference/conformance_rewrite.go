package reference

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract"
)

// Rewrite replaces the message of the history file whose id is msg.ID
// with msg, in place, as a runtime that edits an entry does: the file is
// read and validated, the record replaced, the whole history checked
// again and written to a temporary file that is renamed over the old one,
// so a reader sees the old history or the new one, never a mix.
func (p *historySource) Rewrite(ctx context.Context, msg contract.Message) error {
	const op = "rewrite"
	if err := ctx.Err(); err != nil {
		return err
	}
	path := p.path
	l, err := newLimits(nil)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return openError(op, path, os.O_RDONLY, err)
	}
	h, err := parseHistory(op, path, data, l)
	if err != nil {
		return err
	}
	at := -1
	for i := range h.messages {
		if h.messages[i].ID == msg.ID {
			at = i
			break
		}
	}
	if at < 0 {
		return parseError(op, path, 0, ErrInvalidMessage, fmt.Sprintf("no message has the id of the rewrite (%d bytes)", len(msg.ID)), nil)
	}
	h.messages[at] = msg
	out, _, err := encodeHistory(op, path, &h.header, h.messages, l)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rewrite-*")
	if err != nil {
		return parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be written", err)
	}
	_, err = tmp.Write(out)
	err = errors.Join(err, tmp.Chmod(0o600), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return parseError(op, path, 0, ErrHistoryCorrupt, "file cannot be written", err)
	}
	return syncDir(filepath.Dir(path))
}
