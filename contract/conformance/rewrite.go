package conformance

import (
	"context"

	"github.com/ds4context/adapterkit/contract"
)

// SourceRewriter is implemented by a Source that can also change a message
// of the canonical history in place, as a runtime that edits or redacts an
// entry does. It is optional: the checks that need it (the model check's
// rewrite operation) skip it, saying why, when an instance's Source lacks
// it.
type SourceRewriter interface {
	// Rewrite replaces the message whose id is msg.ID with msg, at the
	// same position. msg is valid, keeps the id, provenance and tool
	// blocks of the message it replaces, so the history stays valid. It
	// errors when no message has that id. A runtime that cannot hold msg
	// returns Unrepresentable(family), naming a family msg holds, and
	// leaves the message as it was: the family is a limit of the run.
	Rewrite(ctx context.Context, msg contract.Message) error
}

// noRewrite is the skip reason of what needs a SourceRewriter.
const noRewrite = "the instance's Source does not implement SourceRewriter, so no message can be changed in place"

// rewriter returns the source's rewrite hook, bounded, or nil when the
// instance's Source lacks one.
func (b *boundedSource) rewriter() func(ctx context.Context, msg contract.Message) error {
	rw, ok := b.inner.(SourceRewriter)
	if !ok {
		return nil
	}
	return func(ctx context.Context, msg contract.Message) (err error) {
		ctx, cancel := boundedContext(ctx, b.bound)
		defer cancel()
		bounded("Source.Rewrite", b.bound, func() { err = rw.Rewrite(ctx, msg) })
		return err
	}
}
