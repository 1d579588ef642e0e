package gen

import (
	"strconv"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// SnapshotOptions bounds the snapshots SnapshotOf generates.
type SnapshotOptions struct {
	// MinMessages and MaxMessages bound the number of messages as in
	// HistoryOptions (a MaxMessages of 0 means History's sizes).
	MinMessages int
	MaxMessages int
}

// Snapshot returns a generator of valid history snapshots: the current
// schema version, non-blank identity and project root, a History for that
// identity (so about one snapshot in sixteen holds 100 to 3,000 messages), and the groups BuildToolAtomicGroups
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
