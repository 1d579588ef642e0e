package conformance

import (
	"context"
	"errors"

	"github.com/ds4context/adapterkit/contract"
)

// SourceBreaker is implemented by a Source that can also damage the
// canonical history in the ways SPEC makes a source one an adapter must
// refuse to project (§4: an invalid, corrupt or identity-mismatched
// source; §7: a history that does not validate), and undo the damage, as
// a careless or hostile program writing the runtime's store would. The
// model check breaks the source, requires every read to fail — with an
// error that quotes no history text — then repairs it and requires the
// history back. It is optional: without it those operations are skipped,
// saying why.
type SourceBreaker interface {
	// Break damages the history as d says. A damage the runtime's store
	// cannot take (a store of structured entries holds no torn record)
	// returns an error matching errors.ErrUnsupported and changes
	// nothing.
	Break(ctx context.Context, d Damage) error
	// Repair undoes every Break and Corrupt since the history was last
	// whole, leaving it as it was then.
	Repair(ctx context.Context) error
}

// Damage is one way to break a canonical history.
type Damage struct {
	// Kind says what the damage does.
	Kind DamageKind `json:"kind"`
	// Message is the message the record kinds write (DamageRecord,
	// DamageTornRecord, DamageInvalidUTF8); nil for the others.
	Message *contract.Message `json:"message,omitempty"`
}

// DamageKind names a way to break a canonical history.
type DamageKind string

// The damages a SourceBreaker may be asked for.
const (
	// DamageRecord writes Message as the history's next entry, as it is:
	// a message SPEC §7's validation rejects beside the others (a
	// duplicate id, provenance of another session or runtime, a tool
	// result whose call the history does not hold).
	DamageRecord DamageKind = "record"
	// DamageTornRecord writes the start of Message's entry only, as a
	// write cut short leaves it.
	DamageTornRecord DamageKind = "torn-record"
	// DamageInvalidUTF8 writes Message's entry with bytes that are not
	// UTF-8 inside one of its texts.
	DamageInvalidUTF8 DamageKind = "invalid-utf8"
	// DamageTrailing writes bytes after the last entry that are no entry.
	DamageTrailing DamageKind = "trailing"
	// DamageIdentity makes the history belong to another runtime id.
	DamageIdentity DamageKind = "identity"
	// DamageRoot makes the history name another existing project root
	// than the one the adapter trusts.
	DamageRoot DamageKind = "root"
)

// DamageKinds returns every damage kind, always in the same order.
func DamageKinds() []DamageKind {
	return []DamageKind{DamageRecord, DamageTornRecord, DamageInvalidUTF8, DamageTrailing, DamageIdentity, DamageRoot}
}

// noBreaker is the skip reason of what needs a SourceBreaker.
const noBreaker = "the instance's Source does not implement SourceBreaker, so the history cannot be broken and repaired"

// breaker returns the source's break and repair hooks, bounded, or nils
// when the instance's Source lacks them.
func (b *boundedSource) breaker() (brk func(context.Context, Damage) error, repair func(context.Context) error) {
	sb, ok := b.inner.(SourceBreaker)
	if !ok {
		return nil, nil
	}
	brk = func(ctx context.Context, d Damage) (err error) {
		ctx, cancel := boundedContext(ctx, b.bound)
		defer cancel()
		bounded("Source.Break", b.bound, func() { err = sb.Break(ctx, d) })
		return err
	}
	repair = func(ctx context.Context) (err error) {
		ctx, cancel := boundedContext(ctx, b.bound)
		defer cancel()
		bounded("Source.Repair", b.bound, func() { err = sb.Repair(ctx) })
		return err
	}
	return brk, repair
}

// unsupported reports whether err says the source cannot take a damage.
func unsupported(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
