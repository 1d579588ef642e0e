package contract

// NewRuntimeMessage builds a canonical message of a runtime session: its id
// is "<sessionID>:<entryID>", its source entry and provenance name the entry
// (source runtime-session, with the runtime id), and a message holding a
// tool call or result is flagged atomic. Other optional fields stay absent.
func NewRuntimeMessage(runtimeID, sessionID, entryID string, role Role, blocks ...Block) Message {
	m := Message{
		ID:            sessionID + ":" + entryID,
		SourceEntryID: entryID,
		Role:          role,
		Blocks:        blocks,
		Provenance: Provenance{
			Source:    SourceRuntimeSession,
			SessionID: sessionID,
			EntryID:   entryID,
			RuntimeID: new(runtimeID),
		},
	}
	for _, b := range blocks {
		if t := b.Type(); t == BlockToolCall || t == BlockToolResult {
			m.Flags.Atomic = new(true)
			break
		}
	}
	return m
}
