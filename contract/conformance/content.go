package conformance

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
)

// This file compares a snapshot's content with the canonical history it was
// created from. Differences are described by member path, JSON kind and
// size, never by content: only the contract's fixed vocabulary (member
// names, roles, provenance sources, block types), numbers and booleans of
// the contract's own members, and names of unknown members that look like
// short identifiers are shown.

// diffMessages returns "" when got holds exactly the messages of want,
// member by member as the wire writes them (unknown members verbatim and in
// order, numbers as JSON.stringify writes them), and otherwise describes the
// first difference: a message missing, out of order or extra, or the path of
// every differing member of the first differing message (up to
// maxMemberDiffs) with the kinds and sizes of both sides.
func diffMessages(want, got []contract.Message) string {
	d, _ := describeMessages(want, got)
	return d
}

// describeMessages is diffMessages, with the kinds of the differences it
// describes, joined by ", ": member paths without indices
// ("provenance.runtimeId", "blocks[].text"), or what is wrong with the
// list of messages. Failures are counted by kind (see ProjectionRun).
func describeMessages(want, got []contract.Message) (string, string) {
	var wb, gb []byte
	var wantAt, gotAt map[string]int
	for i := range min(len(want), len(got)) {
		w, g := &want[i], &got[i]
		if sameMessage(w, g) {
			continue
		}
		var err error
		if wb, err = contract.AppendMessageJSON(wb[:0], w); err != nil {
			return fmt.Sprintf("message #%d: the canonical message has no wire form", i), "message without wire form"
		}
		if gb, err = contract.AppendMessageJSON(gb[:0], g); err != nil {
			return fmt.Sprintf("message #%d%s", i, unencodable(g)), "message without wire form"
		}
		if bytes.Equal(wb, gb) {
			continue
		}
		if w.ID != g.ID {
			if wantAt == nil {
				wantAt, gotAt = indexIDs(want), indexIDs(got)
			}
			if j, ok := gotAt[w.ID]; ok {
				return fmt.Sprintf("message #%d: the snapshot holds it as message #%d (messages out of order; %d expected, %d got)", i, j, len(want), len(got)), "messages out of order"
			}
			if k, ok := wantAt[g.ID]; ok {
				return fmt.Sprintf("message #%d: missing from the snapshot, which holds expected message #%d in its place (%d expected, %d got)", i, k, len(want), len(got)), "message missing"
			}
		}
		return diffWire(i, wb, gb)
	}
	switch {
	case len(want) > len(got):
		return fmt.Sprintf("messages: %d expected, %d got (message #%d and after are missing)", len(want), len(got), len(got)), "messages missing"
	case len(want) < len(got):
		return fmt.Sprintf("messages: %d expected, %d got (message #%d and after are not in the history)", len(want), len(got), len(want)), "messages not in the history"
	}
	return "", ""
}

// sameMessage reports whether two messages certainly have the same wire
// form, comparing their members directly (raw JSON byte for byte); false
// means only that the wire forms must be compared.
func sameMessage(a, b *contract.Message) bool {
	if a.ID != b.ID || a.SourceEntryID != b.SourceEntryID || a.Role != b.Role || len(a.Blocks) != len(b.Blocks) ||
		!sameNum(a.CreatedAt, b.CreatedAt) || !sameStr(a.Provider, b.Provider) || !sameStr(a.Model, b.Model) ||
		!sameNum(a.TokenEstimate, b.TokenEstimate) || !sameFields(a.Extra, b.Extra) {
		return false
	}
	pa, pb := &a.Provenance, &b.Provenance
	if pa.Source != pb.Source || pa.SessionID != pb.SessionID || pa.EntryID != pb.EntryID ||
		!sameStr(pa.OriginalRole, pb.OriginalRole) || !sameStr(pa.RuntimeID, pb.RuntimeID) || !sameFields(pa.Extra, pb.Extra) {
		return false
	}
	fa, fb := &a.Flags, &b.Flags
	if !sameBool(fa.Pinned, fb.Pinned) || !sameBool(fa.Atomic, fb.Atomic) || !sameBool(fa.LocalOnly, fb.LocalOnly) ||
		!sameBool(fa.Synthetic, fb.Synthetic) || !sameFields(fa.Extra, fb.Extra) {
		return false
	}
	for k, x := range a.Blocks {
		if !sameBlock(x, b.Blocks[k]) {
			return false
		}
	}
	return true
}

func sameBlock(x, y contract.Block) bool {
	switch x := x.(type) {
	case *contract.TextBlock:
		y, ok := y.(*contract.TextBlock)
		return ok && x.Text == y.Text && sameFields(x.Extra, y.Extra)
	case *contract.ThinkingBlock:
		y, ok := y.(*contract.ThinkingBlock)
		return ok && x.Thinking == y.Thinking && sameFields(x.Extra, y.Extra)
	case *contract.ToolCallBlock:
		y, ok := y.(*contract.ToolCallBlock)
		return ok && x.ID == y.ID && x.Name == y.Name && (x.Arguments == nil) == (y.Arguments == nil) &&
			bytes.Equal(x.Arguments, y.Arguments) && sameFields(x.Extra, y.Extra)
	case *contract.ToolResultBlock:
		y, ok := y.(*contract.ToolResultBlock)
		return ok && x.ToolCallID == y.ToolCallID && x.ToolName == y.ToolName && x.Content == y.Content &&
			x.IsError == y.IsError && sameFields(x.Extra, y.Extra)
	case *contract.ImageBlock:
		y, ok := y.(*contract.ImageBlock)
		return ok && sameStr(x.MimeType, y.MimeType) && sameStr(x.Data, y.Data) && sameFields(x.Extra, y.Extra)
	case *contract.FileReferenceBlock:
		y, ok := y.(*contract.FileReferenceBlock)
		return ok && x.Path == y.Path && sameFields(x.Extra, y.Extra)
	case *contract.ArtifactReferenceBlock:
		y, ok := y.(*contract.ArtifactReferenceBlock)
		return ok && x.ArtifactID == y.ArtifactID && sameFields(x.Extra, y.Extra)
	case *contract.SummaryReferenceBlock:
		y, ok := y.(*contract.SummaryReferenceBlock)
		return ok && x.SummaryID == y.SummaryID && sameFields(x.Extra, y.Extra)
	case *contract.OpaqueProviderBlock:
		y, ok := y.(*contract.OpaqueProviderBlock)
		return ok && sameStr(x.OriginalType, y.OriginalType) && x.Value != nil && y.Value != nil &&
			bytes.Equal(x.Value, y.Value) && sameFields(x.Extra, y.Extra)
	}
	return false
}

func sameStr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func sameBool(a, b *bool) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// sameNum compares optional numbers; NaN, which has no wire form, is never
// the same.
func sameNum(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func sameFields(a, b []contract.Field) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].Name != b[k].Name || a[k].Value == nil || b[k].Value == nil || !bytes.Equal(a[k].Value, b[k].Value) {
			return false
		}
	}
	return true
}

// indexIDs maps each message id to the index of its first message.
func indexIDs(msgs []contract.Message) map[string]int {
	at := make(map[string]int, len(msgs))
	for i := range msgs {
		if _, dup := at[msgs[i].ID]; !dup {
			at[msgs[i].ID] = i
		}
	}
	return at
}

// unencodable says why a snapshot's message has no wire form.
func unencodable(m *contract.Message) string {
	for k, b := range m.Blocks {
		if b == nil {
			return fmt.Sprintf(" blocks[%d]: a block expected, nil got", k)
		}
	}
	return ": the snapshot's message has no wire form (an unknown member shadows a contract member or holds invalid JSON)"
}

// diffWire describes every difference between two messages' wire JSON,
// member by member (at most maxMemberDiffs, then how many more), and gives
// the kinds of all (their paths without indices, joined by ", ").
func diffWire(i int, want, got []byte) (string, string) {
	w, errW := jsonw.Parse(want)
	g, errG := jsonw.Parse(got)
	if errW == nil && errG == nil {
		var d memberDiffs
		diffValue(&d, scopeMessage, "", &w, &g)
		if len(d.list) > 0 {
			return fmt.Sprintf("message #%d", i) + d.String(), strings.Join(d.kinds, ", ")
		}
	}
	// Equal trees always have equal wire forms; this is only a safeguard.
	return fmt.Sprintf("message #%d: wire JSON of %d bytes expected, %d got", i, len(want), len(got)), "message wire JSON"
}

// maxMemberDiffs bounds how many differing members of one message a
// description lists.
const maxMemberDiffs = 8

// memberDiffs collects the differing members of one message: the path of
// each and what differs there.
type memberDiffs struct {
	list  []string
	more  int
	kinds []string // the distinct paths of the differences, without indices
}

// indices matches the indices of a member path.
var indices = regexp.MustCompile(`\[[0-9]+\]`)

func (d *memberDiffs) add(path, what string) {
	if k := cmp.Or(indices.ReplaceAllString(path, "[]"), "message"); !slices.Contains(d.kinds, k) {
		d.kinds = append(d.kinds, k)
	}
	if len(d.list) == maxMemberDiffs {
		d.more++
		return
	}
	if path == "" {
		d.list = append(d.list, ": "+what)
		return
	}
	d.list = append(d.list, " "+path+": "+what)
}

// prefixKinds prefixes every kind of a ", "-joined list.
func prefixKinds(prefix, kinds string) string {
	parts := strings.Split(kinds, ", ")
	for i := range parts {
		parts[i] = prefix + parts[i]
	}
	return strings.Join(parts, ", ")
}

// String joins the differences: " a: x; b: y; and 2 more members differ".
func (d *memberDiffs) String() string {
	var b strings.Builder
	for k, e := range d.list {
		if k > 0 {
			b.WriteByte(';')
		}
		b.WriteString(e)
	}
	if d.more > 0 {
		fmt.Fprintf(&b, "; and %d more members differ", d.more)
	}
	return b.String()
}

// scope says what a JSON value is in a message: a contract object, the
// blocks array, a contract scalar (an enumeration or not), or a raw JSON
// value (tool arguments, an opaque value, an unknown member's value).
type scope int

const (
	scopeMessage scope = iota
	scopeProvenance
	scopeFlags
	scopeBlocks
	scopeBlock
	scopeScalar
	scopeRole
	scopeSource
	scopeBlockType
	scopeRaw
)

var (
	roleNames      = []string{"system", "user", "assistant", "tool", "custom"}
	sourceNames    = []string{"pi-session", "runtime-session"}
	blockTypeNames = []string{"text", "thinking", "toolCall", "toolResult", "image", "fileReference", "artifactReference", "summaryReference", "opaqueProvider"}
)

// member returns the scope of member name of an object in scope s, whether
// the contract defines it, and its path. blockType is the block's type
// (scopeBlock only).
func member(s scope, blockType, path, name string) (scope, bool, string) {
	known := func(names ...string) bool { return slices.Contains(names, name) }
	join := func() string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch s {
	case scopeMessage:
		switch name {
		case "blocks":
			return scopeBlocks, true, join()
		case "provenance":
			return scopeProvenance, true, join()
		case "flags":
			return scopeFlags, true, join()
		case "role":
			return scopeRole, true, join()
		}
		if known("id", "sourceEntryId", "createdAt", "provider", "model", "tokenEstimate") {
			return scopeScalar, true, join()
		}
	case scopeProvenance:
		if name == "source" {
			return scopeSource, true, join()
		}
		if known("sessionId", "entryId", "originalRole", "runtimeId") {
			return scopeScalar, true, join()
		}
	case scopeFlags:
		if known("pinned", "atomic", "localOnly", "synthetic") {
			return scopeScalar, true, join()
		}
	case scopeBlock:
		if name == "type" {
			return scopeBlockType, true, join()
		}
		if blockMember(blockType, name) {
			if name == "arguments" || name == "value" {
				return scopeRaw, true, join()
			}
			return scopeScalar, true, join()
		}
	case scopeRaw:
		return scopeRaw, false, path + "." + shownName(name)
	}
	sep := " "
	if path == "" {
		sep = ""
	}
	return scopeRaw, false, path + sep + "extra member " + quotedName(name)
}

// blockMember reports whether the contract defines member name for blocks
// of type t.
func blockMember(t, name string) bool {
	var names []string
	switch t {
	case "text":
		names = []string{"text"}
	case "thinking":
		names = []string{"thinking"}
	case "toolCall":
		names = []string{"id", "name", "arguments"}
	case "toolResult":
		names = []string{"toolCallId", "toolName", "content", "isError"}
	case "image":
		names = []string{"mimeType", "data"}
	case "fileReference":
		names = []string{"path"}
	case "artifactReference":
		names = []string{"artifactId"}
	case "summaryReference":
		names = []string{"summaryId"}
	case "opaqueProvider":
		names = []string{"originalType", "value"}
	}
	return slices.Contains(names, name)
}

// identifierLike reports whether a member name the contract does not define
// may be shown: at most 32 bytes of ASCII letters, digits, '_', '$' and '-',
// not starting with '-'.
func identifierLike(name string) bool {
	if name == "" || len(name) > 32 || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '$' || c == '-') {
			return false
		}
	}
	return true
}

// quotedName shows an unknown member's name quoted, or its size.
func quotedName(name string) string {
	if identifierLike(name) {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("(a name of %d bytes)", len(name))
}

// shownName shows a member name inside a raw JSON value, or its size.
func shownName(name string) string {
	if identifierLike(name) {
		return name
	}
	return fmt.Sprintf("(a name of %d bytes)", len(name))
}

// diffValue compares two JSON values in scope s at path and adds every
// difference to d: where it is and what differs there.
func diffValue(d *memberDiffs, s scope, path string, w, g *jsonw.Value) {
	if w.Kind != g.Kind {
		d.add(path, w.Kind.String()+" expected, "+g.Kind.String()+" got")
		return
	}
	switch w.Kind {
	case jsonw.Object:
		diffObject(d, s, path, w, g)
	case jsonw.Array:
		if len(w.Items) != len(g.Items) {
			what := fmt.Sprintf("%d items expected, %d got", len(w.Items), len(g.Items))
			if s == scopeBlocks {
				what += " (types " + blockTypes(w) + " expected, " + blockTypes(g) + " got)"
			}
			d.add(path, what)
			return
		}
		item := scopeRaw
		if s == scopeBlocks {
			item = scopeBlock
		}
		for k := range w.Items {
			diffValue(d, item, path+"["+strconv.Itoa(k)+"]", &w.Items[k], &g.Items[k])
		}
	case jsonw.String:
		if w.Str != g.Str {
			d.add(path, diffString(s, w.Str, g.Str))
		}
	case jsonw.Number:
		if w.Num != g.Num {
			if s == scopeRaw {
				d.add(path, "a different number")
				return
			}
			d.add(path, formatNumber(w.Num)+" expected, "+formatNumber(g.Num)+" got")
		}
	case jsonw.Bool:
		if w.Bool != g.Bool {
			d.add(path, strconv.FormatBool(w.Bool)+" expected, "+strconv.FormatBool(g.Bool)+" got")
		}
	}
}

// blockTypes lists the types of a blocks array, when they are the
// contract's and there are at most eight.
func blockTypes(blocks *jsonw.Value) string {
	if len(blocks.Items) > 8 {
		return "of " + strconv.Itoa(len(blocks.Items)) + " blocks"
	}
	parts := make([]string, 0, len(blocks.Items))
	for k := range blocks.Items {
		parts = append(parts, enumValue(blockTypeNames, blockTypeOf(&blocks.Items[k])))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func blockTypeOf(b *jsonw.Value) string {
	for _, m := range b.Members {
		if m.Name == "type" && m.Value.Kind == jsonw.String {
			return m.Value.Str
		}
	}
	return ""
}

// diffObject compares two objects member by member: the members of w in
// order, then members only g holds, then — when no member differs — the
// order of the members.
func diffObject(d *memberDiffs, s scope, path string, w, g *jsonw.Value) {
	blockType := ""
	if s == scopeBlock {
		blockType = blockTypeOf(w)
		if gt := blockTypeOf(g); gt != blockType {
			// Blocks of different types share no members to compare.
			_, _, p := member(s, blockType, path, "type")
			d.add(p, diffString(scopeBlockType, blockType, gt))
			return
		}
	}
	find := func(v *jsonw.Value, name string) *jsonw.Value {
		for k := range v.Members {
			if v.Members[k].Name == name {
				return &v.Members[k].Value
			}
		}
		return nil
	}
	before := len(d.list) + d.more
	for k := range w.Members {
		m := &w.Members[k]
		child, _, p := member(s, blockType, path, m.Name)
		if gv := find(g, m.Name); gv == nil {
			d.add(p, "present expected, absent got")
		} else {
			diffValue(d, child, p, &m.Value, gv)
		}
	}
	for k := range g.Members {
		if find(w, g.Members[k].Name) == nil {
			_, _, p := member(s, blockType, path, g.Members[k].Name)
			d.add(p, "absent expected, present got")
		}
	}
	if len(d.list)+d.more > before {
		return
	}
	for k := range w.Members {
		if w.Members[k].Name != g.Members[k].Name {
			if s == scopeRaw {
				d.add(path, "the same members in a different order")
			} else {
				d.add(path, "the same unknown members in a different order")
			}
			return
		}
	}
}

// diffString describes two different strings: quoted when both are values
// of the contract's enumeration for the scope, otherwise by size.
func diffString(s scope, w, g string) string {
	var names []string
	switch s {
	case scopeRole:
		names = roleNames
	case scopeSource:
		names = sourceNames
	case scopeBlockType:
		names = blockTypeNames
	}
	if names != nil {
		return enumValue(names, w) + " expected, " + enumValue(names, g) + " got"
	}
	if len(w) != len(g) {
		return fmt.Sprintf("%d bytes expected, %d got", len(w), len(g))
	}
	at := 0
	for at < len(w) && w[at] == g[at] {
		at++
	}
	return fmt.Sprintf("%d bytes expected, %d got, first different at byte %d", len(w), len(g), at)
}

// enumValue shows v quoted when it is one of names, otherwise by size.
func enumValue(names []string, v string) string {
	if slices.Contains(names, v) {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("a string of %d bytes", len(v))
}

func formatNumber(f float64) string {
	b, err := jsonw.AppendNumber(nil, f)
	if err != nil {
		return "a non-finite number"
	}
	return string(b)
}

// groupID shows a group id when it has the form BuildToolAtomicGroups
// gives ids, otherwise its size.
func groupID(id string) string {
	hex := strings.TrimPrefix(id, contract.ToolGroupIDPrefix)
	ok := len(hex) == 16 && len(hex) < len(id)
	for i := 0; ok && i < len(hex); i++ {
		ok = '0' <= hex[i] && hex[i] <= '9' || 'a' <= hex[i] && hex[i] <= 'f'
	}
	if ok {
		return strconv.Quote(id)
	}
	return fmt.Sprintf("with an id of %d bytes", len(id))
}

// diffGroups returns "" when got holds the groups of want, compared as a
// set keyed by group id (SPEC §6: the order of groups is not fixed across
// implementations; the order of message ids and tool call ids inside a
// group is, and is compared), and otherwise describes the first
// difference: a group missing, repeated or not expected, or the first
// differing member of a group, by id, position and size.
func diffGroups(want, got []contract.ToolAtomicGroup) string {
	gotAt := make(map[string]int, len(got))
	for k := range got {
		if j, dup := gotAt[got[k].ID]; dup {
			return fmt.Sprintf("group %s: listed twice in the snapshot (groups #%d and #%d)", groupID(got[k].ID), j, k)
		}
		gotAt[got[k].ID] = k
	}
	wantIDs := make(map[string]bool, len(want))
	for k := range want {
		w := &want[k]
		wantIDs[w.ID] = true
		j, ok := gotAt[w.ID]
		if !ok {
			return fmt.Sprintf("group %s: missing from the snapshot (%d groups expected, %d got)", groupID(w.ID), len(want), len(got))
		}
		g := &got[j]
		if what := diffIDs(w.MessageIDs, g.MessageIDs); what != "" {
			return fmt.Sprintf("group %s messageIds%s", groupID(w.ID), what)
		}
		if what := diffIDs(w.ToolCallIDs, g.ToolCallIDs); what != "" {
			return fmt.Sprintf("group %s toolCallIds%s", groupID(w.ID), what)
		}
		if w.Complete != g.Complete {
			return fmt.Sprintf("group %s complete: %t expected, %t got", groupID(w.ID), w.Complete, g.Complete)
		}
	}
	for k := range got {
		if !wantIDs[got[k].ID] {
			return fmt.Sprintf("group %s: not expected (%d groups expected, %d got)", groupID(got[k].ID), len(want), len(got))
		}
	}
	return ""
}

// diffIDs describes how an id list differs from the expected one: its
// length, the same ids in another order, or the first differing id by
// position and size.
func diffIDs(want, got []string) string {
	if len(want) != len(got) {
		return fmt.Sprintf(": %d items expected, %d got", len(want), len(got))
	}
	for k := range want {
		if want[k] == got[k] {
			continue
		}
		if slices.Equal(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))) {
			return ": the same ids in a different order"
		}
		return fmt.Sprintf("[%d]: %s", k, diffString(scopeScalar, want[k], got[k]))
	}
	return ""
}
