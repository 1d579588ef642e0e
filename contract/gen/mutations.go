package gen

import (
	"slices"
	"strconv"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// Mutation is one way of breaking a valid history snapshot. Applied to a
// snapshot that ValidateHistorySnapshot accepts, it makes validation report
// exactly the codes in Codes (each at least once) and no other code. Only
// the entries of Mutations can be applied.
type Mutation struct {
	// Name identifies the mutation; names are unique within Mutations.
	Name string
	// Codes are the validation codes the mutated snapshot yields, in the
	// order validation checks them.
	Codes []string
	// apply changes s in place, choosing the at-th eligible target (modulo
	// their number), and reports whether s had a target.
	apply func(s *contract.HistorySnapshot, at int) bool
}

// Apply applies the mutation to s, to its first eligible target, and
// reports whether it applied (false leaves s unchanged: the snapshot has
// nothing the mutation can break, for example no tool group). It first
// gives s a deep copy of everything it holds, so nothing s shared with
// another snapshot — messages, blocks, groups — is written through.
func (m Mutation) Apply(s *contract.HistorySnapshot) bool { return m.ApplyAt(s, 0) }

// ApplyAt is Apply with the at-th eligible target (counted modulo the
// number of targets, so any non-negative at applies when Apply does).
// The zero Mutation applies to nothing.
func (m Mutation) ApplyAt(s *contract.HistorySnapshot, at int) bool {
	if m.apply == nil {
		return false
	}
	*s = contract.CloneSnapshot(s)
	return m.apply(s, max(at, 0))
}

// Mutant is a valid snapshot broken by one mutation, with the codes
// validation must report for it.
type Mutant struct {
	// Snapshot is the broken snapshot.
	Snapshot contract.HistorySnapshot
	// Mutation is the Name of the mutation applied.
	Mutation string
	// Codes are the distinct codes ValidateHistorySnapshot reports for
	// Snapshot, in the order validation checks them.
	Codes []string
}

// MutatedSnapshot returns a generator of snapshots broken by one mutation of
// Mutations. It draws a valid Snapshot and a mutation; when the drawn
// mutation does not apply to the snapshot, the next one in the catalogue
// that applies is used, so no draw is rejected.
func MutatedSnapshot() *rapid.Generator[Mutant] {
	return rapid.Custom(func(t *rapid.T) Mutant {
		s := Snapshot().Draw(t, "snapshot")
		first := rapid.IntRange(0, len(Mutations)-1).Draw(t, "mutation")
		at := rapid.IntRange(0, 7).Draw(t, "target")
		for k := range Mutations {
			m := Mutations[(first+k)%len(Mutations)]
			if m.ApplyAt(&s, at) {
				return Mutant{Snapshot: s, Mutation: m.Name, Codes: slices.Clone(m.Codes)}
			}
		}
		panic("gen: no mutation applies") // unreachable: schema mutations always apply
	})
}

// MutationByName returns the catalogue's mutation of that name.
func MutationByName(name string) (Mutation, bool) {
	for _, m := range Mutations {
		if m.Name == name {
			return m, true
		}
	}
	return Mutation{}, false
}

// Mutations is the catalogue of snapshot mutations. Together they cover
// every validation code. Mutations that change messages also rebuild the
// snapshot's groups, so that only the message-level fault is reported.
var Mutations = []Mutation{
	{Name: "schema-version-other", Codes: codes(contract.CodeHistorySchemaIncompatible), apply: setSchema("runtime-history-v2")},
	{Name: "schema-version-empty", Codes: codes(contract.CodeHistorySchemaIncompatible), apply: setSchema("")},
	{Name: "runtime-id-blank", Codes: codes(contract.CodeHistoryIdentityInvalid), apply: blankRuntimeID},
	{Name: "session-id-blank", Codes: codes(contract.CodeHistoryIdentityInvalid), apply: blankSessionID},
	{Name: "revision-blank", Codes: codes(contract.CodeHistoryIdentityInvalid), apply: func(s *contract.HistorySnapshot, _ int) bool {
		s.Revision = "\u00a0\ufeff"
		return true
	}},
	{Name: "project-root-empty", Codes: codes(contract.CodeTrustedProjectRootMissing), apply: func(s *contract.HistorySnapshot, _ int) bool {
		s.ProjectRoot = ""
		return true
	}},
	{Name: "project-root-blank", Codes: codes(contract.CodeTrustedProjectRootMissing), apply: func(s *contract.HistorySnapshot, _ int) bool {
		s.ProjectRoot = " \u2028\t"
		return true
	}},
	{Name: "message-id-duplicate", Codes: codes(contract.CodeHistoryMessageIDDuplicate), apply: duplicateMessageID},
	{Name: "message-id-empty", Codes: codes(contract.CodeHistoryMessageIDMissing), apply: setContentMessageID("")},
	{Name: "message-id-blank", Codes: codes(contract.CodeHistoryMessageIDMissing), apply: setContentMessageID(" \u3000")},
	{Name: "provenance-session-mismatch", Codes: codes(contract.CodeHistoryProvenanceInvalid), apply: onMessage(anyMessage, func(m *contract.Message) {
		m.Provenance.SessionID += "-other"
	})},
	{Name: "provenance-entry-blank", Codes: codes(contract.CodeHistoryProvenanceInvalid), apply: onMessage(anyMessage, func(m *contract.Message) {
		m.Provenance.EntryID = "\u00a0"
		m.SourceEntryID = "\u00a0"
	})},
	{Name: "provenance-source-entry-mismatch", Codes: codes(contract.CodeHistoryProvenanceInvalid), apply: onMessage(anyMessage, func(m *contract.Message) {
		m.SourceEntryID += "-other"
	})},
	{Name: "provenance-runtime-id-mismatch", Codes: codes(contract.CodeHistoryProvenanceInvalid), apply: onMessage(runtimeSession, func(m *contract.Message) {
		m.Provenance.RuntimeID = new(*m.Provenance.RuntimeID + "-other")
	})},
	{Name: "provenance-runtime-id-absent", Codes: codes(contract.CodeHistoryProvenanceInvalid), apply: onMessage(runtimeSession, func(m *contract.Message) {
		m.Provenance.RuntimeID = nil
	})},
	{Name: "tool-call-id-duplicate", Codes: codes(contract.CodeToolCallIdentityInvalid), apply: duplicateCall},
	{Name: "tool-call-id-empty", Codes: codes(contract.CodeToolCallIdentityInvalid), apply: appendCall("")},
	{Name: "tool-call-id-blank", Codes: codes(contract.CodeToolCallIdentityInvalid), apply: appendCall("\t ")},
	{Name: "tool-result-orphaned", Codes: codes(contract.CodeToolResultOrphaned), apply: appendResult("orphan")},
	{Name: "tool-result-id-empty", Codes: codes(contract.CodeToolResultOrphaned), apply: appendResult("")},
	{Name: "group-id-blank", Codes: codes(contract.CodeToolAtomicGroupInvalid), apply: onGroup(anyGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.ID = " "
	})},
	{Name: "group-message-ids-empty", Codes: codes(contract.CodeToolAtomicGroupInvalid, contract.CodeToolAtomicGroupMismatch), apply: onGroup(anyGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.MessageIDs = []string{}
	})},
	{Name: "group-tool-call-ids-empty", Codes: codes(contract.CodeToolAtomicGroupInvalid, contract.CodeToolAtomicGroupMissing), apply: onGroup(anyGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.ToolCallIDs = []string{}
	})},
	{Name: "group-message-unknown", Codes: codes(contract.CodeToolAtomicMessageMissing, contract.CodeToolAtomicGroupMismatch), apply: onGroup(anyGroup, func(s *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.MessageIDs = append(slices.Clone(g.MessageIDs), freshMessageID(s))
	})},
	{Name: "group-message-repeated", Codes: codes(contract.CodeToolAtomicMessageOverlap, contract.CodeToolAtomicGroupMismatch), apply: onGroup(anyGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.MessageIDs = append(slices.Clone(g.MessageIDs), g.MessageIDs[0])
	})},
	{Name: "group-message-in-two-groups", Codes: codes(contract.CodeToolAtomicMessageOverlap, contract.CodeToolAtomicGroupMismatch), apply: onGroup(notFirstGroup, func(s *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.MessageIDs = append(slices.Clone(g.MessageIDs), s.ToolAtomicGroups[0].MessageIDs[0])
	})},
	{Name: "group-call-repeated", Codes: codes(contract.CodeToolAtomicCallOverlap), apply: onGroup(anyGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.ToolCallIDs = append(slices.Clone(g.ToolCallIDs), g.ToolCallIDs[0])
	})},
	{Name: "group-call-in-two-groups", Codes: codes(contract.CodeToolAtomicCallOverlap, contract.CodeToolAtomicGroupMismatch), apply: onGroup(notFirstGroup, func(s *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.ToolCallIDs = append(slices.Clone(g.ToolCallIDs), s.ToolAtomicGroups[0].ToolCallIDs[0])
	})},
	{Name: "group-dropped", Codes: codes(contract.CodeToolAtomicGroupMissing), apply: dropGroup},
	{Name: "groups-absent", Codes: codes(contract.CodeToolAtomicGroupMissing), apply: func(s *contract.HistorySnapshot, _ int) bool {
		if len(s.ToolAtomicGroups) == 0 {
			return false
		}
		s.ToolAtomicGroups = []contract.ToolAtomicGroup{}
		return true
	}},
	{Name: "group-complete-flipped", Codes: codes(contract.CodeToolAtomicGroupMismatch), apply: onGroup(anyGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.Complete = !g.Complete
	})},
	{Name: "group-message-dropped", Codes: codes(contract.CodeToolAtomicGroupMismatch), apply: onGroup(multiMessageGroup, func(_ *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.MessageIDs = g.MessageIDs[1:len(g.MessageIDs):len(g.MessageIDs)]
	})},
	{Name: "groups-stale-after-result-removed", Codes: codes(contract.CodeToolAtomicGroupMismatch), apply: dropOnlyResult},
	{Name: "group-call-unknown", Codes: codes(contract.CodeToolAtomicCallUnknown), apply: onGroup(anyGroup, func(s *contract.HistorySnapshot, g *contract.ToolAtomicGroup) {
		g.ToolCallIDs = append(slices.Clone(g.ToolCallIDs), freshCallID(s))
	})},
}

func codes(cs ...string) []string { return cs }

func setSchema(v string) func(*contract.HistorySnapshot, int) bool {
	return func(s *contract.HistorySnapshot, _ int) bool {
		s.SchemaVersion = v
		return true
	}
}

// blankRuntimeID blanks the snapshot's runtime id and, so that only the
// identity is reported, the runtime id of every runtime-session message.
func blankRuntimeID(s *contract.HistorySnapshot, _ int) bool {
	s.RuntimeID = " "
	for i := range s.Messages {
		if s.Messages[i].Provenance.Source == contract.SourceRuntimeSession {
			s.Messages[i].Provenance.RuntimeID = new(" ")
		}
	}
	return true
}

// blankSessionID blanks the snapshot's session id and every message's.
func blankSessionID(s *contract.HistorySnapshot, _ int) bool {
	s.SessionID = "\t"
	for i := range s.Messages {
		s.Messages[i].Provenance.SessionID = "\t"
	}
	return true
}

// newMessage returns a message with valid provenance and a fresh entry id.
func newMessage(s *contract.HistorySnapshot, role contract.Role, blocks ...contract.Block) contract.Message {
	entry := freshEntry(s)
	return contract.Message{
		ID:            s.SessionID + ":" + entry,
		SourceEntryID: entry,
		Role:          role,
		Blocks:        append([]contract.Block{}, blocks...),
		Provenance: contract.Provenance{
			Source:    contract.SourceRuntimeSession,
			SessionID: s.SessionID,
			EntryID:   entry,
			RuntimeID: new(s.RuntimeID),
		},
	}
}

func freshEntry(s *contract.HistorySnapshot) string {
	used := map[string]bool{}
	for i := range s.Messages {
		used[s.Messages[i].ID] = true
		used[s.Messages[i].Provenance.EntryID] = true
	}
	for n := len(s.Messages) + 1; ; n++ {
		e := "mutated-" + strconv.Itoa(n)
		if !used[e] && !used[s.SessionID+":"+e] {
			return e
		}
	}
}

func freshMessageID(s *contract.HistorySnapshot) string { return s.SessionID + ":" + freshEntry(s) }

func freshCallID(s *contract.HistorySnapshot) string {
	used := map[string]bool{}
	for i := range s.Messages {
		for _, b := range s.Messages[i].Blocks {
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				used[b.ID] = true
			case *contract.ToolResultBlock:
				used[b.ToolCallID] = true
			}
		}
	}
	for _, g := range s.ToolAtomicGroups {
		for _, id := range g.ToolCallIDs {
			used[id] = true
		}
	}
	for n := 1; ; n++ {
		id := "ghost-call-" + strconv.Itoa(n)
		if !used[id] {
			return id
		}
	}
}

func isToolMessage(m *contract.Message) bool {
	for _, b := range m.Blocks {
		if t := b.Type(); t == contract.BlockToolCall || t == contract.BlockToolResult {
			return true
		}
	}
	return false
}

// pickIndex returns the at-th index (modulo their number) satisfying ok.
func pickIndex(n, at int, ok func(i int) bool) (int, bool) {
	var eligible []int
	for i := range n {
		if ok(i) {
			eligible = append(eligible, i)
		}
	}
	if len(eligible) == 0 {
		return 0, false
	}
	return eligible[at%len(eligible)], true
}

// duplicateMessageID appends a message without tool blocks that reuses the
// id of an existing message (or, in an empty history, two such messages).
func duplicateMessageID(s *contract.HistorySnapshot, at int) bool {
	msgs := slices.Clone(s.Messages)
	if len(msgs) == 0 {
		msgs = append(msgs, newMessage(s, contract.RoleUser, &contract.TextBlock{Text: "first"}))
	}
	i, _ := pickIndex(len(msgs), at, func(int) bool { return true })
	m := newMessage(&contract.HistorySnapshot{SessionID: s.SessionID, RuntimeID: s.RuntimeID, Messages: msgs}, contract.RoleUser, &contract.TextBlock{Text: "again"})
	m.ID = msgs[i].ID
	s.Messages = append(msgs, m)
	return true
}

// setContentMessageID gives a message without tool blocks a blank id.
func setContentMessageID(id string) func(*contract.HistorySnapshot, int) bool {
	return func(s *contract.HistorySnapshot, at int) bool {
		i, ok := pickIndex(len(s.Messages), at, func(i int) bool { return !isToolMessage(&s.Messages[i]) })
		if !ok {
			return false
		}
		s.Messages[i].ID = id
		return true
	}
}

func anyMessage(*contract.Message) bool { return true }

func runtimeSession(m *contract.Message) bool {
	return m.Provenance.Source == contract.SourceRuntimeSession
}

// onMessage changes one message's provenance; message ids stay, so the
// groups stay valid.
func onMessage(eligible func(*contract.Message) bool, change func(*contract.Message)) func(*contract.HistorySnapshot, int) bool {
	return func(s *contract.HistorySnapshot, at int) bool {
		i, ok := pickIndex(len(s.Messages), at, func(i int) bool { return eligible(&s.Messages[i]) })
		if !ok {
			return false
		}
		change(&s.Messages[i])
		return true
	}
}

// duplicateCall appends an assistant message repeating an existing call id,
// and rebuilds the groups.
func duplicateCall(s *contract.HistorySnapshot, at int) bool {
	var ids []string
	for i := range s.Messages {
		for _, b := range s.Messages[i].Blocks {
			if c, ok := b.(*contract.ToolCallBlock); ok {
				ids = append(ids, c.ID)
			}
		}
	}
	if len(ids) == 0 {
		return false
	}
	id := ids[at%len(ids)]
	s.Messages = append(slices.Clone(s.Messages), newMessage(s, contract.RoleAssistant, &contract.ToolCallBlock{ID: id, Name: "read"}))
	s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	return true
}

// appendCall appends an assistant message with a call of a blank id, and
// rebuilds the groups.
func appendCall(id string) func(*contract.HistorySnapshot, int) bool {
	return func(s *contract.HistorySnapshot, _ int) bool {
		s.Messages = append(slices.Clone(s.Messages), newMessage(s, contract.RoleAssistant, &contract.ToolCallBlock{ID: id, Name: "read"}))
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
		return true
	}
}

// appendResult appends a tool message answering a call that does not exist
// ("" stays empty, any other prefix becomes a fresh id), and rebuilds the
// groups.
func appendResult(prefix string) func(*contract.HistorySnapshot, int) bool {
	return func(s *contract.HistorySnapshot, _ int) bool {
		id := prefix
		if id != "" {
			id = prefix + "-" + freshCallID(s)
		}
		s.Messages = append(slices.Clone(s.Messages), newMessage(s, contract.RoleTool, &contract.ToolResultBlock{ToolCallID: id, ToolName: "read"}))
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
		return true
	}
}

func anyGroup(*contract.HistorySnapshot, int) bool { return true }

func notFirstGroup(_ *contract.HistorySnapshot, i int) bool { return i > 0 }

func multiMessageGroup(s *contract.HistorySnapshot, i int) bool {
	return len(s.ToolAtomicGroups[i].MessageIDs) > 1
}

// onGroup changes one group (a group with at least one message and call, as
// every built group has).
func onGroup(eligible func(*contract.HistorySnapshot, int) bool, change func(*contract.HistorySnapshot, *contract.ToolAtomicGroup)) func(*contract.HistorySnapshot, int) bool {
	return func(s *contract.HistorySnapshot, at int) bool {
		i, ok := pickIndex(len(s.ToolAtomicGroups), at, func(i int) bool {
			g := &s.ToolAtomicGroups[i]
			return len(g.MessageIDs) > 0 && len(g.ToolCallIDs) > 0 && eligible(s, i)
		})
		if !ok {
			return false
		}
		groups := slices.Clone(s.ToolAtomicGroups)
		change(s, &groups[i])
		s.ToolAtomicGroups = groups
		return true
	}
}

func dropGroup(s *contract.HistorySnapshot, at int) bool {
	if len(s.ToolAtomicGroups) == 0 {
		return false
	}
	i := at % len(s.ToolAtomicGroups)
	s.ToolAtomicGroups = slices.Delete(slices.Clone(s.ToolAtomicGroups), i, i+1)
	return true
}

// dropOnlyResult removes the only result of a call whose group is complete
// and keeps the old groups, which no longer match: the call's group is now
// incomplete.
func dropOnlyResult(s *contract.HistorySnapshot, at int) bool {
	complete := map[string]bool{}
	for _, g := range s.ToolAtomicGroups {
		for _, id := range g.ToolCallIDs {
			complete[id] = g.Complete
		}
	}
	results := map[string]int{}
	calls := map[string]int{}
	for i := range s.Messages {
		for _, b := range s.Messages[i].Blocks {
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				calls[b.ID]++
			case *contract.ToolResultBlock:
				results[b.ToolCallID]++
			}
		}
	}
	type site struct{ msg, block int }
	var sites []site
	for i := range s.Messages {
		for j, b := range s.Messages[i].Blocks {
			if r, ok := b.(*contract.ToolResultBlock); ok && complete[r.ToolCallID] && results[r.ToolCallID] == 1 {
				sites = append(sites, site{i, j})
			}
		}
	}
	if len(sites) == 0 {
		return false
	}
	p := sites[at%len(sites)]
	msgs := slices.Clone(s.Messages)
	msgs[p.msg].Blocks = slices.Delete(slices.Clone(msgs[p.msg].Blocks), p.block, p.block+1)
	s.Messages = msgs
	return true
}
