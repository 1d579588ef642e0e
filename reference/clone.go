package reference

import (
	"encoding/json"

	"github.com/ds4context/adapterkit/contract"
)

// Snapshots handed to callers are deep copies of the cached history, so no
// caller can alter the cache through them. Strings are immutable in Go and
// are shared; everything reachable through a pointer, slice or raw JSON
// value is copied. Optional scalars are carved out of per-call slabs to keep
// the number of allocations low.

type cloner struct {
	texts   []contract.TextBlock
	calls   []contract.ToolCallBlock
	results []contract.ToolResultBlock
	strs    []string
	nums    []float64
	bools   []bool
	fields  []contract.Field
	blocks  []contract.Block
	bytes   []byte
}

func cloneP[T any](slab *[]T, p *T) *T {
	if p == nil {
		return nil
	}
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, 1024)
	}
	*slab = append(*slab, *p)
	return &(*slab)[len(*slab)-1]
}

// slot returns a pointer to a new zero T carved from slab.
func slot[T any](slab *[]T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, 512)
	}
	var zero T
	*slab = append(*slab, zero)
	return &(*slab)[len(*slab)-1]
}

func (c *cloner) raw(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	if len(v) > cap(c.bytes)-len(c.bytes) {
		n := 64 << 10
		if len(v) > n {
			return append(json.RawMessage(nil), v...)
		}
		c.bytes = make([]byte, 0, n)
	}
	start := len(c.bytes)
	c.bytes = append(c.bytes, v...)
	return c.bytes[start:len(c.bytes):len(c.bytes)]
}

func (c *cloner) extra(fs []contract.Field) []contract.Field {
	if fs == nil {
		return nil
	}
	if len(fs) > cap(c.fields)-len(c.fields) {
		c.fields = make([]contract.Field, 0, max(256, len(fs)))
	}
	start := len(c.fields)
	for _, f := range fs {
		c.fields = append(c.fields, contract.Field{Name: f.Name, Value: c.raw(f.Value)})
	}
	return c.fields[start:len(c.fields):len(c.fields)]
}

func (c *cloner) block(b contract.Block) contract.Block {
	switch b := b.(type) {
	case *contract.TextBlock:
		p := slot(&c.texts)
		*p = contract.TextBlock{Text: b.Text, Extra: c.extra(b.Extra)}
		return p
	case *contract.ThinkingBlock:
		return &contract.ThinkingBlock{Thinking: b.Thinking, Extra: c.extra(b.Extra)}
	case *contract.ToolCallBlock:
		p := slot(&c.calls)
		*p = contract.ToolCallBlock{ID: b.ID, Name: b.Name, Arguments: c.raw(b.Arguments), Extra: c.extra(b.Extra)}
		return p
	case *contract.ToolResultBlock:
		p := slot(&c.results)
		*p = contract.ToolResultBlock{ToolCallID: b.ToolCallID, ToolName: b.ToolName, Content: b.Content, IsError: b.IsError, Extra: c.extra(b.Extra)}
		return p
	case *contract.ImageBlock:
		return &contract.ImageBlock{MimeType: cloneP(&c.strs, b.MimeType), Data: cloneP(&c.strs, b.Data), Extra: c.extra(b.Extra)}
	case *contract.FileReferenceBlock:
		return &contract.FileReferenceBlock{Path: b.Path, Extra: c.extra(b.Extra)}
	case *contract.ArtifactReferenceBlock:
		return &contract.ArtifactReferenceBlock{ArtifactID: b.ArtifactID, Extra: c.extra(b.Extra)}
	case *contract.SummaryReferenceBlock:
		return &contract.SummaryReferenceBlock{SummaryID: b.SummaryID, Extra: c.extra(b.Extra)}
	case *contract.OpaqueProviderBlock:
		return &contract.OpaqueProviderBlock{OriginalType: cloneP(&c.strs, b.OriginalType), Value: c.raw(b.Value), Extra: c.extra(b.Extra)}
	}
	return b // nil: messages in the cache were decoded and never hold one
}

func (c *cloner) message(dst, m *contract.Message) {
	*dst = *m
	if m.Blocks != nil {
		if len(m.Blocks) > cap(c.blocks)-len(c.blocks) {
			c.blocks = make([]contract.Block, 0, max(1024, len(m.Blocks)))
		}
		start := len(c.blocks)
		for _, b := range m.Blocks {
			c.blocks = append(c.blocks, c.block(b))
		}
		dst.Blocks = c.blocks[start:len(c.blocks):len(c.blocks)]
	}
	dst.CreatedAt = cloneP(&c.nums, m.CreatedAt)
	dst.Provider = cloneP(&c.strs, m.Provider)
	dst.Model = cloneP(&c.strs, m.Model)
	dst.TokenEstimate = cloneP(&c.nums, m.TokenEstimate)
	dst.Extra = c.extra(m.Extra)
	p := &dst.Provenance
	p.OriginalRole = cloneP(&c.strs, m.Provenance.OriginalRole)
	p.RuntimeID = cloneP(&c.strs, m.Provenance.RuntimeID)
	p.Extra = c.extra(m.Provenance.Extra)
	f := &dst.Flags
	f.Pinned = cloneP(&c.bools, m.Flags.Pinned)
	f.Atomic = cloneP(&c.bools, m.Flags.Atomic)
	f.LocalOnly = cloneP(&c.bools, m.Flags.LocalOnly)
	f.Synthetic = cloneP(&c.bools, m.Flags.Synthetic)
	f.Extra = c.extra(m.Flags.Extra)
}

func cloneMessages(msgs []contract.Message) []contract.Message {
	out := make([]contract.Message, len(msgs))
	var c cloner
	for i := range msgs {
		c.message(&out[i], &msgs[i])
	}
	return out
}

func cloneGroups(groups []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
	out := make([]contract.ToolAtomicGroup, len(groups))
	n := 0
	for i := range groups {
		n += len(groups[i].MessageIDs) + len(groups[i].ToolCallIDs)
	}
	strs := make([]string, 0, n)
	take := func(s []string) []string {
		if s == nil {
			return nil
		}
		start := len(strs)
		strs = append(strs, s...)
		return strs[start:len(strs):len(strs)]
	}
	for i, g := range groups {
		out[i] = contract.ToolAtomicGroup{ID: g.ID, MessageIDs: take(g.MessageIDs), ToolCallIDs: take(g.ToolCallIDs), Complete: g.Complete}
	}
	return out
}

func cloneModel(m *contract.ModelDescriptor) *contract.ModelDescriptor {
	if m == nil {
		return nil
	}
	c := *m
	if m.MaxTokens != nil {
		c.MaxTokens = new(*m.MaxTokens)
	}
	if m.Reasoning != nil {
		c.Reasoning = new(*m.Reasoning)
	}
	if m.Input != nil {
		c.Input = append([]string{}, m.Input...)
	}
	if m.Cost != nil {
		c.Cost = new(*m.Cost)
	}
	return &c
}
