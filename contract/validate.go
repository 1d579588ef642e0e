package contract

import (
	"slices"

	"github.com/ds4context/adapterkit/internal/jsonw"
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

	known := make(map[string]struct{}, len(s.Messages))
	for i := range s.Messages {
		m := &s.Messages[i]
		if _, dup := known[m.ID]; dup {
			out.add(CodeHistoryMessageIDDuplicate).MessageID = nonEmpty(m.ID)
		} else if IsBlank(m.ID) {
			out.add(CodeHistoryMessageIDMissing).MessageID = nonEmpty(m.ID)
		}
		known[m.ID] = struct{}{}
		p := &m.Provenance
		if p.SessionID != s.SessionID || IsBlank(p.EntryID) || m.SourceEntryID != p.EntryID ||
			(p.Source == SourceRuntimeSession && (p.RuntimeID == nil || *p.RuntimeID != s.RuntimeID)) {
			id := m.ID
			out.add(CodeHistoryProvenanceInvalid).MessageID = &id
		}
	}

	ix := indexTools(s.Messages)
	for _, id := range ix.callOrder {
		if IsBlank(id) || len(ix.calls[id]) != 1 {
			out.add(CodeToolCallIdentityInvalid).ToolCallID = nonEmpty(id)
		}
	}
	for _, id := range ix.resultOrder {
		if _, hasCall := ix.calls[id]; IsBlank(id) || !hasCall {
			out.add(CodeToolResultOrphaned).ToolCallID = nonEmpty(id)
		}
	}

	listedMessages := map[string]struct{}{}
	listedCalls := map[string]struct{}{}
	var callListOrder []string
	lastGroup := map[string]int{} // tool call id → index of the last snapshot group listing it
	for gi := range s.ToolAtomicGroups {
		g := &s.ToolAtomicGroups[gi]
		if IsBlank(g.ID) || len(g.MessageIDs) == 0 || len(g.ToolCallIDs) == 0 {
			out.add(CodeToolAtomicGroupInvalid)
		}
		for _, mid := range g.MessageIDs {
			id := mid
			if _, ok := known[mid]; !ok {
				out.add(CodeToolAtomicMessageMissing).MessageID = &id
			} else if _, dup := listedMessages[mid]; dup {
				out.add(CodeToolAtomicMessageOverlap).MessageID = &id
			}
			listedMessages[mid] = struct{}{}
		}
		for _, cid := range g.ToolCallIDs {
			if _, dup := listedCalls[cid]; dup {
				id := cid
				out.add(CodeToolAtomicCallOverlap).ToolCallID = &id
			} else {
				callListOrder = append(callListOrder, cid)
			}
			listedCalls[cid] = struct{}{}
			lastGroup[cid] = gi
		}
	}

	expected := buildGroups(s.Messages, &ix)
	expectedCalls := make(map[string]struct{}, len(ix.callOrder)+len(ix.resultOrder))
	sortedGroups := map[int][]string{} // snapshot group index → its message ids, sorted
	for ei := range expected {
		e := &expected[ei]
		var want []string
		for _, cid := range e.ToolCallIDs {
			expectedCalls[cid] = struct{}{}
			gi, ok := lastGroup[cid]
			if !ok {
				id := cid
				out.add(CodeToolAtomicGroupMissing).ToolCallID = &id
				continue
			}
			g := &s.ToolAtomicGroups[gi]
			if want == nil {
				want = slices.Clone(e.MessageIDs)
				slices.SortFunc(want, jsonw.CompareUTF16)
			}
			got, ok := sortedGroups[gi]
			if !ok {
				got = slices.Clone(g.MessageIDs)
				slices.SortFunc(got, jsonw.CompareUTF16)
				sortedGroups[gi] = got
			}
			if g.Complete != e.Complete || !slices.Equal(got, want) {
				id := cid
				out.add(CodeToolAtomicGroupMismatch).ToolCallID = &id
			}
		}
	}
	for _, cid := range callListOrder {
		if _, ok := expectedCalls[cid]; !ok {
			id := cid
			out.add(CodeToolAtomicCallUnknown).ToolCallID = &id
		}
	}
	return out
}
