package gen

import (
	"encoding/json"
	"strconv"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"pgregory.net/rapid"
)

// Block returns a generator of content blocks of all nine types, with
// optional members present or absent and unknown members kept in Extra.
// Tool call and result blocks carry arbitrary ids; use History for tool
// exchanges whose calls and results match.
func Block() *rapid.Generator[contract.Block] {
	return rapid.OneOf(ContentBlock(), toolCallBlock(), toolResultBlock())
}

// ContentBlock returns a generator of the seven block types that are not
// tool calls or tool results: a message holding only these is not a tool
// message and belongs to no tool atomic group.
func ContentBlock() *rapid.Generator[contract.Block] { return contentBlock(0) }

// contentBlockFamilies are the families of ContentBlock's seven types, by
// the number it draws for the type ("" for text, which is no family).
// Opaque provider blocks are drawn in two kinds: raw provider blocks and
// the others.
var contentBlockFamilies = []Family{"", FamilyThinking, FamilyImage, FamilyFileReference, FamilyArtifactReference, FamilySummaryReference, FamilyOpaqueProvider, FamilyRawProviderBlock}

// contentBlock draws the content blocks of ContentBlock, except the types
// of the families in leave (text is always drawn).
func contentBlock(leave familySet) *rapid.Generator[contract.Block] {
	kinds := make([]int, 0, len(contentBlockFamilies))
	for k, f := range contentBlockFamilies {
		if f == "" || !leave.has(f) {
			kinds = append(kinds, k)
		}
	}
	return rapid.Custom(func(t *rapid.T) contract.Block {
		switch kinds[rapid.IntRange(0, len(kinds)-1).Draw(t, "blockType")] {
		case 0:
			return &contract.TextBlock{Text: text().Draw(t, "text"), Extra: extraFields(t, leave)}
		case 1:
			return &contract.ThinkingBlock{Thinking: text().Draw(t, "thinking"), Extra: extraFields(t, leave)}
		case 2:
			return &contract.ImageBlock{
				MimeType: optString(mimeType()).Draw(t, "mimeType"),
				Data:     optString(rapid.SampledFrom([]string{"iVBORw0KGgo=", "", "/9j/4AAQ"})).Draw(t, "data"),
				Extra:    extraFields(t, leave),
			}
		case 3:
			return &contract.FileReferenceBlock{Path: text().Draw(t, "path"), Extra: extraFields(t, leave)}
		case 4:
			return &contract.ArtifactReferenceBlock{ArtifactID: text().Draw(t, "artifactId"), Extra: extraFields(t, leave)}
		case 5:
			return &contract.SummaryReferenceBlock{SummaryID: text().Draw(t, "summaryId"), Extra: extraFields(t, leave)}
		case 6:
			b := &contract.OpaqueProviderBlock{
				OriginalType: optString(text()).Draw(t, "originalType"),
				Value:        RawJSON().Draw(t, "value"),
				Extra:        extraFields(t, leave),
			}
			// Never a raw provider block, which is a family of its own.
			if IsRawProviderBlock(b) {
				if b.OriginalType == nil {
					b.OriginalType = new("")
				} else {
					b.OriginalType = nil
				}
			}
			return b
		default:
			return rawProviderBlock(t, leave)
		}
	})
}

// rawProviderBlock draws a raw provider block (IsRawProviderBlock): an
// object whose type is the block's originalType, with members of its own,
// or a value that is not an object, without originalType.
func rawProviderBlock(t *rapid.T, leave familySet) *contract.OpaqueProviderBlock {
	b := &contract.OpaqueProviderBlock{Extra: extraFields(t, leave)}
	if rapid.Bool().Draw(t, "rawObject") {
		typ := text().Draw(t, "rawType")
		b.OriginalType = &typ
		v := jsonw.AppendString([]byte(`{"type":`), typ)
		for k := range rapid.IntRange(0, 2).Draw(t, "rawMembers") {
			v = append(v, ',')
			v = jsonw.AppendString(v, "m"+strconv.Itoa(k))
			v = append(v, ':')
			v = append(v, RawJSON().Draw(t, "rawMember")...)
		}
		b.Value = append(v, '}')
		return b
	}
	b.Value = rapid.Custom(func(t *rapid.T) json.RawMessage {
		v := RawJSON().Draw(t, "rawValue")
		if v[0] == '{' {
			return json.RawMessage(`[` + string(v) + `]`)
		}
		return v
	}).Draw(t, "rawValue")
	return b
}

func toolCallBlock() *rapid.Generator[contract.Block] {
	return rapid.Custom(func(t *rapid.T) contract.Block {
		return newCall(t, text().Draw(t, "callId"), 0)
	})
}

func toolResultBlock() *rapid.Generator[contract.Block] {
	return rapid.Custom(func(t *rapid.T) contract.Block {
		return newResult(t, text().Draw(t, "toolCallId"), toolName(t), 0)
	})
}

// mimeTypes are the usual mime types of image blocks, and empty.
var mimeTypes = []string{"image/png", "image/jpeg", "", "image/webp"}

// oddMimeTypes are mime types a normaliser changes: each has upper case
// (which mime.ParseMediaType lower-cases), and some parameters,
// whitespace of stringClasses around them or a long s (strings.EqualFold
// takes image/ſvg+XML for image/svg+xml).
var oddMimeTypes = []string{
	"IMAGE/PNG", "image/JPEG", "image/svg+xml; charset=UTF-8", " Image/png", "image/JPEG\u0085",
	"\ufeffIMAGE/GIF", "Image/png\r\n", "image/\u017fvg+XML",
}

// mimeType draws the mime type of an image block: about half the time one
// of oddMimeTypes.
func mimeType() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		if oneIn(t, "oddMimeType", 2) {
			return rapid.SampledFrom(oddMimeTypes).Draw(t, "mimeType")
		}
		return rapid.SampledFrom(mimeTypes).Draw(t, "mimeType")
	})
}

var toolNames = []string{"read", "write", "bash", "grep", "web.fetch"}

// oddToolNames are tool names a normaliser changes: other case, and
// whitespace, case traps, a combining mark and noncharacters of
// stringClasses.
var oddToolNames = []string{"Read", "read\u0085", "\ufeffgrep", " bash", "write\r\n", "web.fetch\u180e", "\u017fed", "\u0130nspect", "\u212aill", "e\u0301dit",
	"grep\ufdd0", "read\ufffe", "web.fetch\U0010ffff", "\uffffbash"}

// toolName draws a tool name: about one time in five one of
// oddToolNames.
func toolName(t *rapid.T) string {
	if oneIn(t, "oddToolName", 4) {
		return rapid.SampledFrom(oddToolNames).Draw(t, "toolName")
	}
	return rapid.SampledFrom(toolNames).Draw(t, "toolName")
}

// newCall draws a tool call block with the given id. Arguments are absent
// (allowed by the contract) or any JSON value.
func newCall(t *rapid.T, id string, leave familySet) *contract.ToolCallBlock {
	b := &contract.ToolCallBlock{ID: id, Name: toolName(t)}
	if rapid.IntRange(0, 4).Draw(t, "hasArguments") > 0 {
		b.Arguments = RawJSON().Draw(t, "arguments")
	}
	b.Extra = extraFields(t, leave)
	return b
}

// newResult draws a result block for the call id.
func newResult(t *rapid.T, callID, name string, leave familySet) *contract.ToolResultBlock {
	return &contract.ToolResultBlock{
		ToolCallID: callID,
		ToolName:   name,
		Content:    text().Draw(t, "content"),
		IsError:    rapid.IntRange(0, 5).Draw(t, "isError") == 0,
		Extra:      extraFields(t, leave),
	}
}
