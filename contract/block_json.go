package contract

import (
	"errors"
	"fmt"
)

var errFoundType = errors.New("found type")

func appendBlockJSON(dst []byte, b Block) ([]byte, error) {
	w := writer{b: append(dst, '{')}
	w.str("type", string(b.Type()))
	var err error
	if w.b, err = b.appendFields(w.b); err != nil {
		return dst, err
	}
	typ := b.Type()
	w.extras(b.extra(), func(n string) bool { return n == "type" || isBlockField(typ, n) })
	if w.err != nil {
		return dst, w.err
	}
	return append(w.b, '}'), nil
}

func isBlockField(t BlockType, n string) bool {
	switch t {
	case BlockText:
		return n == "text"
	case BlockThinking:
		return n == "thinking"
	case BlockToolCall:
		return n == "id" || n == "name" || n == "arguments"
	case BlockToolResult:
		return n == "toolCallId" || n == "toolName" || n == "content" || n == "isError"
	case BlockImage:
		return n == "mimeType" || n == "data"
	case BlockFileReference:
		return n == "path"
	case BlockArtifactReference:
		return n == "artifactId"
	case BlockSummaryReference:
		return n == "summaryId"
	case BlockOpaqueProvider:
		return n == "originalType" || n == "value"
	}
	return false
}

// Each appendFields writes the members that follow "type" (so its writer
// starts with n = 1: every member needs a leading comma).

func (b *TextBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("text", b.Text)
	return w.b, w.err
}

func (b *ThinkingBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("thinking", b.Thinking)
	return w.b, w.err
}

func (b *ToolCallBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("id", b.ID)
	w.str("name", b.Name)
	if b.Arguments != nil {
		w.raw("arguments", b.Arguments)
	}
	return w.b, w.err
}

func (b *ToolResultBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("toolCallId", b.ToolCallID)
	w.str("toolName", b.ToolName)
	w.str("content", b.Content)
	w.boolean("isError", b.IsError)
	return w.b, w.err
}

func (b *ImageBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.optStr("mimeType", b.MimeType)
	w.optStr("data", b.Data)
	return w.b, w.err
}

func (b *FileReferenceBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("path", b.Path)
	return w.b, w.err
}

func (b *ArtifactReferenceBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("artifactId", b.ArtifactID)
	return w.b, w.err
}

func (b *SummaryReferenceBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.str("summaryId", b.SummaryID)
	return w.b, w.err
}

func (b *OpaqueProviderBlock) appendFields(dst []byte) ([]byte, error) {
	w := writer{b: dst, n: 1}
	w.optStr("originalType", b.OriginalType)
	w.raw("value", b.Value)
	return w.b, w.err
}

// block decodes one block at the scanner's position. It first finds the
// "type" member (immediately, when it comes first, as writers put it), then
// decodes the members for that type.
func (d *decoder) block() (Block, error) {
	start := d.s.Offset()
	typ, found := "", false
	err := d.s.Object(func(name string) error {
		if name != "type" {
			return d.s.Skip()
		}
		v, err := d.str("type")
		if err != nil {
			return err
		}
		typ, found = v, true
		return errFoundType
	})
	if err != nil && !errors.Is(err, errFoundType) {
		return nil, d.fail(err)
	}
	if !found {
		return nil, d.missing("type")
	}
	d.s.Seek(start)
	switch BlockType(typ) {
	case BlockText:
		b := &TextBlock{}
		return b, d.blockFields(typ, &b.Extra, textFields, func(n string) (err error) {
			b.Text, err = d.str(n)
			return
		})
	case BlockThinking:
		b := &ThinkingBlock{}
		return b, d.blockFields(typ, &b.Extra, thinkingFields, func(n string) (err error) {
			b.Thinking, err = d.str(n)
			return
		})
	case BlockToolCall:
		b := &ToolCallBlock{}
		return b, d.blockFields(typ, &b.Extra, toolCallFields, func(n string) (err error) {
			switch n {
			case "id":
				b.ID, err = d.str(n)
			case "name":
				b.Name, err = d.str(n)
			default:
				b.Arguments, err = d.raw(n)
			}
			return
		})
	case BlockToolResult:
		b := &ToolResultBlock{}
		return b, d.blockFields(typ, &b.Extra, toolResultFields, func(n string) (err error) {
			switch n {
			case "toolCallId":
				b.ToolCallID, err = d.str(n)
			case "toolName":
				b.ToolName, err = d.str(n)
			case "content":
				b.Content, err = d.str(n)
			default:
				b.IsError, err = d.boolean(n)
			}
			return
		})
	case BlockImage:
		b := &ImageBlock{}
		return b, d.blockFields(typ, &b.Extra, imageFields, func(n string) (err error) {
			if n == "mimeType" {
				b.MimeType, err = d.optStr(n)
			} else {
				b.Data, err = d.optStr(n)
			}
			return
		})
	case BlockFileReference:
		b := &FileReferenceBlock{}
		return b, d.blockFields(typ, &b.Extra, fileReferenceFields, func(n string) (err error) {
			b.Path, err = d.str(n)
			return
		})
	case BlockArtifactReference:
		b := &ArtifactReferenceBlock{}
		return b, d.blockFields(typ, &b.Extra, artifactReferenceFields, func(n string) (err error) {
			b.ArtifactID, err = d.str(n)
			return
		})
	case BlockSummaryReference:
		b := &SummaryReferenceBlock{}
		return b, d.blockFields(typ, &b.Extra, summaryReferenceFields, func(n string) (err error) {
			b.SummaryID, err = d.str(n)
			return
		})
	case BlockOpaqueProvider:
		b := &OpaqueProviderBlock{}
		return b, d.blockFields(typ, &b.Extra, opaqueProviderFields, func(n string) (err error) {
			if n == "originalType" {
				b.OriginalType, err = d.optStr(n)
			} else {
				b.Value, err = d.raw(n)
			}
			return
		})
	}
	d.push("type")
	defer d.pop()
	return nil, d.fail(fmt.Errorf("%w %q", ErrUnknownBlockType, typ))
}

// fieldSpec names a block member the contract defines and whether it is required.
type fieldSpec struct {
	name     string
	required bool
}

var (
	textFields              = []fieldSpec{{"text", true}}
	thinkingFields          = []fieldSpec{{"thinking", true}}
	toolCallFields          = []fieldSpec{{"id", true}, {"name", true}, {"arguments", false}}
	toolResultFields        = []fieldSpec{{"toolCallId", true}, {"toolName", true}, {"content", true}, {"isError", true}}
	imageFields             = []fieldSpec{{"mimeType", false}, {"data", false}}
	fileReferenceFields     = []fieldSpec{{"path", true}}
	artifactReferenceFields = []fieldSpec{{"artifactId", true}}
	summaryReferenceFields  = []fieldSpec{{"summaryId", true}}
	opaqueProviderFields    = []fieldSpec{{"originalType", false}, {"value", true}}
)

func (d *decoder) blockFields(typ string, extra *[]Field, known []fieldSpec, field func(name string) error) error {
	var seen [4]bool
	err := d.s.Object(func(name string) error {
		if name == "type" {
			// A repeated "type" must agree with the first: JSON.parse would
			// keep the last one, and guessing between them is unsafe.
			v, err := d.str("type")
			if err == nil && v != typ {
				d.push("type")
				err = d.fail(fmt.Errorf("repeated type member disagrees (%q, then %q)", typ, v))
				d.pop()
			}
			return err
		}
		for j := range known {
			if known[j].name == name {
				seen[j] = true
				return field(known[j].name)
			}
		}
		var err error
		*extra, err = d.extra(*extra, name)
		return err
	})
	if err != nil {
		return d.fail(err)
	}
	for j := range known {
		if known[j].required && !seen[j] {
			return d.missing(known[j].name)
		}
	}
	return nil
}
