package mutants

import (
	"encoding/json"
	"math"
	"slices"
	"unicode/utf16"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
)

// PiRefuses lists the families a runtime holding histories as DS4's Pi
// runtime does cannot hold (../shared/runtimes/pi.md): a tool message with
// two or more results, a result beside other blocks, an opaque block that
// is not a provider's raw block, and a time no clock holds.
var PiRefuses = []gen.Family{gen.FamilyMultiResult, gen.FamilyResultWithText, gen.FamilyOpaqueProvider, gen.FamilyCreatedAtOutOfRange}

// piEntryTime is the time Pi gives an entry recorded without one: the
// first of 2026, plus the entry's index, in milliseconds.
const piEntryTime = 1_767_225_600_000

// HoldLikePi returns msgs as DS4's Pi runtime adapter holds them, every
// measured row of pi.md: the pi-session source without runtimeId, Pi's own
// role names as originalRole, tokenEstimate from Pi's estimator, atomic
// derived from the tool blocks, createdAt always present (whole
// milliseconds on custom entries), the instance's model on assistant
// messages where none was given and no provider or model elsewhere, no
// unknown members, tool-role text as custom messages and references as
// opaque provider blocks. With slips it also makes the converter's two
// slips: empty strings treated as absent (provider, an image's mimeType
// and data) and the flags pinned, localOnly and synthetic lost. It
// returns the refusal (conformance.Unrepresentable) of a history holding
// one of PiRefuses.
func HoldLikePi(model contract.ModelDescriptor, msgs []contract.Message, slips bool) ([]contract.Message, error) {
	fams := gen.FamiliesOf(msgs)
	for _, f := range PiRefuses {
		if slices.Contains(fams, f) {
			return nil, conformance.Unrepresentable(f, "Pi cannot hold it")
		}
	}
	out := contract.CloneMessages(msgs)
	for i := range out {
		holdMessageLikePi(model, &out[i], i, slips)
	}
	return out, nil
}

func holdMessageLikePi(model contract.ModelDescriptor, m *contract.Message, i int, slips bool) {
	DropUnknown(m)
	tool := false
	for k, b := range m.Blocks {
		switch b := b.(type) {
		case *contract.ToolCallBlock, *contract.ToolResultBlock:
			tool = true
		case *contract.FileReferenceBlock, *contract.ArtifactReferenceBlock, *contract.SummaryReferenceBlock:
			enc, err := contract.AppendMessageJSON(nil, &contract.Message{Blocks: []contract.Block{b}})
			var v struct{ Blocks []json.RawMessage }
			if err == nil && json.Unmarshal(enc, &v) == nil && len(v.Blocks) == 1 {
				m.Blocks[k] = &contract.OpaqueProviderBlock{OriginalType: new(string(b.Type())), Value: v.Blocks[0]}
			}
		case *contract.ImageBlock:
			if slips {
				img := *b
				if img.MimeType != nil && *img.MimeType == "" {
					img.MimeType = nil
				}
				if img.Data != nil && *img.Data == "" {
					img.Data = nil
				}
				m.Blocks[k] = &img
			}
		}
	}
	if m.Role == contract.RoleTool && !tool {
		m.Role = contract.RoleCustom
	}
	piRole := "custom"
	switch {
	case m.Role == contract.RoleUser:
		piRole = "user"
	case m.Role == contract.RoleAssistant:
		piRole = "assistant"
	case m.Role == contract.RoleTool:
		piRole = "toolResult"
	}
	m.Provenance.Source = contract.SourcePiSession
	m.Provenance.RuntimeID = nil
	m.Provenance.OriginalRole = &piRole
	m.TokenEstimate = new(piTokenEstimate(m))
	m.Flags.Atomic = new(tool)
	if slips {
		m.Flags.Pinned, m.Flags.LocalOnly, m.Flags.Synthetic = nil, nil, nil
		if m.Provider != nil && *m.Provider == "" {
			m.Provider = nil
		}
	}
	switch {
	case m.CreatedAt == nil:
		m.CreatedAt = new(float64(piEntryTime + i))
	case piRole == "custom":
		// A custom entry's time is its ISO timestamp: whole milliseconds.
		m.CreatedAt = new(math.Trunc(*m.CreatedAt))
	}
	if m.Role == contract.RoleAssistant {
		if m.Provider == nil {
			m.Provider = new(model.Provider)
		}
		if m.Model == nil {
			m.Model = new(model.ID)
		}
	} else {
		m.Provider, m.Model = nil, nil
	}
}

// piTokenEstimate is Pi's estimate of a message's tokens: one for every
// four UTF-16 code units of its text, thinking, tool names, arguments and
// results, rounded up.
func piTokenEstimate(m *contract.Message) float64 {
	units := 0
	count := func(s string) { units += len(utf16.Encode([]rune(s))) }
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *contract.TextBlock:
			count(b.Text)
		case *contract.ThinkingBlock:
			count(b.Thinking)
		case *contract.ToolCallBlock:
			count(b.Name)
			count(string(b.Arguments))
		case *contract.ToolResultBlock:
			count(b.ToolName)
			count(b.Content)
		}
	}
	return math.Ceil(float64(units) / 4)
}
