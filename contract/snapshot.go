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

// The members a snapshot and a group must have, in the order a missing one
// is reported.
var (
	snapshotMembers = []string{"schemaVersion", "runtimeId", "sessionId", "revision", "projectRoot", "messages", "toolAtomicGroups"}
	groupMembers    = []string{"id", "messageIds", "toolCallIds", "complete"}
)

func (d *decoder) snapshot(s *HistorySnapshot) error {
	*s = HistorySnapshot{}
	req := required{names: snapshotMembers}
	err := d.object("", func(name string) error {
		req.see(name)
		var err error
		switch name {
		case "schemaVersion":
			s.SchemaVersion, err = d.str("schemaVersion")
		case "runtimeId":
			s.RuntimeID, err = d.str("runtimeId")
		case "sessionId":
			s.SessionID, err = d.str("sessionId")
		case "revision":
			s.Revision, err = d.str("revision")
		case "projectRoot":
			s.ProjectRoot, err = d.str("projectRoot")
		case "messages":
			s.Messages = []Message{}
			err = d.array("messages", func(int) error {
				s.Messages = append(s.Messages, Message{})
				return d.message(&s.Messages[len(s.Messages)-1])
			})
		case "toolAtomicGroups":
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
	return req.check(d)
}

func (d *decoder) group(g *ToolAtomicGroup) error {
	*g = ToolAtomicGroup{}
	req := required{names: groupMembers}
	err := d.object("", func(name string) error {
		req.see(name)
		var err error
		switch name {
		case "id":
			g.ID, err = d.str("id")
		case "messageIds":
			g.MessageIDs, err = d.strings("messageIds")
		case "toolCallIds":
			g.ToolCallIDs, err = d.strings("toolCallIds")
		case "complete":
			g.Complete, err = d.boolean("complete")
		default:
			err = d.s.Skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	return req.check(d)
}
