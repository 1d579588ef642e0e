package conformance

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// probe marks history text; no difference description may contain it.
const probe = "zqxprobe"

func p(s string) string   { return probe + s + probe }
func ps(s string) *string { return new(p(s)) }

// richHistory holds every block type with every member, unknown members in
// a message, its provenance, its flags and a block, and every optional
// message member, with the probe in every text member.
func richHistory() []contract.Message {
	extra := func(v string) []contract.Field {
		return []contract.Field{{Name: "x-custom", Value: json.RawMessage(`"` + p(v) + `"`)}, {Name: "vendor", Value: json.RawMessage(`{"q":[1,true,"` + p("deep") + `"]}`)}}
	}
	rt := p("runtime")
	sess := p("session")
	m0 := contract.NewRuntimeMessage(rt, sess, p("e0"), contract.RoleUser,
		&contract.TextBlock{Text: p("hello"), Extra: extra("t")},
		&contract.ImageBlock{MimeType: ps("image/png"), Data: ps("data")},
		&contract.FileReferenceBlock{Path: p("path")},
		&contract.ArtifactReferenceBlock{ArtifactID: p("artifact")},
		&contract.SummaryReferenceBlock{SummaryID: p("summary")},
	)
	m0.CreatedAt = new(1767225600000.0)
	m0.TokenEstimate = new(12.5)
	m0.Provider = ps("provider")
	m0.Model = ps("model")
	m0.Provenance.OriginalRole = ps("user")
	m0.Provenance.Extra = extra("prov")
	m0.Flags = contract.Flags{Pinned: new(true), LocalOnly: new(false), Synthetic: new(true), Extra: extra("flags")}
	m0.Extra = extra("msg")
	m1 := contract.NewRuntimeMessage(rt, sess, p("e1"), contract.RoleAssistant,
		&contract.ThinkingBlock{Thinking: p("thinking")},
		&contract.ToolCallBlock{ID: p("call-a"), Name: p("read"), Arguments: json.RawMessage(`{"path":"` + p("arg") + `","n":3}`)},
		&contract.ToolCallBlock{ID: p("call-b"), Name: p("bash")},
	)
	m2 := contract.NewRuntimeMessage(rt, sess, p("e2"), contract.RoleTool,
		&contract.ToolResultBlock{ToolCallID: p("call-a"), ToolName: p("read"), Content: p("content"), IsError: true},
		&contract.ToolResultBlock{ToolCallID: p("call-b"), ToolName: p("bash"), Content: p("out")},
	)
	m3 := contract.NewRuntimeMessage(rt, sess, p("e3"), contract.RoleCustom,
		&contract.OpaqueProviderBlock{OriginalType: ps("vendor"), Value: json.RawMessage(`[` + "\"" + p("opaque") + "\"" + `,{"k":null}]`)},
	)
	m3.Provenance.Source = contract.SourcePiSession
	m4 := contract.NewRuntimeMessage(rt, sess, p("e4"), contract.RoleSystem, &contract.TextBlock{Text: p("system")})
	return []contract.Message{m0, m1, m2, m3, m4}
}

func TestDiffMessagesEqualHistories(t *testing.T) {
	h := richHistory()
	if d := diffMessages(h, contract.CloneMessages(h)); d != "" {
		t.Errorf("a clone differs: %s", d)
	}
	// Raw JSON is compared as the wire writes it, not byte for byte.
	spaced := contract.CloneMessages(h)
	block[*contract.ToolCallBlock](spaced, 1, 1).Arguments = json.RawMessage(`{ "path" : "` + p("arg") + `", "n": 3.0 }`)
	spaced[0].Extra[1].Value = json.RawMessage(`{"q": [1e0, true, "` + p("deep") + `"]}`)
	spaced[4].Blocks = nil
	spaced[4].Blocks = append(spaced[4].Blocks, &contract.TextBlock{Text: p("system")})
	if d := diffMessages(h, spaced); d != "" {
		t.Errorf("raw JSON written differently differs: %s", d)
	}
	if d := diffMessages(nil, []contract.Message{}); d != "" {
		t.Errorf("two empty histories differ: %s", d)
	}
	rapid.Check(t, func(rt *rapid.T) {
		h := gen.History("rt", "s").Draw(rt, "history")
		if d := diffMessages(h, contract.CloneMessages(h)); d != "" {
			rt.Fatalf("a clone differs: %s", d)
		}
	})
}

func block[T contract.Block](h []contract.Message, msg, k int) T { return h[msg].Blocks[k].(T) }

// contentEdits change one thing of richHistory each, with the description
// diffMessages must give.
var contentEdits = []struct {
	want string
	edit func(h []contract.Message) []contract.Message
}{
	{`messages: 5 expected, 4 got (message #4 and after are missing)`, func(h []contract.Message) []contract.Message { return h[:4] }},
	{`messages: 5 expected, 6 got (message #5 and after are not in the history)`, func(h []contract.Message) []contract.Message { return append(h, h[0]) }},
	{`message #1: missing from the snapshot, which holds expected message #2 in its place (5 expected, 4 got)`, func(h []contract.Message) []contract.Message { return slices.Delete(h, 1, 2) }},
	{`message #1: the snapshot holds it as message #2 (messages out of order; 5 expected, 5 got)`, func(h []contract.Message) []contract.Message { h[1], h[2] = h[2], h[1]; return h }},
	{`message #0 role: "user" expected, "assistant" got`, func(h []contract.Message) []contract.Message { h[0].Role = contract.RoleAssistant; return h }},
	{`message #4 role: "system" expected, a string of 5 bytes got`, func(h []contract.Message) []contract.Message { h[4].Role = "bogus"; return h }},
	{`message #0 id: 42 bytes expected, 43 got`, func(h []contract.Message) []contract.Message { h[0].ID += "x"; return h }},
	{`message #0 sourceEntryId: 18 bytes expected, 18 got, first different at byte 9`, func(h []contract.Message) []contract.Message {
		h[0].SourceEntryID = p("e9")
		return h
	}},
	{`message #0 blocks: 5 items expected, 4 got (types ["text", "image", "fileReference", "artifactReference", "summaryReference"] expected, ["text", "fileReference", "artifactReference", "summaryReference"] got)`, func(h []contract.Message) []contract.Message {
		h[0].Blocks = slices.Delete(h[0].Blocks, 1, 2)
		return h
	}},
	{`message #0 blocks[0].type: "text" expected, "thinking" got`, func(h []contract.Message) []contract.Message {
		h[0].Blocks[0] = &contract.ThinkingBlock{Thinking: p("hello")}
		return h
	}},
	{`message #0 blocks[0].text: 21 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.TextBlock](h, 0, 0).Text = ""
		return h
	}},
	{`message #0 blocks[0] extra member "x-custom": present expected, absent got`, func(h []contract.Message) []contract.Message {
		b := block[*contract.TextBlock](h, 0, 0)
		b.Extra = b.Extra[1:]
		return h
	}},
	{`message #0 blocks[0] extra member "vendor".q[2]: 20 bytes expected, 19 got`, func(h []contract.Message) []contract.Message {
		block[*contract.TextBlock](h, 0, 0).Extra[1].Value = json.RawMessage(`{"q":[1,true,"` + p("dee") + `"]}`)
		return h
	}},
	{`message #0 blocks[0] extra member "vendor".q[0]: a different number`, func(h []contract.Message) []contract.Message {
		block[*contract.TextBlock](h, 0, 0).Extra[1].Value = json.RawMessage(`{"q":[2,true,"` + p("deep") + `"]}`)
		return h
	}},
	{`message #0 blocks[0] extra member "vendor".q[1]: true expected, false got`, func(h []contract.Message) []contract.Message {
		block[*contract.TextBlock](h, 0, 0).Extra[1].Value = json.RawMessage(`{"q":[1,false,"` + p("deep") + `"]}`)
		return h
	}},
	{`message #0 blocks[0] extra member "vendor".(a name of 9 bytes): absent expected, present got`, func(h []contract.Message) []contract.Message {
		block[*contract.TextBlock](h, 0, 0).Extra[1].Value = json.RawMessage(`{"q":[1,true,"` + p("deep") + `"],"a b probe":1}`)
		return h
	}},
	{`message #0 blocks[0]: the same unknown members in a different order`, func(h []contract.Message) []contract.Message {
		b := block[*contract.TextBlock](h, 0, 0)
		b.Extra[0], b.Extra[1] = b.Extra[1], b.Extra[0]
		return h
	}},
	{`message #0 blocks[1].mimeType: present expected, absent got`, func(h []contract.Message) []contract.Message {
		block[*contract.ImageBlock](h, 0, 1).MimeType = nil
		return h
	}},
	{`message #0 blocks[1].data: 20 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ImageBlock](h, 0, 1).Data = new("")
		return h
	}},
	{`message #0 blocks[2].path: 20 bytes expected, 21 got`, func(h []contract.Message) []contract.Message {
		block[*contract.FileReferenceBlock](h, 0, 2).Path += "/"
		return h
	}},
	{`message #0 blocks[3].artifactId: 24 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ArtifactReferenceBlock](h, 0, 3).ArtifactID = ""
		return h
	}},
	{`message #0 blocks[4].summaryId: 23 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.SummaryReferenceBlock](h, 0, 4).SummaryID = ""
		return h
	}},
	{`message #0 createdAt: 1767225600000 expected, 1767225601000 got`, func(h []contract.Message) []contract.Message {
		h[0].CreatedAt = new(1767225601000.0)
		return h
	}},
	{`message #0 createdAt: present expected, absent got`, func(h []contract.Message) []contract.Message { h[0].CreatedAt = nil; return h }},
	{`message #1 createdAt: absent expected, present got`, func(h []contract.Message) []contract.Message { h[1].CreatedAt = new(1.0); return h }},
	{`message #0 tokenEstimate: 12.5 expected, 13 got`, func(h []contract.Message) []contract.Message { h[0].TokenEstimate = new(13.0); return h }},
	{`message #0 provider: 24 bytes expected, 0 got`, func(h []contract.Message) []contract.Message { h[0].Provider = new(""); return h }},
	{`message #0 model: present expected, absent got`, func(h []contract.Message) []contract.Message { h[0].Model = nil; return h }},
	{`message #3 provenance.source: "pi-session" expected, "runtime-session" got`, func(h []contract.Message) []contract.Message {
		h[3].Provenance.Source = contract.SourceRuntimeSession
		return h
	}},
	{`message #0 provenance.sessionId: 23 bytes expected, 0 got`, func(h []contract.Message) []contract.Message { h[0].Provenance.SessionID = ""; return h }},
	{`message #0 provenance.entryId: 18 bytes expected, 0 got`, func(h []contract.Message) []contract.Message { h[0].Provenance.EntryID = ""; return h }},
	{`message #0 provenance.originalRole: present expected, absent got`, func(h []contract.Message) []contract.Message {
		h[0].Provenance.OriginalRole = nil
		return h
	}},
	{`message #0 provenance.runtimeId: present expected, absent got`, func(h []contract.Message) []contract.Message { h[0].Provenance.RuntimeID = nil; return h }},
	{`message #0 provenance extra member "x-custom": 20 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		h[0].Provenance.Extra[0].Value = json.RawMessage(`""`)
		return h
	}},
	{`message #0 flags.pinned: true expected, false got`, func(h []contract.Message) []contract.Message { h[0].Flags.Pinned = new(false); return h }},
	{`message #0 flags.localOnly: present expected, absent got`, func(h []contract.Message) []contract.Message { h[0].Flags.LocalOnly = nil; return h }},
	{`message #0 flags.atomic: absent expected, present got`, func(h []contract.Message) []contract.Message { h[0].Flags.Atomic = new(false); return h }},
	{`message #0 flags.synthetic: present expected, absent got`, func(h []contract.Message) []contract.Message { h[0].Flags.Synthetic = nil; return h }},
	{`message #0 flags extra member "vendor": present expected, absent got`, func(h []contract.Message) []contract.Message {
		h[0].Flags.Extra = h[0].Flags.Extra[:1]
		return h
	}},
	{`message #0 extra member "x-custom": string expected, null got`, func(h []contract.Message) []contract.Message {
		h[0].Extra[0].Value = json.RawMessage(`null`)
		return h
	}},
	{`message #0 extra member (a name of 14 bytes): absent expected, present got`, func(h []contract.Message) []contract.Message {
		h[0].Extra = append(h[0].Extra, contract.Field{Name: "zqxprobe words", Value: json.RawMessage(`1`)})
		return h
	}},
	{`message #0: the same unknown members in a different order`, func(h []contract.Message) []contract.Message {
		h[0].Extra[0], h[0].Extra[1] = h[0].Extra[1], h[0].Extra[0]
		return h
	}},
	{`message #1 blocks[0].thinking: 24 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ThinkingBlock](h, 1, 0).Thinking = ""
		return h
	}},
	{`message #1 blocks[1].id: 22 bytes expected, 22 got, first different at byte 13`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolCallBlock](h, 1, 1).ID = p("call-c")
		return h
	}},
	{`message #1 blocks[1].name: 20 bytes expected, 20 got, first different at byte 8`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolCallBlock](h, 1, 1).Name = p("bash")
		return h
	}},
	{`message #1 blocks[1].arguments.path: 19 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolCallBlock](h, 1, 1).Arguments = json.RawMessage(`{"path":"","n":3}`)
		return h
	}},
	{`message #1 blocks[1].arguments: the same members in a different order`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolCallBlock](h, 1, 1).Arguments = json.RawMessage(`{"n":3,"path":"` + p("arg") + `"}`)
		return h
	}},
	{`message #1 blocks[2].arguments: absent expected, present got`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolCallBlock](h, 1, 2).Arguments = json.RawMessage(`{}`)
		return h
	}},
	{`message #2 blocks[0].toolCallId: 22 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolResultBlock](h, 2, 0).ToolCallID = ""
		return h
	}},
	{`message #2 blocks[0].toolName: 20 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolResultBlock](h, 2, 0).ToolName = ""
		return h
	}},
	{`message #2 blocks[0].content: 23 bytes expected, 0 got`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolResultBlock](h, 2, 0).Content = ""
		return h
	}},
	{`message #2 blocks[1].isError: false expected, true got`, func(h []contract.Message) []contract.Message {
		block[*contract.ToolResultBlock](h, 2, 1).IsError = true
		return h
	}},
	{`message #3 blocks[0].originalType: present expected, absent got`, func(h []contract.Message) []contract.Message {
		block[*contract.OpaqueProviderBlock](h, 3, 0).OriginalType = nil
		return h
	}},
	{`message #3 blocks[0].value: 2 items expected, 1 got`, func(h []contract.Message) []contract.Message {
		block[*contract.OpaqueProviderBlock](h, 3, 0).Value = json.RawMessage(`[1]`)
		return h
	}},
	{`message #3 blocks[0].value[1].k: null expected, string got`, func(h []contract.Message) []contract.Message {
		block[*contract.OpaqueProviderBlock](h, 3, 0).Value = json.RawMessage(`["` + p("opaque") + `",{"k":"` + p("v") + `"}]`)
		return h
	}},
	{`message #4 blocks[0]: a block expected, nil got`, func(h []contract.Message) []contract.Message { h[4].Blocks[0] = nil; return h }},
	{`message #4: the snapshot's message has no wire form (an unknown member shadows a contract member or holds invalid JSON)`, func(h []contract.Message) []contract.Message {
		h[4].Extra = []contract.Field{{Name: "x", Value: json.RawMessage(`{"` + probe)}}
		return h
	}},
}

func TestDiffMessagesDescribesTheFirstDifference(t *testing.T) {
	for _, c := range contentEdits {
		got := c.edit(contract.CloneMessages(richHistory()))
		d := diffMessages(richHistory(), got)
		if d != c.want {
			t.Errorf("diff\n got %s\nwant %s", d, c.want)
		}
		if strings.Contains(d, probe) {
			t.Errorf("diff shows history text: %s", d)
		}
	}
}

// A message differing in several members is described by all of them at
// once, in member order, up to maxMemberDiffs.
func TestDiffMessagesListsEveryDifferingMember(t *testing.T) {
	got := contract.CloneMessages(richHistory())
	m := &got[0]
	m.Provenance.RuntimeID = nil
	m.Provenance.OriginalRole = new("toolResult")
	m.TokenEstimate = new(13.0)
	m.Flags.Atomic = new(false)
	m.CreatedAt = nil
	want := `message #0 createdAt: present expected, absent got; provenance.originalRole: 20 bytes expected, 10 got; ` +
		`provenance.runtimeId: present expected, absent got; tokenEstimate: 12.5 expected, 13 got; flags.atomic: absent expected, present got`
	if d := diffMessages(richHistory(), got); d != want {
		t.Errorf("diff\n got %s\nwant %s", d, want)
	}
	// Twelve differing members: the first eight, then how many more.
	m.Provider, m.Model, m.Flags.Pinned, m.Flags.Synthetic, m.Flags.LocalOnly, m.Extra, m.Provenance.Extra = nil, nil, nil, nil, nil, nil, nil
	d := diffMessages(richHistory(), got)
	if n := strings.Count(d, ";"); n != maxMemberDiffs || !strings.HasSuffix(d, "; and 6 more members differ") {
		t.Errorf("diff of fourteen members: %s", d)
	}
	if strings.Contains(d, probe) {
		t.Errorf("diff shows history text: %s", d)
	}
}

// probed returns h with the probe around every string member, unknown
// member names and raw JSON aside (those stay as generated).
func probed(h []contract.Message) []contract.Message {
	h = contract.CloneMessages(h)
	pp := func(s *string) {
		if s != nil {
			*s = p(*s)
		}
	}
	for i := range h {
		m := &h[i]
		pp(&m.ID)
		pp(&m.SourceEntryID)
		pp(m.Provider)
		pp(m.Model)
		pp(&m.Provenance.SessionID)
		pp(&m.Provenance.EntryID)
		pp(m.Provenance.OriginalRole)
		pp(m.Provenance.RuntimeID)
		for _, b := range m.Blocks {
			switch b := b.(type) {
			case *contract.TextBlock:
				pp(&b.Text)
			case *contract.ThinkingBlock:
				pp(&b.Thinking)
			case *contract.ToolCallBlock:
				pp(&b.ID)
				pp(&b.Name)
			case *contract.ToolResultBlock:
				pp(&b.ToolCallID)
				pp(&b.ToolName)
				pp(&b.Content)
			case *contract.ImageBlock:
				pp(b.MimeType)
				pp(b.Data)
			case *contract.FileReferenceBlock:
				pp(&b.Path)
			case *contract.ArtifactReferenceBlock:
				pp(&b.ArtifactID)
			case *contract.SummaryReferenceBlock:
				pp(&b.SummaryID)
			case *contract.OpaqueProviderBlock:
				pp(b.OriginalType)
			}
		}
	}
	return h
}

// TestDiffMessagesFindsEveryEdit edits generated histories, with the probe
// in every text member, in one random place and checks the difference is
// found and described without text.
func TestDiffMessagesFindsEveryEdit(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		want := probed(gen.History("rt", "s").Draw(rt, "history"))
		got := contract.CloneMessages(want)
		var any []int
		for i := range got {
			any = append(any, i)
		}
		if len(got) == 0 {
			got = append(got, richHistory()[0])
		} else {
			i := rapid.SampledFrom(any).Draw(rt, "message")
			m := &got[i]
			switch rapid.IntRange(0, 9).Draw(rt, "edit") {
			case 0:
				got = slices.Delete(got, i, i+1)
			case 1:
				m.Role = rapid.SampledFrom(slices.DeleteFunc([]contract.Role{"system", "user", "assistant", "tool", "custom"}, func(r contract.Role) bool { return r == m.Role })).Draw(rt, "role")
			case 2:
				m.Blocks = append(m.Blocks, &contract.TextBlock{Text: p("added")})
			case 3:
				if m.CreatedAt == nil {
					m.CreatedAt = new(0.0)
				} else {
					m.CreatedAt = nil
				}
			case 4:
				m.Extra = append(m.Extra, contract.Field{Name: "x-added", Value: json.RawMessage(`"` + probe + `"`)})
			case 5:
				m.Flags.Synthetic = new(m.Flags.Synthetic == nil || !*m.Flags.Synthetic)
			case 6:
				m.Provenance.Extra = append(m.Provenance.Extra, contract.Field{Name: probe + " name", Value: json.RawMessage(`1`)})
			case 7:
				if len(m.Blocks) == 0 {
					m.Blocks = append(m.Blocks, &contract.ImageBlock{})
				} else {
					m.Blocks = m.Blocks[1:]
				}
			case 8:
				m.TokenEstimate = new(-1.5)
			default:
				m.Model = new(p("other"))
			}
		}
		d := diffMessages(want, got)
		if d == "" {
			rt.Fatal("an edited history compares equal")
		}
		if strings.Contains(d, probe) {
			rt.Fatalf("diff shows history text: %s", d)
		}
	})
}

func TestDiffGroupsComparesASet(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := gen.History("rt", "s").Draw(rt, "history")
		want := contract.BuildToolAtomicGroups(h)
		got := contract.CloneGroups(want)
		perm := rapid.Permutation(got).Draw(rt, "order")
		if d := diffGroups(want, perm); d != "" {
			rt.Fatalf("reordered groups differ: %s", d)
		}
		if len(want) == 0 {
			return
		}
		k := rapid.IntRange(0, len(got)-1).Draw(rt, "group")
		g := &got[k]
		switch rapid.IntRange(0, 5).Draw(rt, "edit") {
		case 0:
			g.ID += "0"
		case 1:
			g.MessageIDs = append(g.MessageIDs, probe)
		case 2:
			g.ToolCallIDs[0] += probe
		case 3:
			g.Complete = !g.Complete
		case 4:
			got = slices.Delete(got, k, k+1)
		default:
			got = append(got, *g)
		}
		d := diffGroups(want, got)
		if d == "" {
			rt.Fatal("edited groups compare equal")
		}
		if strings.Contains(d, probe) {
			rt.Fatalf("diff shows history text: %s", d)
		}
	})
}

func TestDiffGroupsDescribesTheFirstDifference(t *testing.T) {
	h := richHistory()
	h = append(h, contract.NewRuntimeMessage("rt", "s", "e5", contract.RoleAssistant, &contract.ToolCallBlock{ID: "live", Name: "read"}))
	want := contract.BuildToolAtomicGroups(h)
	if len(want) != 2 {
		t.Fatalf("%d groups, want 2", len(want))
	}
	// Group b is the batch of two calls and its results, group l the live call.
	b, l := 0, 1
	if len(want[0].MessageIDs) == 1 {
		b, l = 1, 0
	}
	idB, idL := `"`+want[b].ID+`"`, `"`+want[l].ID+`"`
	cases := []struct {
		want string
		edit func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup
	}{
		{"", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			return []contract.ToolAtomicGroup{g[1], g[0]}
		}},
		{"group " + idB + ": missing from the snapshot (2 groups expected, 1 got)", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup { return slices.Delete(g, b, b+1) }},
		{"group " + idB + ": listed twice in the snapshot (groups #" + strconv.Itoa(b) + " and #2)", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup { return append(g, g[b]) }},
		{"group with an id of 14 bytes: not expected (2 groups expected, 3 got)", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			return append(g, contract.ToolAtomicGroup{ID: probe + "-extra"})
		}},
		{"group " + idB + " messageIds: 2 items expected, 1 got", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			g[b].MessageIDs = g[b].MessageIDs[:1]
			return g
		}},
		{"group " + idB + " messageIds: the same ids in a different order", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			g[b].MessageIDs[0], g[b].MessageIDs[1] = g[b].MessageIDs[1], g[b].MessageIDs[0]
			return g
		}},
		{"group " + idB + " toolCallIds: the same ids in a different order", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			g[b].ToolCallIDs[0], g[b].ToolCallIDs[1] = g[b].ToolCallIDs[1], g[b].ToolCallIDs[0]
			return g
		}},
		{"group " + idB + " toolCallIds[1]: 22 bytes expected, 23 got", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			g[b].ToolCallIDs[1] += "x"
			return g
		}},
		{"group " + idL + " complete: false expected, true got", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			g[l].Complete = true
			return g
		}},
		{"group " + idL + " toolCallIds[0]: 4 bytes expected, 4 got, first different at byte 0", func(g []contract.ToolAtomicGroup) []contract.ToolAtomicGroup {
			g[l].ToolCallIDs[0] = "dead"
			return g
		}},
	}
	for _, c := range cases {
		if d := diffGroups(want, c.edit(contract.CloneGroups(want))); d != c.want {
			t.Errorf("diff\n got %s\nwant %s", d, c.want)
		}
	}
}

// BenchmarkDiffMessages compares a 10,000-message history with an equal
// copy, the case that reads every member.
func BenchmarkDiffMessages(b *testing.B) {
	want := gen.SyntheticHistory{RuntimeID: "rt", SessionID: "s", TextBytes: 200}.Messages(10000)
	got := contract.CloneMessages(want)
	b.ReportAllocs()
	for b.Loop() {
		if d := diffMessages(want, got); d != "" {
			b.Fatal(d)
		}
	}
}

// BenchmarkDiffMessagesWire is the slow path: every tool call's arguments
// are written with other spacing, so those messages are compared by their
// wire JSON.
func BenchmarkDiffMessagesWire(b *testing.B) {
	want := gen.SyntheticHistory{RuntimeID: "rt", SessionID: "s", TextBytes: 200}.Messages(10000)
	got := contract.CloneMessages(want)
	n := 0
	for i := range got {
		for _, bl := range got[i].Blocks {
			if c, ok := bl.(*contract.ToolCallBlock); ok {
				c.Arguments = append(json.RawMessage(" "), c.Arguments...)
				n++
			}
		}
	}
	if n == 0 {
		b.Fatal("no tool call to respace")
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := diffMessages(want, got); d != "" {
			b.Fatal(d)
		}
	}
}
