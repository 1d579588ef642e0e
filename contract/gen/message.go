package gen

import (
	"math"
	"strconv"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// roles lists the five canonical roles.
var roles = []contract.Role{contract.RoleSystem, contract.RoleUser, contract.RoleAssistant, contract.RoleTool, contract.RoleCustom}

// Message returns a generator of single canonical messages of any role with
// blocks of all nine types, whose provenance is consistent with a snapshot
// of runtimeID and sessionID: the id is "<sessionID>:<entry>", sourceEntryId
// and provenance.entryId are the entry, provenance.sessionId is sessionID,
// and a runtime-session source carries runtimeID. Optional members are
// present or absent at random.
func Message(runtimeID, sessionID string) *rapid.Generator[contract.Message] {
	return rapid.Custom(func(t *rapid.T) contract.Message {
		entry := "e" + strconv.Itoa(rapid.IntRange(1, 1_000_000).Draw(t, "entry")) + tag().Draw(t, "entryTag") + edge(t, "entryEnd")
		role := rapid.SampledFrom(roles).Draw(t, "role")
		blocks := rapid.SliceOfN(Block(), 0, 4).Draw(t, "blocks")
		return decorate(t, runtimeID, sessionID, entry, role, blocks)
	})
}

// decorate builds a message around blocks with consistent provenance and
// draws its optional members.
func decorate(t *rapid.T, runtimeID, sessionID, entry string, role contract.Role, blocks []contract.Block) contract.Message {
	m := baseMessage(runtimeID, sessionID, entry, role, blocks)
	drawDecoration(t, 0)(&m, runtimeID)
	return m
}

// baseMessage returns a message with only the required members and
// provenance consistent with runtimeID and sessionID.
func baseMessage(runtimeID, sessionID, entry string, role contract.Role, blocks []contract.Block) contract.Message {
	if blocks == nil {
		blocks = []contract.Block{}
	}
	return contract.Message{
		ID:            sessionID + ":" + entry,
		SourceEntryID: entry,
		Role:          role,
		Blocks:        blocks,
		Provenance: contract.Provenance{
			Source:    contract.SourceRuntimeSession,
			SessionID: sessionID,
			EntryID:   entry,
			RuntimeID: &runtimeID,
		},
	}
}

// drawDecoration draws a message's optional members and returns the
// function that sets them on a message of the given runtime. Most messages
// carry only the required members; the rest exercise every optional one,
// except the families in leave.
func drawDecoration(t *rapid.T, leave familySet) func(m *contract.Message, runtimeID string) {
	if rapid.IntRange(0, 3).Draw(t, "decorated") != 0 {
		return func(*contract.Message, string) {}
	}
	// A pi-session message needs no runtime id, and any runtime id it
	// carries is not checked: 0 none, 1 the snapshot's, 2 another, 3 "".
	pi := !leave.has(FamilyPiSession) && rapid.IntRange(0, 3).Draw(t, "piSession") == 0
	piRuntime := 0
	if pi {
		piRuntime = rapid.IntRange(0, 3).Draw(t, "piRuntimeId")
	}
	createdAt := rapid.Ptr(number(), true).Draw(t, "createdAt")
	if createdAt != nil && leave.has(FamilyCreatedAtOutOfRange) && math.Abs(*createdAt) > MaxDateMillis {
		// Within the clock's range, a whole millisecond as drawn.
		*createdAt = math.Mod(*createdAt, MaxDateMillis)
	}
	provider := optString(messageProvider).Draw(t, "provider")
	model := optString(text()).Draw(t, "model")
	tokens := rapid.Ptr(number(), true).Draw(t, "tokenEstimate")
	originalRole := optString(rapid.SampledFrom([]string{"user", "assistant", "toolResult", "bashExecution"})).Draw(t, "originalRole")
	provExtra := extraFields(t, leave)
	flag := rapid.Ptr(rapid.Bool(), true)
	flags := contract.Flags{
		Pinned:    flag.Draw(t, "pinned"),
		Atomic:    flag.Draw(t, "atomic"),
		LocalOnly: flag.Draw(t, "localOnly"),
		Synthetic: flag.Draw(t, "synthetic"),
		Extra:     extraFields(t, leave),
	}
	if leave.has(FamilyMessageFlags) {
		flags.Pinned, flags.LocalOnly, flags.Synthetic = nil, nil, nil
	}
	extra := extraFields(t, leave)
	return func(m *contract.Message, runtimeID string) {
		if pi {
			m.Provenance.Source = contract.SourcePiSession
			switch piRuntime {
			case 0:
				m.Provenance.RuntimeID = nil
			case 1:
				m.Provenance.RuntimeID = new(runtimeID)
			case 2:
				m.Provenance.RuntimeID = new(runtimeID + "-other")
			default:
				m.Provenance.RuntimeID = new("")
			}
		}
		m.CreatedAt = createdAt
		m.Provider = provider
		m.Model = model
		m.TokenEstimate = tokens
		m.Provenance.OriginalRole = originalRole
		m.Provenance.Extra = provExtra
		m.Flags = flags
		m.Extra = extra
	}
}

// messageProvider draws the provider of a decorated message: a usual one,
// one Provider draws (its look-alikes and adversarial names among them),
// or empty — last, at the top of the range, which rapid draws about as
// often as the bottom, so that an empty provider stays as common as the
// usual ones.
var messageProvider = rapid.Custom(func(t *rapid.T) string {
	switch k := rapid.IntRange(0, 4).Draw(t, "providerKind"); k {
	case 3:
		return Provider().Draw(t, "drawnProvider")
	case 4:
		return ""
	default:
		return []string{"openai", "anthropic", "local"}[k]
	}
})
