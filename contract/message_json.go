package contract

import (
	"errors"
	"fmt"
)

func isMessageField(n string) bool {
	switch n {
	case "id", "sourceEntryId", "role", "blocks", "createdAt", "provider", "model", "provenance", "tokenEstimate", "flags":
		return true
	}
	return false
}

func isProvenanceField(n string) bool {
	switch n {
	case "source", "sessionId", "entryId", "originalRole", "runtimeId":
		return true
	}
	return false
}

func isFlagsField(n string) bool {
	switch n {
	case "pinned", "atomic", "localOnly", "synthetic":
		return true
	}
	return false
}

// AppendMessageJSON appends m's wire JSON to dst: contract fields in contract
// order, optional fields omitted when nil, unknown fields after them, written
// exactly as JSON.stringify would write them.
func AppendMessageJSON(dst []byte, m *Message) ([]byte, error) {
	w := writer{b: append(dst, '{')}
	w.str("id", m.ID)
	w.str("sourceEntryId", m.SourceEntryID)
	w.str("role", string(m.Role))
	w.key("blocks")
	w.b = append(w.b, '[')
	for i, b := range m.Blocks {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		if b == nil {
			return dst, fmt.Errorf("contract: encode message %q: block %d is nil", m.ID, i)
		}
		var err error
		if w.b, err = appendBlockJSON(w.b, b); err != nil {
			return dst, err
		}
	}
	w.b = append(w.b, ']')
	w.num("createdAt", m.CreatedAt)
	w.optStr("provider", m.Provider)
	w.optStr("model", m.Model)
	w.key("provenance")
	pw := writer{b: append(w.b, '{')}
	pw.str("source", string(m.Provenance.Source))
	pw.str("sessionId", m.Provenance.SessionID)
	pw.str("entryId", m.Provenance.EntryID)
	pw.optStr("originalRole", m.Provenance.OriginalRole)
	pw.optStr("runtimeId", m.Provenance.RuntimeID)
	pw.extras(m.Provenance.Extra, isProvenanceField)
	if pw.err != nil {
		return dst, pw.err
	}
	w.b = append(pw.b, '}')
	w.num("tokenEstimate", m.TokenEstimate)
	w.key("flags")
	fw := writer{b: append(w.b, '{')}
	fw.optBool("pinned", m.Flags.Pinned)
	fw.optBool("atomic", m.Flags.Atomic)
	fw.optBool("localOnly", m.Flags.LocalOnly)
	fw.optBool("synthetic", m.Flags.Synthetic)
	fw.extras(m.Flags.Extra, isFlagsField)
	if fw.err != nil {
		return dst, fw.err
	}
	w.b = append(fw.b, '}')
	w.extras(m.Extra, isMessageField)
	if w.err != nil {
		return dst, w.err
	}
	return append(w.b, '}'), nil
}

// MarshalJSON encodes the message as wire JSON. Note that encoding/json
// HTML-escapes the output of MarshalJSON methods when it is called through
// json.Marshal; use AppendMessageJSON for output byte-identical to the
// TypeScript kit.
func (m Message) MarshalJSON() ([]byte, error) { return AppendMessageJSON(nil, &m) }

// UnmarshalJSON decodes wire JSON strictly: member names are case-sensitive,
// required members must be present, every member must have its JSON type, and
// an unknown block type is an error. Unknown members are kept in Extra.
func (m *Message) UnmarshalJSON(data []byte) error {
	return decodeWith("message", data, func(d *decoder) error { return d.message(m) })
}

// DecodeMessage decodes one message's wire JSON; it is UnmarshalJSON as a function.
func DecodeMessage(data []byte) (Message, error) {
	var m Message
	err := m.UnmarshalJSON(data)
	return m, err
}

// DecodeMessageString is DecodeMessage for wire JSON held in a string. The
// message's strings that need no unescaping are parts of data rather than
// copies, so decoding allocates less and the message keeps data alive: a
// runtime that decodes many messages from one block of text keeps that
// block once, whole, for as long as it keeps any of them. Raw values
// (arguments, opaque values, unknown members) are copies, as with
// DecodeMessage.
func DecodeMessageString(data string) (Message, error) {
	var m Message
	err := decodeWithString("message", data, func(d *decoder) error { return d.message(&m) })
	return m, err
}

// The members a message and its provenance must have, in the order a
// missing one is reported.
var (
	messageRequired    = []string{"id", "sourceEntryId", "role", "blocks", "provenance", "flags"}
	provenanceRequired = []string{"source", "sessionId", "entryId"}
)

func (d *decoder) message(m *Message) error {
	*m = Message{}
	req := required{names: messageRequired}
	err := d.object("", func(name string) error {
		req.see(name)
		var err error
		switch name {
		case "id":
			m.ID, err = d.str("id")
		case "sourceEntryId":
			m.SourceEntryID, err = d.str("sourceEntryId")
		case "role":
			var r string
			if r, err = d.str("role"); err == nil {
				m.Role = Role(r)
				if !m.Role.valid() {
					d.push("role")
					err = d.fail(fmt.Errorf("%w: %q", ErrInvalidEnum, r))
					d.pop()
				}
			}
		case "blocks":
			m.Blocks = []Block{}
			err = d.array("blocks", func(int) error {
				b, err := d.block()
				if err == nil {
					m.Blocks = append(m.Blocks, b)
				}
				return err
			})
		case "createdAt":
			m.CreatedAt, err = d.num("createdAt")
		case "provider":
			m.Provider, err = d.optStr("provider")
		case "model":
			m.Model, err = d.optStr("model")
		case "provenance":
			err = d.provenance(&m.Provenance)
		case "tokenEstimate":
			m.TokenEstimate, err = d.num("tokenEstimate")
		case "flags":
			err = d.flags(&m.Flags)
		default:
			m.Extra, err = d.extra(m.Extra, name)
		}
		return err
	})
	if err != nil {
		return err
	}
	return req.check(d)
}

func (d *decoder) provenance(p *Provenance) error {
	*p = Provenance{}
	req := required{names: provenanceRequired}
	err := d.object("provenance", func(name string) error {
		req.see(name)
		var err error
		switch name {
		case "source":
			var s string
			if s, err = d.str("source"); err == nil {
				p.Source = Source(s)
				if !p.Source.valid() {
					d.push("source")
					err = d.fail(fmt.Errorf("%w: %q", ErrInvalidEnum, s))
					d.pop()
				}
			}
		case "sessionId":
			p.SessionID, err = d.str("sessionId")
		case "entryId":
			p.EntryID, err = d.str("entryId")
		case "originalRole":
			p.OriginalRole, err = d.optStr("originalRole")
		case "runtimeId":
			p.RuntimeID, err = d.optStr("runtimeId")
		default:
			p.Extra, err = d.extra(p.Extra, name)
		}
		return err
	})
	if err != nil {
		return err
	}
	d.push("provenance")
	defer d.pop()
	return req.check(d)
}

func (d *decoder) flags(f *Flags) error {
	*f = Flags{}
	return d.object("flags", func(name string) error {
		var err error
		switch name {
		case "pinned":
			f.Pinned, err = d.optBool("pinned")
		case "atomic":
			f.Atomic, err = d.optBool("atomic")
		case "localOnly":
			f.LocalOnly, err = d.optBool("localOnly")
		case "synthetic":
			f.Synthetic, err = d.optBool("synthetic")
		default:
			f.Extra, err = d.extra(f.Extra, name)
		}
		return err
	})
}

// ValidateMessage reports whether a message built in Go has the contract's
// structure, with the same rules decoding applies: a role and provenance
// source from their sets and no nil block. Wire JSON that decodes is always
// structurally valid.
func ValidateMessage(m *Message) error {
	if !m.Role.valid() {
		return &DecodeError{Path: "message.role", Err: fmt.Errorf("%w: %q", ErrInvalidEnum, m.Role)}
	}
	if !m.Provenance.Source.valid() {
		return &DecodeError{Path: "message.provenance.source", Err: fmt.Errorf("%w: %q", ErrInvalidEnum, m.Provenance.Source)}
	}
	for i, b := range m.Blocks {
		if b == nil {
			return &DecodeError{Path: fmt.Sprintf("message.blocks[%d]", i), Err: errors.New("block is nil")}
		}
	}
	return nil
}
