package gen

import (
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
