package memadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// Break damages the canonical history as d says
// (conformance.SourceBreaker): a record written as it is, a record cut
// short, a record holding a byte that is not UTF-8, or a record that is no
// message. The store has no header, so it cannot name another runtime or
// project root: those damages are errors.ErrUnsupported.
func (s source) Break(ctx context.Context, d conformance.Damage) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var rec []byte
	switch d.Kind {
	case conformance.DamageRecord, conformance.DamageTornRecord, conformance.DamageInvalidUTF8:
		if d.Message == nil {
			return fmt.Errorf("memadapter: the damage %s needs a message", d.Kind)
		}
		b, err := contract.AppendMessageJSON(nil, d.Message)
		if err != nil {
			return err
		}
		switch rec = b; d.Kind {
		case conformance.DamageTornRecord:
			rec = b[:len(b)/2]
		case conformance.DamageInvalidUTF8:
			at := bytes.Index(b, []byte(`":"`)) + 3
			rec = slices.Concat(b[:at], []byte{0xff}, b[at:])
		}
	case conformance.DamageTrailing:
		rec = []byte("not a record")
	default:
		return fmt.Errorf("memadapter: damage %q: %w", d.Kind, errors.ErrUnsupported)
	}
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	s.a.keepWholeLocked()
	s.a.records = append(s.a.records, rec)
	s.a.writes++
	return nil
}

// Repair restores the canonical history as it was before the first
// Corrupt or Break since it was last whole (conformance.SourceBreaker).
func (s source) Repair(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if s.a.whole != nil {
		s.a.records, s.a.whole = s.a.whole, nil
		s.a.writes++
	}
	return nil
}

// keepWholeLocked saves the records before the first damage since the
// history was last whole.
func (a *Adapter) keepWholeLocked() {
	if a.whole == nil {
		a.whole = slices.Clone(a.records)
	}
}
