package reference

import (
	"slices"

	"github.com/ds4context/adapterkit/contract"
)

// heldMessage is a cached message in 88 bytes instead of the 272 of a
// contract.Message: what every message has is kept in place, the members
// a history's messages share are bits (the header's session and runtime
// ids, an entry id equal to the source entry id, the role, the source and
// the flags), and what few messages have is behind one pointer. It is
// lossless: expanding it gives back every member of the message it was
// made from, valid or not. Its strings and blocks are the decoded
// message's, never handed out (callers get deep copies of expansions).
type heldMessage struct {
	id, sourceEntryID        string
	blocks                   []contract.Block
	createdAt, tokenEstimate float64
	more                     *heldMore // nil when the message has none of it
	role, source             uint8     // an index into heldRoles, heldSources; 0: in more
	bits                     heldBits
}

// heldMore is what a heldMessage keeps behind its pointer.
type heldMore struct {
	role                                   contract.Role
	source                                 contract.Source
	sessionID, entryID                     string
	provider, model, originalRole, runtime *string
	extra, provenanceExtra, flagsExtra     []contract.Field
}

var noMore heldMore

type heldBits uint16

const (
	hasCreatedAt heldBits = 1 << iota
	hasTokenEstimate
	sessionInMore  // else the header's session id
	entryInMore    // else the source entry id
	runtimeHeaders // the header's runtime id
	runtimeInMore  // more.runtime, which may be nil
	hasPinned
	isPinned
	hasAtomic
	isAtomic
	hasLocalOnly
	isLocalOnly
	hasSynthetic
	isSynthetic
)

var (
	heldRoles   = [...]contract.Role{"", contract.RoleSystem, contract.RoleUser, contract.RoleAssistant, contract.RoleTool, contract.RoleCustom}
	heldSources = [...]contract.Source{"", contract.SourcePiSession, contract.SourceRuntimeSession}
)

// heldContext is what the messages of one history share: its header's
// session id and one pointer to its runtime id, which every expansion of a
// message holding the header's runtime id points to.
type heldContext struct {
	sessionID string
	runtimeID *string
}

func newHeldContext(h *Header) heldContext {
	return heldContext{sessionID: h.SessionID, runtimeID: new(h.RuntimeID)}
}

func indexOfName[T comparable](names []T, v T) uint8 {
	for i := 1; i < len(names); i++ {
		if names[i] == v {
			return uint8(i)
		}
	}
	return 0
}

func flagBits(p *bool, has, set heldBits) heldBits {
	switch {
	case p == nil:
		return 0
	case *p:
		return has | set
	}
	return has
}

// The flags of every expansion point to these; nothing writes through
// an expansion's pointers.
var heldTrue, heldFalse = true, false

func flagOf(b, has, set heldBits) *bool {
	switch {
	case b&has == 0:
		return nil
	case b&set != 0:
		return &heldTrue
	}
	return &heldFalse
}

// hold returns m as a heldMessage of the history x describes.
func (x *heldContext) hold(m *contract.Message) heldMessage {
	h := heldMessage{id: m.ID, sourceEntryID: m.SourceEntryID, blocks: m.Blocks}
	var more heldMore
	needMore := false
	if h.role = indexOfName(heldRoles[:], m.Role); h.role == 0 {
		more.role, needMore = m.Role, true
	}
	p := &m.Provenance
	if h.source = indexOfName(heldSources[:], p.Source); h.source == 0 {
		more.source, needMore = p.Source, true
	}
	if m.CreatedAt != nil {
		h.createdAt, h.bits = *m.CreatedAt, h.bits|hasCreatedAt
	}
	if m.TokenEstimate != nil {
		h.tokenEstimate, h.bits = *m.TokenEstimate, h.bits|hasTokenEstimate
	}
	if p.SessionID != x.sessionID {
		more.sessionID, h.bits, needMore = p.SessionID, h.bits|sessionInMore, true
	}
	if p.EntryID != m.SourceEntryID {
		more.entryID, h.bits, needMore = p.EntryID, h.bits|entryInMore, true
	}
	switch {
	case p.RuntimeID != nil && *p.RuntimeID == *x.runtimeID:
		h.bits |= runtimeHeaders
	case p.RuntimeID != nil:
		more.runtime, h.bits, needMore = p.RuntimeID, h.bits|runtimeInMore, true
	}
	f := &m.Flags
	h.bits |= flagBits(f.Pinned, hasPinned, isPinned) | flagBits(f.Atomic, hasAtomic, isAtomic) |
		flagBits(f.LocalOnly, hasLocalOnly, isLocalOnly) | flagBits(f.Synthetic, hasSynthetic, isSynthetic)
	if m.Provider != nil || m.Model != nil || p.OriginalRole != nil || m.Extra != nil || p.Extra != nil || f.Extra != nil {
		more.provider, more.model, more.originalRole = m.Provider, m.Model, p.OriginalRole
		more.extra, more.provenanceExtra, more.flagsExtra = m.Extra, p.Extra, f.Extra
		needMore = true
	}
	if needMore {
		kept := more // only a message with more moves it to the heap
		h.more = &kept
	}
	return h
}

// message expands h. The result shares h's strings, blocks, raw values and
// numbers (and its runtime id and flags with other expansions): it is for
// reading, or for a deep copy, never for writing.
func (x *heldContext) message(h *heldMessage) contract.Message {
	var m contract.Message
	x.expandInto(&m, h)
	return m
}

// expandInto sets every member of *m to that of h's expansion (see
// message), one member at a time, so that expanding into the heap moves no
// temporary message.
func (x *heldContext) expandInto(m *contract.Message, h *heldMessage) {
	more := h.more
	if more == nil {
		more = &noMore
	}
	m.ID, m.SourceEntryID, m.Blocks = h.id, h.sourceEntryID, h.blocks
	m.Role = heldRoles[h.role]
	if h.role == 0 {
		m.Role = more.role
	}
	m.CreatedAt, m.TokenEstimate = nil, nil
	if h.bits&hasCreatedAt != 0 {
		m.CreatedAt = &h.createdAt
	}
	if h.bits&hasTokenEstimate != 0 {
		m.TokenEstimate = &h.tokenEstimate
	}
	m.Provider, m.Model, m.Extra = more.provider, more.model, more.extra
	p := &m.Provenance
	p.Source = heldSources[h.source]
	if h.source == 0 {
		p.Source = more.source
	}
	p.SessionID, p.EntryID = x.sessionID, h.sourceEntryID
	if h.bits&sessionInMore != 0 {
		p.SessionID = more.sessionID
	}
	if h.bits&entryInMore != 0 {
		p.EntryID = more.entryID
	}
	switch {
	case h.bits&runtimeHeaders != 0:
		p.RuntimeID = x.runtimeID
	case h.bits&runtimeInMore != 0:
		p.RuntimeID = more.runtime
	default:
		p.RuntimeID = nil
	}
	p.OriginalRole, p.Extra = more.originalRole, more.provenanceExtra
	f := &m.Flags
	f.Pinned, f.Atomic = flagOf(h.bits, hasPinned, isPinned), flagOf(h.bits, hasAtomic, isAtomic)
	f.LocalOnly, f.Synthetic = flagOf(h.bits, hasLocalOnly, isLocalOnly), flagOf(h.bits, hasSynthetic, isSynthetic)
	f.Extra = more.flagsExtra
}

// appendCopies appends deep copies of the expansions of held to dst, as
// contract.AppendClones appends copies of messages: each message is
// expanded into dst's spare capacity, where the copy replaces it, so
// nothing is written to memory the result does not keep.
func (x *heldContext) appendCopies(dst []contract.Message, held []heldMessage) []contract.Message {
	at := len(dst)
	dst = slices.Grow(dst, len(held))[:at+len(held)]
	for i := range held {
		x.expandInto(&dst[at+i], &held[i])
	}
	return contract.AppendClones(dst[:at], dst[at:]...)
}

// expand returns the expansions of held (for reading; see message).
func (x *heldContext) expand(held []heldMessage) []contract.Message {
	out := make([]contract.Message, len(held))
	for i := range held {
		out[i] = x.message(&held[i])
	}
	return out
}
