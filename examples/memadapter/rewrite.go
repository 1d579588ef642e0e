package memadapter

import (
	"context"

	"github.com/ds4context/adapterkit/contract"
)

// Rewrite replaces the message of the canonical history whose id is
// msg.ID with msg, in place, as a runtime that edits an entry does.
func (s source) Rewrite(ctx context.Context, msg contract.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.a.rewriteRecord(msg)
}

// rewriteRecord replaces the record of the message with msg's id. It
// fails when no record decodes to a message with that id.
func (a *Adapter) rewriteRecord(msg contract.Message) error {
	b, err := contract.AppendMessageJSON(nil, &msg)
	if err != nil {
		return ErrInvalidHistory
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, rec := range a.records {
		if m, err := contract.DecodeMessage(rec); err == nil && m.ID == msg.ID {
			a.records[i] = b
			a.writes++
			return nil
		}
	}
	return ErrInvalidHistory
}
