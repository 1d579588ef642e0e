package gen

import (
	"slices"
	"strconv"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// SnapshotOptions bounds the snapshots SnapshotOf generates.
type SnapshotOptions struct {
	// MinMessages and MaxMessages bound the number of messages (a
	// MaxMessages of 0 means 24).
	MinMessages int
	MaxMessages int
}

// Snapshot returns a generator of valid history snapshots of up to 24
// messages: the current schema version, non-blank identity and project
// root, a History for that identity, and the groups BuildToolAtomicGroups
// derives from it, so ValidateHistorySnapshot reports nothing.
func Snapshot() *rapid.Generator[contract.HistorySnapshot] {
	return SnapshotOf(SnapshotOptions{})
}

// SnapshotOf returns a generator of valid snapshots within the options'
// bounds (see Snapshot).
func SnapshotOf(opts SnapshotOptions) *rapid.Generator[contract.HistorySnapshot] {
	return rapid.Custom(func(t *rapid.T) contract.HistorySnapshot {
		runtimeID := nonBlank("runtime").Draw(t, "runtimeId")
		sessionID := nonBlank("s").Draw(t, "sessionId")
		messages := HistoryOf(HistoryOptions{
			RuntimeID:   runtimeID,
			SessionID:   sessionID,
			MinMessages: opts.MinMessages,
			MaxMessages: opts.MaxMessages,
		}).Draw(t, "messages")
		return contract.HistorySnapshot{
			SchemaVersion:    contract.HistorySchemaVersion,
			RuntimeID:        runtimeID,
			SessionID:        sessionID,
			Revision:         strconv.Itoa(rapid.IntRange(0, 1<<20).Draw(t, "revision")) + tag().Draw(t, "revisionTag"),
			ProjectRoot:      "/work/" + nonBlank("p").Draw(t, "projectRoot"),
			Messages:         messages,
			ToolAtomicGroups: contract.BuildToolAtomicGroups(messages),
		}
	})
}

// CloneSnapshot returns a deep copy of s: changing the copy, its messages,
// blocks, raw values or groups never changes s.
func CloneSnapshot(s *contract.HistorySnapshot) contract.HistorySnapshot {
	c := *s
	if s.Messages != nil {
		c.Messages = make([]contract.Message, len(s.Messages))
		for i := range s.Messages {
			c.Messages[i] = CloneMessage(&s.Messages[i])
		}
	}
	if s.ToolAtomicGroups != nil {
		c.ToolAtomicGroups = make([]contract.ToolAtomicGroup, len(s.ToolAtomicGroups))
		for i, g := range s.ToolAtomicGroups {
			g.MessageIDs = slices.Clone(g.MessageIDs)
			g.ToolCallIDs = slices.Clone(g.ToolCallIDs)
			c.ToolAtomicGroups[i] = g
		}
	}
	return c
}

// CloneMessage returns a deep copy of m.
func CloneMessage(m *contract.Message) contract.Message {
	c := *m
	c.CreatedAt = clonePtr(m.CreatedAt)
	c.Provider = clonePtr(m.Provider)
	c.Model = clonePtr(m.Model)
	c.TokenEstimate = clonePtr(m.TokenEstimate)
	c.Provenance.OriginalRole = clonePtr(m.Provenance.OriginalRole)
	c.Provenance.RuntimeID = clonePtr(m.Provenance.RuntimeID)
	c.Provenance.Extra = cloneFields(m.Provenance.Extra)
	c.Flags.Pinned = clonePtr(m.Flags.Pinned)
	c.Flags.Atomic = clonePtr(m.Flags.Atomic)
	c.Flags.LocalOnly = clonePtr(m.Flags.LocalOnly)
	c.Flags.Synthetic = clonePtr(m.Flags.Synthetic)
	c.Flags.Extra = cloneFields(m.Flags.Extra)
	c.Extra = cloneFields(m.Extra)
	if m.Blocks != nil {
		c.Blocks = make([]contract.Block, len(m.Blocks))
		for i, b := range m.Blocks {
			c.Blocks[i] = CloneBlock(b)
		}
	}
	return c
}

// CloneBlock returns a deep copy of b (nil for nil).
func CloneBlock(b contract.Block) contract.Block {
	switch b := b.(type) {
	case *contract.TextBlock:
		c := *b
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.ThinkingBlock:
		c := *b
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.ToolCallBlock:
		c := *b
		c.Arguments = slices.Clone(b.Arguments)
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.ToolResultBlock:
		c := *b
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.ImageBlock:
		c := *b
		c.MimeType = clonePtr(b.MimeType)
		c.Data = clonePtr(b.Data)
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.FileReferenceBlock:
		c := *b
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.ArtifactReferenceBlock:
		c := *b
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.SummaryReferenceBlock:
		c := *b
		c.Extra = cloneFields(b.Extra)
		return &c
	case *contract.OpaqueProviderBlock:
		c := *b
		c.OriginalType = clonePtr(b.OriginalType)
		c.Value = slices.Clone(b.Value)
		c.Extra = cloneFields(b.Extra)
		return &c
	}
	return nil
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneFields(fs []contract.Field) []contract.Field {
	if fs == nil {
		return nil
	}
	out := make([]contract.Field, len(fs))
	for i, f := range fs {
		out[i] = contract.Field{Name: f.Name, Value: slices.Clone(f.Value)}
	}
	return out
}
