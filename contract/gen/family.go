package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"pgregory.net/rapid"
)

// Family names a shape of canonical history that some runtimes cannot
// represent natively. History draws every family; HistoryWithout draws
// none of the families it is told to leave out; FamiliesOf reports the
// families a history holds. Names are stable kebab-case words, fit for a
// command-line flag and a report.
type Family string

// The history families, in the order Families lists them.
const (
	// FamilyParallelBatch: a message holding two or more tool calls.
	FamilyParallelBatch Family = "parallel-batch"
	// FamilyMultiResult: a message holding two or more tool results.
	FamilyMultiResult Family = "multi-result"
	// FamilyRepeatedResult: a tool call id with more than one result.
	FamilyRepeatedResult Family = "repeated-result"
	// FamilyLiveCall: a tool call without any result (an incomplete live
	// call), at the end of the history or in its middle.
	FamilyLiveCall Family = "live-call"
	// FamilyResultWithText: a message holding a tool result beside a block
	// that is neither a tool call nor a tool result (generated ones are
	// text).
	FamilyResultWithText Family = "result-with-text"
	// FamilyPiSession: a message whose provenance source is "pi-session".
	FamilyPiSession Family = "pi-session"
	// FamilyUnknownMembers: a member the contract does not define (Extra)
	// in a message, its provenance, its flags or one of its blocks.
	FamilyUnknownMembers Family = "unknown-members"
	// FamilyThinking: a thinking block.
	FamilyThinking Family = "thinking"
	// FamilyImage: an image block.
	FamilyImage Family = "image"
	// FamilyFileReference: a fileReference block.
	FamilyFileReference Family = "file-reference"
	// FamilyArtifactReference: an artifactReference block.
	FamilyArtifactReference Family = "artifact-reference"
	// FamilySummaryReference: a summaryReference block.
	FamilySummaryReference Family = "summary-reference"
	// FamilyOpaqueProvider: an opaqueProvider block that is not a raw
	// provider block (FamilyRawProviderBlock): its originalType and value
	// are any the contract allows.
	FamilyOpaqueProvider Family = "opaque-provider"
	// FamilyRawProviderBlock: an opaqueProvider block holding a provider's
	// own block as it came (IsRawProviderBlock): a value that is a JSON
	// object whose "type" member is the block's originalType, or a value
	// that is not an object, without originalType. A runtime that keeps a
	// provider's unknown blocks as they came holds these and no others.
	FamilyRawProviderBlock Family = "raw-provider-block"
	// FamilyMessageFlags: a message whose flags set pinned, localOnly or
	// synthetic (true or false).
	FamilyMessageFlags Family = "message-flags"
	// FamilyCreatedAtOutOfRange: a message whose createdAt lies outside
	// the range of JavaScript's Date, beyond ±MaxDateMillis: no clock
	// holds that time.
	FamilyCreatedAtOutOfRange Family = "created-at-out-of-range"
	// FamilyLongHistory: a history of at least 100 messages.
	FamilyLongHistory Family = "long-history"
)

// families lists every family; its order is the order of Families and the
// bit order of a familySet.
var families = []Family{
	FamilyParallelBatch, FamilyMultiResult, FamilyRepeatedResult, FamilyLiveCall, FamilyResultWithText,
	FamilyPiSession, FamilyUnknownMembers,
	FamilyThinking, FamilyImage, FamilyFileReference, FamilyArtifactReference, FamilySummaryReference, FamilyOpaqueProvider,
	FamilyRawProviderBlock, FamilyMessageFlags, FamilyCreatedAtOutOfRange,
	FamilyLongHistory,
}

// MaxDateMillis is the largest distance from the Unix epoch, in
// milliseconds, a JavaScript Date holds (ECMA-262's time value range):
// a createdAt beyond ±MaxDateMillis is a time no clock holds.
const MaxDateMillis = 8.64e15

// longHistory is the number of messages from which a history belongs to
// FamilyLongHistory.
const longHistory = 100

// Families returns every family, always in the same order.
func Families() []Family { return append([]Family(nil), families...) }

// ParseFamily returns the family named s, or an error naming the known
// families.
func ParseFamily(s string) (Family, error) {
	for _, f := range families {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(families))
	for i, f := range families {
		names[i] = string(f)
	}
	return "", fmt.Errorf("gen: unknown history family %q (known: %s)", s, strings.Join(names, ", "))
}

// familySet is a set of families, one bit per entry of families.
type familySet uint32

func (s familySet) has(f Family) bool {
	for i, g := range families {
		if g == f {
			return s&(1<<i) != 0
		}
	}
	return false
}

func (s *familySet) add(f Family) bool {
	for i, g := range families {
		if g == f {
			*s |= 1 << i
			return true
		}
	}
	return false
}

// HistoryWithout returns a generator of valid canonical histories like
// History's that never hold any of the families in leave: the generator
// never draws those shapes, so every draw is accepted and shrinking works
// as for History. A history without FamilyLiveCall answers every call;
// one without FamilyLongHistory holds at most 24 messages. With no family
// left out it is History. It panics when leave holds a value that is not
// one of Families (use ParseFamily for names from outside the program).
func HistoryWithout(runtimeID, sessionID string, leave ...Family) *rapid.Generator[[]contract.Message] {
	return historyOf(HistoryOptions{RuntimeID: runtimeID, SessionID: sessionID}, familySetOf("HistoryWithout", leave))
}

// familySetOf returns the set of the families leave, and panics naming the
// generator fn when one is not of Families.
func familySetOf(fn string, leave []Family) familySet {
	var set familySet
	for _, f := range leave {
		if !set.add(f) {
			panic(fmt.Sprintf("gen: %s: unknown history family %q", fn, string(f)))
		}
	}
	return set
}

// FamiliesOf returns the families msgs holds, in the order of Families. It
// looks at shapes only, not at whether the history is valid.
func FamiliesOf(msgs []contract.Message) []Family {
	var set familySet
	calls := map[string]bool{}
	results := map[string]int{}
	for i := range msgs {
		m := &msgs[i]
		if m.Provenance.Source == contract.SourcePiSession {
			set.add(FamilyPiSession)
		}
		if len(m.Extra)+len(m.Provenance.Extra)+len(m.Flags.Extra) > 0 {
			set.add(FamilyUnknownMembers)
		}
		if m.Flags.Pinned != nil || m.Flags.LocalOnly != nil || m.Flags.Synthetic != nil {
			set.add(FamilyMessageFlags)
		}
		if m.CreatedAt != nil && math.Abs(*m.CreatedAt) > MaxDateMillis {
			set.add(FamilyCreatedAtOutOfRange)
		}
		nCalls, nResults, other := 0, 0, 0
		for _, b := range m.Blocks {
			if b == nil {
				continue
			}
			if len(blockExtra(b)) > 0 {
				set.add(FamilyUnknownMembers)
			}
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				nCalls++
				calls[b.ID] = true
			case *contract.ToolResultBlock:
				nResults++
				results[b.ToolCallID]++
			case *contract.ThinkingBlock:
				other++
				set.add(FamilyThinking)
			case *contract.ImageBlock:
				other++
				set.add(FamilyImage)
			case *contract.FileReferenceBlock:
				other++
				set.add(FamilyFileReference)
			case *contract.ArtifactReferenceBlock:
				other++
				set.add(FamilyArtifactReference)
			case *contract.SummaryReferenceBlock:
				other++
				set.add(FamilySummaryReference)
			case *contract.OpaqueProviderBlock:
				other++
				if IsRawProviderBlock(b) {
					set.add(FamilyRawProviderBlock)
				} else {
					set.add(FamilyOpaqueProvider)
				}
			default:
				other++
			}
		}
		if nCalls > 1 {
			set.add(FamilyParallelBatch)
		}
		if nResults > 1 {
			set.add(FamilyMultiResult)
		}
		if nResults > 0 && other > 0 {
			set.add(FamilyResultWithText)
		}
	}
	for id := range calls {
		if results[id] == 0 {
			set.add(FamilyLiveCall)
			break
		}
	}
	for _, n := range results {
		if n > 1 {
			set.add(FamilyRepeatedResult)
			break
		}
	}
	if len(msgs) >= longHistory {
		set.add(FamilyLongHistory)
	}
	var out []Family
	for i, f := range families {
		if set&(1<<i) != 0 {
			out = append(out, f)
		}
	}
	return out
}

// blockExtra returns a block's unknown members.
func blockExtra(b contract.Block) []contract.Field {
	switch b := b.(type) {
	case *contract.TextBlock:
		return b.Extra
	case *contract.ThinkingBlock:
		return b.Extra
	case *contract.ToolCallBlock:
		return b.Extra
	case *contract.ToolResultBlock:
		return b.Extra
	case *contract.ImageBlock:
		return b.Extra
	case *contract.FileReferenceBlock:
		return b.Extra
	case *contract.ArtifactReferenceBlock:
		return b.Extra
	case *contract.SummaryReferenceBlock:
		return b.Extra
	case *contract.OpaqueProviderBlock:
		return b.Extra
	}
	return nil
}

// IsRawProviderBlock reports whether b holds a provider's own block as it
// came (FamilyRawProviderBlock): its value is a JSON object whose "type"
// member is a string equal to b's originalType, or its value is not a JSON
// object and b has no originalType.
func IsRawProviderBlock(b *contract.OpaqueProviderBlock) bool {
	v := bytes.TrimLeft(b.Value, " \t\r\n")
	if len(v) == 0 || v[0] != '{' {
		return b.OriginalType == nil && len(v) > 0
	}
	if b.OriginalType == nil {
		return false
	}
	// Decoded into a map, member names match exactly and the last of
	// duplicate members wins, as in JavaScript's JSON.parse.
	var members map[string]json.RawMessage
	if json.Unmarshal(v, &members) != nil {
		return false
	}
	var typ *string
	if json.Unmarshal(members["type"], &typ) != nil || typ == nil {
		return false
	}
	return *typ == *b.OriginalType
}
