package contract

// ToolAtomicGroup is one connected tool exchange: every message holding a
// call or result of its tool calls. A group is selected or dropped whole, so
// a parallel batch is never split. Complete is false for an exchange still
// waiting for a result (an incomplete live call).
type ToolAtomicGroup struct {
	ID          string   `json:"id"`
	MessageIDs  []string `json:"messageIds"`
	ToolCallIDs []string `json:"toolCallIds"`
	Complete    bool     `json:"complete"`
}

// HistorySnapshot is a read-only projection of the runtime's canonical
// history: its identity, the trusted project root, the ordered canonical
// messages and their tool atomic groups.
type HistorySnapshot struct {
	SchemaVersion    string            `json:"schemaVersion"`
	RuntimeID        string            `json:"runtimeId"`
	SessionID        string            `json:"sessionId"`
	Revision         string            `json:"revision"`
	ProjectRoot      string            `json:"projectRoot"`
	Messages         []Message         `json:"messages"`
	ToolAtomicGroups []ToolAtomicGroup `json:"toolAtomicGroups"`
}

// AppendSnapshotJSON appends the snapshot's wire JSON, byte-identical to what
// JSON.stringify writes for the same snapshot.
func AppendSnapshotJSON(dst []byte, s *HistorySnapshot) ([]byte, error) {
	w := writer{b: append(dst, '{')}
	w.str("schemaVersion", s.SchemaVersion)
	w.str("runtimeId", s.RuntimeID)
	w.str("sessionId", s.SessionID)
	w.str("revision", s.Revision)
	w.str("projectRoot", s.ProjectRoot)
	w.key("messages")
	w.b = append(w.b, '[')
	for i := range s.Messages {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		var err error
		if w.b, err = AppendMessageJSON(w.b, &s.Messages[i]); err != nil {
			return dst, err
		}
	}
	w.b = append(w.b, ']')
	w.key("toolAtomicGroups")
	w.b = append(w.b, '[')
	for i := range s.ToolAtomicGroups {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendGroupJSON(w.b, &s.ToolAtomicGroups[i])
	}
	w.b = append(w.b, ']')
	return append(w.b, '}'), nil
}

func appendGroupJSON(dst []byte, g *ToolAtomicGroup) []byte {
	w := writer{b: append(dst, '{')}
	w.str("id", g.ID)
	w.strings("messageIds", g.MessageIDs)
	w.strings("toolCallIds", g.ToolCallIDs)
	w.boolean("complete", g.Complete)
	return append(w.b, '}')
}

// MarshalJSON encodes the snapshot as wire JSON (see AppendSnapshotJSON for
// output that is not HTML-escaped by encoding/json).
func (s HistorySnapshot) MarshalJSON() ([]byte, error) { return AppendSnapshotJSON(nil, &s) }

// UnmarshalJSON decodes a snapshot strictly: every member is required, names
// are case-sensitive, and messages decode as Message.UnmarshalJSON does.
// Unknown top-level members are ignored.
func (s *HistorySnapshot) UnmarshalJSON(data []byte) error {
	return decodeWith("snapshot", data, func(d *decoder) error { return d.snapshot(s) })
}

// MarshalJSON encodes the group as wire JSON.
func (g ToolAtomicGroup) MarshalJSON() ([]byte, error) { return appendGroupJSON(nil, &g), nil }

// UnmarshalJSON decodes a group strictly (every member required).
func (g *ToolAtomicGroup) UnmarshalJSON(data []byte) error {
	return decodeWith("group", data, func(d *decoder) error { return d.group(g) })
}

func (d *decoder) snapshot(s *HistorySnapshot) error {
	*s = HistorySnapshot{}
	var seen [7]bool
	names := [7]string{"schemaVersion", "runtimeId", "sessionId", "revision", "projectRoot", "messages", "toolAtomicGroups"}
	err := d.object("", func(name []byte) error {
		var err error
		switch string(name) {
		case "schemaVersion":
			seen[0] = true
			s.SchemaVersion, err = d.str("schemaVersion")
		case "runtimeId":
			seen[1] = true
			s.RuntimeID, err = d.str("runtimeId")
		case "sessionId":
			seen[2] = true
			s.SessionID, err = d.str("sessionId")
		case "revision":
			seen[3] = true
			s.Revision, err = d.str("revision")
		case "projectRoot":
			seen[4] = true
			s.ProjectRoot, err = d.str("projectRoot")
		case "messages":
			seen[5] = true
			s.Messages = []Message{}
			err = d.array("messages", func(int) error {
				s.Messages = append(s.Messages, Message{})
				return d.message(&s.Messages[len(s.Messages)-1])
			})
		case "toolAtomicGroups":
			seen[6] = true
			s.ToolAtomicGroups = []ToolAtomicGroup{}
			err = d.array("toolAtomicGroups", func(int) error {
				s.ToolAtomicGroups = append(s.ToolAtomicGroups, ToolAtomicGroup{})
				return d.group(&s.ToolAtomicGroups[len(s.ToolAtomicGroups)-1])
			})
		default:
			err = d.s.Skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	for i, ok := range seen {
		if !ok {
			return d.missing(names[i])
		}
	}
	return nil
}

func (d *decoder) group(g *ToolAtomicGroup) error {
	*g = ToolAtomicGroup{}
	var seen [4]bool
	names := [4]string{"id", "messageIds", "toolCallIds", "complete"}
	err := d.object("", func(name []byte) error {
		var err error
		switch string(name) {
		case "id":
			seen[0] = true
			g.ID, err = d.str("id")
		case "messageIds":
			seen[1] = true
			g.MessageIDs, err = d.strings("messageIds")
		case "toolCallIds":
			seen[2] = true
			g.ToolCallIDs, err = d.strings("toolCallIds")
		case "complete":
			seen[3] = true
			g.Complete, err = d.boolean("complete")
		default:
			err = d.s.Skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	for i, ok := range seen {
		if !ok {
			return d.missing(names[i])
		}
	}
	return nil
}
