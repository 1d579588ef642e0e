package contract

import "encoding/json"

// Role is the author of a canonical message.
type Role string

// The five canonical roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleCustom    Role = "custom"
)

func (r Role) valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleCustom:
		return true
	}
	return false
}

// Source names the kind of native history a message was projected from.
type Source string

// The two provenance sources.
const (
	SourcePiSession      Source = "pi-session"
	SourceRuntimeSession Source = "runtime-session"
)

func (s Source) valid() bool { return s == SourcePiSession || s == SourceRuntimeSession }

// Field is a JSON member the contract does not define. Decoding keeps such
// members verbatim, in document order, and encoding writes them back after
// the contract's own fields, so nothing is lost in a round trip.
type Field struct {
	Name  string
	Value json.RawMessage
}

// Provenance ties a canonical message to the native history entry it came from.
type Provenance struct {
	Source       Source
	SessionID    string
	EntryID      string
	OriginalRole *string // optional
	RuntimeID    *string // optional; must equal the snapshot's runtime id for runtime-session sources
	Extra        []Field
}

// Flags mark a canonical message. Every flag is optional (nil means absent).
// The Go kit requires them to be JSON booleans when present; the TypeScript
// kit does not check their type.
type Flags struct {
	Pinned    *bool
	Atomic    *bool
	LocalOnly *bool
	Synthetic *bool
	Extra     []Field
}

// Message is a canonical message: one entry of the runtime's native history,
// projected into the contract's shape. Pointer fields are optional and are
// omitted from JSON when nil.
type Message struct {
	ID            string
	SourceEntryID string // must equal Provenance.EntryID
	Role          Role
	Blocks        []Block
	CreatedAt     *float64 // milliseconds since the Unix epoch
	Provider      *string
	Model         *string
	Provenance    Provenance
	TokenEstimate *float64
	Flags         Flags
	Extra         []Field
}

// BlockType is the JSON "type" tag of a content block.
type BlockType string

// The nine block types.
const (
	BlockText              BlockType = "text"
	BlockThinking          BlockType = "thinking"
	BlockToolCall          BlockType = "toolCall"
	BlockToolResult        BlockType = "toolResult"
	BlockImage             BlockType = "image"
	BlockFileReference     BlockType = "fileReference"
	BlockArtifactReference BlockType = "artifactReference"
	BlockSummaryReference  BlockType = "summaryReference"
	BlockOpaqueProvider    BlockType = "opaqueProvider"
)

// Block is one content block of a message: a tagged union over the nine
// block types of this package (*TextBlock, *ThinkingBlock, *ToolCallBlock,
// *ToolResultBlock, *ImageBlock, *FileReferenceBlock, *ArtifactReferenceBlock,
// *SummaryReferenceBlock, *OpaqueProviderBlock). The union is closed: other
// packages cannot add block types, and an unknown "type" is a decode error.
type Block interface {
	// Type returns the block's JSON type tag.
	Type() BlockType
	appendFields(dst []byte) ([]byte, error)
	extra() []Field
}

// TextBlock is plain text.
type TextBlock struct {
	Text  string
	Extra []Field
}

// ThinkingBlock is model reasoning text.
type ThinkingBlock struct {
	Thinking string
	Extra    []Field
}

// ToolCallBlock is a tool invocation. Arguments is any JSON value, kept raw;
// nil means the member is absent.
type ToolCallBlock struct {
	ID        string
	Name      string
	Arguments json.RawMessage
	Extra     []Field
}

// ToolResultBlock is the result of the tool call named by ToolCallID.
// IsError is always written, also when false.
type ToolResultBlock struct {
	ToolCallID string
	ToolName   string
	Content    string
	IsError    bool
	Extra      []Field
}

// ImageBlock is an image, usually base64 data with its MIME type.
type ImageBlock struct {
	MimeType *string
	Data     *string
	Extra    []Field
}

// FileReferenceBlock refers to a file by path.
type FileReferenceBlock struct {
	Path  string
	Extra []Field
}

// ArtifactReferenceBlock refers to a stored artifact.
type ArtifactReferenceBlock struct {
	ArtifactID string
	Extra      []Field
}

// SummaryReferenceBlock refers to a stored summary.
type SummaryReferenceBlock struct {
	SummaryID string
	Extra     []Field
}

// OpaqueProviderBlock carries provider-specific content the contract does not
// interpret. Value is any JSON value, kept raw; it is always written (a nil
// Value is written as null).
type OpaqueProviderBlock struct {
	OriginalType *string
	Value        json.RawMessage
	Extra        []Field
}

// Type implements Block.
func (*TextBlock) Type() BlockType { return BlockText }

// Type implements Block.
func (*ThinkingBlock) Type() BlockType { return BlockThinking }

// Type implements Block.
func (*ToolCallBlock) Type() BlockType { return BlockToolCall }

// Type implements Block.
func (*ToolResultBlock) Type() BlockType { return BlockToolResult }

// Type implements Block.
func (*ImageBlock) Type() BlockType { return BlockImage }

// Type implements Block.
func (*FileReferenceBlock) Type() BlockType { return BlockFileReference }

// Type implements Block.
func (*ArtifactReferenceBlock) Type() BlockType { return BlockArtifactReference }

// Type implements Block.
func (*SummaryReferenceBlock) Type() BlockType { return BlockSummaryReference }

// Type implements Block.
func (*OpaqueProviderBlock) Type() BlockType { return BlockOpaqueProvider }

func (b *TextBlock) extra() []Field              { return b.Extra }
func (b *ThinkingBlock) extra() []Field          { return b.Extra }
func (b *ToolCallBlock) extra() []Field          { return b.Extra }
func (b *ToolResultBlock) extra() []Field        { return b.Extra }
func (b *ImageBlock) extra() []Field             { return b.Extra }
func (b *FileReferenceBlock) extra() []Field     { return b.Extra }
func (b *ArtifactReferenceBlock) extra() []Field { return b.Extra }
func (b *SummaryReferenceBlock) extra() []Field  { return b.Extra }
func (b *OpaqueProviderBlock) extra() []Field    { return b.Extra }
