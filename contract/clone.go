package contract

import (
	"encoding/json"
	"slices"
)

// The Clone functions make deep copies: strings are immutable in Go and are
// shared; everything reachable through a pointer, slice or raw JSON value is
// copied, so changing a copy never changes the original. nil stays nil.
// Blocks, optional scalars and raw values are carved out of per-call slabs,
// so copying a 100,000-message history costs a few hundred allocations.
// A call's slabs start small and double up to their full size, so copying
// one message or block allocates about what it holds.

// refill gives slab room for at least need more elements: a new slab
// twice the size of the one before, from 8 up to full (and need, if
// larger). What was carved from the old slab stays where it is.
func refill[T any](slab *[]T, need, full int) {
	*slab = make([]T, 0, max(min(max(2*cap(*slab), 8), full), need))
}

type cloner struct {
	texts   []TextBlock
	calls   []ToolCallBlock
	results []ToolResultBlock
	strs    []string
	nums    []float64
	bools   []bool
	fields  []Field
	blocks  []Block
	bytes   []byte
}

func cloneP[T any](slab *[]T, p *T) *T {
	if p == nil {
		return nil
	}
	if len(*slab) == cap(*slab) {
		refill(slab, 1, 1024)
	}
	*slab = append(*slab, *p)
	return &(*slab)[len(*slab)-1]
}

// slot returns a pointer to a new zero T carved from slab.
func slot[T any](slab *[]T) *T {
	if len(*slab) == cap(*slab) {
		refill(slab, 1, 512)
	}
	var zero T
	*slab = append(*slab, zero)
	return &(*slab)[len(*slab)-1]
}

func (c *cloner) raw(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return v[:0:0] // nil stays nil, empty stays empty
	}
	if len(v) > cap(c.bytes)-len(c.bytes) {
		const full = 64 << 10
		if len(v) > full {
			return append(json.RawMessage(nil), v...)
		}
		refill(&c.bytes, len(v), full)
	}
	start := len(c.bytes)
	c.bytes = append(c.bytes, v...)
	return c.bytes[start:len(c.bytes):len(c.bytes)]
}

func (c *cloner) extra(fs []Field) []Field {
	if len(fs) == 0 {
		return fs[:0:0] // nil stays nil, empty stays empty
	}
	if len(fs) > cap(c.fields)-len(c.fields) {
		refill(&c.fields, len(fs), 256)
	}
	start := len(c.fields)
	for _, f := range fs {
		c.fields = append(c.fields, Field{Name: f.Name, Value: c.raw(f.Value)})
	}
	return c.fields[start:len(c.fields):len(c.fields)]
}

func (c *cloner) block(b Block) Block {
	switch b := b.(type) {
	case *TextBlock:
		p := slot(&c.texts)
		*p = TextBlock{Text: b.Text, Extra: c.extra(b.Extra)}
		return p
	case *ThinkingBlock:
		return &ThinkingBlock{Thinking: b.Thinking, Extra: c.extra(b.Extra)}
	case *ToolCallBlock:
		p := slot(&c.calls)
		*p = ToolCallBlock{ID: b.ID, Name: b.Name, Arguments: c.raw(b.Arguments), Extra: c.extra(b.Extra)}
		return p
	case *ToolResultBlock:
		p := slot(&c.results)
		*p = ToolResultBlock{ToolCallID: b.ToolCallID, ToolName: b.ToolName, Content: b.Content, IsError: b.IsError, Extra: c.extra(b.Extra)}
		return p
	case *ImageBlock:
		return &ImageBlock{MimeType: cloneP(&c.strs, b.MimeType), Data: cloneP(&c.strs, b.Data), Extra: c.extra(b.Extra)}
	case *FileReferenceBlock:
		return &FileReferenceBlock{Path: b.Path, Extra: c.extra(b.Extra)}
	case *ArtifactReferenceBlock:
		return &ArtifactReferenceBlock{ArtifactID: b.ArtifactID, Extra: c.extra(b.Extra)}
	case *SummaryReferenceBlock:
		return &SummaryReferenceBlock{SummaryID: b.SummaryID, Extra: c.extra(b.Extra)}
	case *OpaqueProviderBlock:
		return &OpaqueProviderBlock{OriginalType: cloneP(&c.strs, b.OriginalType), Value: c.raw(b.Value), Extra: c.extra(b.Extra)}
	}
	return b // nil
}

func (c *cloner) message(dst, m *Message) {
	if dst != m { // in place, only the pointers below change
		*dst = *m
	}
	if len(m.Blocks) == 0 {
		dst.Blocks = m.Blocks[:0:0] // nil stays nil, empty stays empty
	} else {
		if len(m.Blocks) > cap(c.blocks)-len(c.blocks) {
			refill(&c.blocks, len(m.Blocks), 1024)
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

// CloneMessages returns a deep copy of msgs.
func CloneMessages(msgs []Message) []Message {
	if msgs == nil {
		return nil
	}
	return AppendClones(make([]Message, 0, len(msgs)), msgs...)
}

// AppendClones appends deep copies of msgs to dst and returns the extended
// slice, growing it as append does. A caller that keeps spare capacity in
// dst copies a longer history without moving what is already there. msgs
// may be exactly the elements past dst's end in that capacity
// (dst[len(dst):len(dst)+len(msgs)]): each is then replaced by its copy in
// place. If msgs overlap those elements in any other way, some copies may
// be of messages already overwritten.
func AppendClones(dst []Message, msgs ...Message) []Message {
	dst = slices.Grow(dst, len(msgs))
	out := dst[len(dst) : len(dst)+len(msgs)]
	var c cloner
	for i := range msgs {
		c.message(&out[i], &msgs[i])
	}
	return dst[:len(dst)+len(msgs)]
}

// CloneGroups returns a deep copy of groups.
func CloneGroups(groups []ToolAtomicGroup) []ToolAtomicGroup {
	if groups == nil {
		return nil
	}
	out := make([]ToolAtomicGroup, len(groups))
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
		out[i] = ToolAtomicGroup{ID: g.ID, MessageIDs: take(g.MessageIDs), ToolCallIDs: take(g.ToolCallIDs), Complete: g.Complete}
	}
	return out
}

// CloneModel returns a deep copy of m (nil for nil).
func CloneModel(m *ModelDescriptor) *ModelDescriptor {
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

// CloneMessage returns a deep copy of m.
func CloneMessage(m *Message) Message {
	var out Message
	var c cloner
	c.message(&out, m)
	return out
}

// CloneBlock returns a deep copy of b (nil for nil).
func CloneBlock(b Block) Block {
	var c cloner
	return c.block(b)
}

// CloneSnapshot returns a deep copy of s, its messages and its groups.
func CloneSnapshot(s *HistorySnapshot) HistorySnapshot {
	out := *s
	out.Messages = CloneMessages(s.Messages)
	out.ToolAtomicGroups = CloneGroups(s.ToolAtomicGroups)
	return out
}
