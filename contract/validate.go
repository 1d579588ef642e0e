package contract

import (
	"slices"

	"github.com/ds4context/adapterkit/internal/idtable"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// ValidationIssue is one problem found in a history snapshot. MessageID and
// ToolCallID are set (possibly to "") exactly when the contract says the
// issue carries them.
type ValidationIssue struct {
	Code       string  `json:"code"`
	Message    string  `json:"message"`
	MessageID  *string `json:"messageId,omitempty"`
	ToolCallID *string `json:"toolCallId,omitempty"`
}

// Validation issue codes, in the order validation checks them.
const (
	CodeHistorySchemaIncompatible = "history-schema-incompatible"
	CodeHistoryIdentityInvalid    = "history-identity-invalid"
	CodeTrustedProjectRootMissing = "trusted-project-root-missing"
	CodeHistoryMessageIDDuplicate = "history-message-id-duplicate"
	CodeHistoryMessageIDMissing   = "history-message-id-missing"
	CodeHistoryProvenanceInvalid  = "history-provenance-invalid"
	CodeToolCallIdentityInvalid   = "tool-call-identity-invalid"
	CodeToolResultOrphaned        = "tool-result-orphaned"
	CodeToolAtomicGroupInvalid    = "tool-atomic-group-invalid"
	CodeToolAtomicMessageMissing  = "tool-atomic-message-missing"
	CodeToolAtomicMessageOverlap  = "tool-atomic-message-overlap"
	CodeToolAtomicCallOverlap     = "tool-atomic-call-overlap"
	CodeToolAtomicGroupMissing    = "tool-atomic-group-missing"
	CodeToolAtomicGroupMismatch   = "tool-atomic-group-mismatch"
	CodeToolAtomicCallUnknown     = "tool-atomic-call-unknown"
)

// issueMessages holds the fixed English sentence of every validation code.
var issueMessages = map[string]string{
	CodeHistorySchemaIncompatible: "History schema version is incompatible",
	CodeHistoryIdentityInvalid:    "History identity fields must be non-empty",
	CodeTrustedProjectRootMissing: "Trusted project root must be non-empty",
	CodeHistoryMessageIDDuplicate: "Canonical message IDs must be non-empty and unique",
	CodeHistoryMessageIDMissing:   "Canonical message IDs must be non-empty and unique",
	CodeHistoryProvenanceInvalid:  "Canonical message provenance does not match the snapshot",
	CodeToolCallIdentityInvalid:   "Canonical tool call IDs must be non-empty and unique",
	CodeToolResultOrphaned:        "Canonical tool results must reference one known tool call",
	CodeToolAtomicGroupInvalid:    "Tool atomic groups must have stable IDs and members",
	CodeToolAtomicMessageMissing:  "Tool atomic group message membership is invalid",
	CodeToolAtomicMessageOverlap:  "Tool atomic group message membership is invalid",
	CodeToolAtomicCallOverlap:     "A tool call belongs to more than one atomic group",
	CodeToolAtomicGroupMissing:    "A canonical tool exchange has no atomic group",
	CodeToolAtomicGroupMismatch:   "Tool atomic group does not match canonical call/result relations",
	CodeToolAtomicCallUnknown:     "Tool atomic group references an unknown tool call",
}

// IssueMessage returns the fixed human message of a validation code ("" for
// an unknown code).
func IssueMessage(code string) string { return issueMessages[code] }

type issues []ValidationIssue

func (is *issues) add(code string) *ValidationIssue {
	*is = append(*is, ValidationIssue{Code: code, Message: issueMessages[code]})
	return &(*is)[len(*is)-1]
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ValidateHistorySnapshot checks a snapshot against the contract and returns
// its issues in a defined order (empty, never nil, when it is valid): schema,
// identity, project root, message ids and provenance in history order, tool
// call ids and orphaned results in order of first occurrence, the snapshot's
// groups in their order, then the snapshot's groups against the groups
// BuildToolAtomicGroups derives from its messages (in that function's order)
// and finally tool call ids the derived groups do not know.
//
// It runs in O(n log n) time in the size of the snapshot.
func ValidateHistorySnapshot(s *HistorySnapshot) []ValidationIssue {
	return validate(s, nil)
}

// BuildAndValidateSnapshot sets s.ToolAtomicGroups to
// BuildToolAtomicGroups(s.Messages) and returns ValidateHistorySnapshot(s),
// deriving the tool graph once for both. It is what an adapter does for
// every snapshot it projects, at about the cost of validation alone.
func BuildAndValidateSnapshot(s *HistorySnapshot) []ValidationIssue {
	return validate(s, func(g *toolGraph) { s.ToolAtomicGroups = g.groups() })
}

// validate runs the checks of ValidateHistorySnapshot. When build is not
// nil, it sets s.ToolAtomicGroups to the graph's groups before the group
// checks run (so they are known to be the derived ones).
func validate(s *HistorySnapshot, build func(*toolGraph)) []ValidationIssue {
	out := issues{}
	if s.SchemaVersion != HistorySchemaVersion {
		out.add(CodeHistorySchemaIncompatible)
	}
	if IsBlank(s.RuntimeID) || IsBlank(s.SessionID) || IsBlank(s.Revision) {
		out.add(CodeHistoryIdentityInvalid)
	}
	if IsBlank(s.ProjectRoot) {
		out.add(CodeTrustedProjectRootMissing)
	}

	// The tool graph and the message checks read the history independently:
	// on large histories they run on two goroutines.
	var g *toolGraph
	wait := inParallel(len(s.Messages), func() { g = newToolGraph(s.Messages) })

	// Message ids → index of their first message.
	msgID := func(i int32) string { return s.Messages[i].ID }
	known := idtable.New(len(s.Messages))
	first := make([]int32, len(s.Messages)) // index of the first message with each message's id
	for i := range s.Messages {
		m := &s.Messages[i]
		x, dup := known.Insert(m.ID, int32(i), msgID)
		first[i] = x
		if dup {
			out.add(CodeHistoryMessageIDDuplicate).MessageID = nonEmpty(m.ID)
		} else if IsBlank(m.ID) {
			out.add(CodeHistoryMessageIDMissing).MessageID = nonEmpty(m.ID)
		}
		p := &m.Provenance
		if p.SessionID != s.SessionID || IsBlank(p.EntryID) || m.SourceEntryID != p.EntryID ||
			(p.Source == SourceRuntimeSession && (p.RuntimeID == nil || *p.RuntimeID != s.RuntimeID)) {
			id := m.ID
			out.add(CodeHistoryProvenanceInvalid).MessageID = &id
		}
	}

	wait()
	if build != nil {
		build(g)
	}
	for _, x := range g.callOrder {
		if id := g.ids[x]; IsBlank(id) || g.callCount[x] != 1 {
			out.add(CodeToolCallIdentityInvalid).ToolCallID = nonEmpty(id)
		}
	}
	for _, x := range g.resultOrder {
		if id := g.ids[x]; IsBlank(id) || g.callCount[x] == 0 {
			out.add(CodeToolResultOrphaned).ToolCallID = nonEmpty(id)
		}
	}

	// Step 7: the snapshot's own groups. Listed messages and calls are
	// tracked by index; call ids the history does not know get their own map.
	// When the snapshot's groups are exactly the derived ones (the common
	// case), members and calls are known by index without lookups.
	derived := build != nil || g.matches(s)
	listedMsg := make([]bool, len(s.Messages))
	lastGroup := make([]int32, len(g.ids)) // group index + 1 of the last group listing the id
	var unknownCalls map[string]bool       // listed ids absent from the history
	var unknownOrder []string
	for gi := range s.ToolAtomicGroups {
		sg := &s.ToolAtomicGroups[gi]
		if IsBlank(sg.ID) || len(sg.MessageIDs) == 0 || len(sg.ToolCallIDs) == 0 {
			out.add(CodeToolAtomicGroupInvalid)
		}
		var members, calls []int32
		if derived {
			c := &g.comps[g.order[gi]]
			members, calls = g.members[c.memStart:c.memEnd], g.compIDs[c.idStart:c.idEnd]
		}
		for k, mid := range sg.MessageIDs {
			var mi int32
			if derived {
				mi = first[members[k]]
			} else {
				mi = known.Find(mid, msgID)
			}
			if mi < 0 {
				id := mid
				out.add(CodeToolAtomicMessageMissing).MessageID = &id
			} else if listedMsg[mi] {
				id := mid
				out.add(CodeToolAtomicMessageOverlap).MessageID = &id
			} else {
				listedMsg[mi] = true
			}
		}
		for k, cid := range sg.ToolCallIDs {
			listed := false
			var x int32
			if derived {
				x = calls[k]
			} else {
				x = g.lookup(cid)
			}
			if x >= 0 {
				listed = lastGroup[x] != 0
				lastGroup[x] = int32(gi + 1)
			} else {
				if unknownCalls == nil {
					unknownCalls = map[string]bool{}
				}
				listed = unknownCalls[cid]
				if !listed {
					unknownOrder = append(unknownOrder, cid)
				}
				unknownCalls[cid] = true
			}
			if listed {
				id := cid
				out.add(CodeToolAtomicCallOverlap).ToolCallID = &id
			}
		}
	}

	// Step 8: every derived group against the last snapshot group listing
	// each of its ids, comparing message ids as sorted lists (so as
	// multisets: a member listed twice is a difference).
	var want, got []string
	for _, ci := range g.order {
		c := &g.comps[ci]
		members := g.memberIDs[c.memStart:c.memEnd]
		want = want[:0]
		for _, x := range g.compIDs[c.idStart:c.idEnd] {
			gi := lastGroup[x]
			if gi == 0 {
				id := g.ids[x]
				out.add(CodeToolAtomicGroupMissing).ToolCallID = &id
				continue
			}
			if derived && g.order[gi-1] == ci {
				continue // the snapshot group is this very derived group
			}
			sg := &s.ToolAtomicGroups[gi-1]
			same := sg.Complete == c.complete && len(sg.MessageIDs) == len(members)
			if same {
				// Fast path: listed in history order, as groups are built.
				for k, id := range members {
					if sg.MessageIDs[k] != id {
						same = false
						break
					}
				}
				if !same {
					if len(want) == 0 {
						want = append(want, members...)
						slices.SortFunc(want, jsstring.Compare)
					}
					got = append(got[:0], sg.MessageIDs...)
					slices.SortFunc(got, jsstring.Compare)
					same = slices.Equal(got, want)
				}
			}
			if !same {
				id := g.ids[x]
				out.add(CodeToolAtomicGroupMismatch).ToolCallID = &id
			}
		}
	}

	// Step 9: listed ids no derived group has. Every id the history knows
	// is in some derived group, so only ids absent from the history qualify.
	for _, cid := range unknownOrder {
		id := cid
		out.add(CodeToolAtomicCallUnknown).ToolCallID = &id
	}
	return out
}
