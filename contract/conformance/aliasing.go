package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

// cancelBound is how long a call with a cancelled or expiring context may
// take (the run's call bound when that is shorter).
const cancelBound = 2 * time.Second

// expiringIn is how soon the expiring context of the cancellation check
// expires.
const expiringIn = time.Millisecond

func aliasingChecks() []Check {
	return []Check{
		{ID: CheckSnapshotAliasing, Kind: KindExtended, run: checkSnapshotAliasing,
			Summary: "edits to every part of a returned snapshot (messages, blocks, raw values, optional members, groups) never reach later snapshots or rebuilds",
			Rule:    "a snapshot is a copy the caller owns: editing it never changes what the adapter returns later"},
		{ID: CheckPayloadUnmodified, Kind: KindExtended, run: checkPayloadUnmodified,
			Summary: "EnforcePrivacy and Complete leave the caller's payload as it was: maps, byte buffers, raw JSON and pointers to structs",
			Rule:    "privacy enforcement and completion never modify the caller's payload"},
		{ID: CheckCancellation, Kind: KindExtended, run: checkCancellation,
			Summary: fmt.Sprintf("Complete, SnapshotHistory and EnforcePrivacy with a cancelled or an expiring context return within %s, and the adapter keeps working", cancelBound),
			Rule:    "a call with a cancelled or expiring context returns promptly (an error or a fallback is allowed) and leaves the adapter working"},
	}
}

// editSnapshot changes every part of s in place that a snapshot copied
// shallowly would share with the adapter: message members, block slices,
// the blocks they point to, raw JSON bytes, optional members behind
// pointers, unknown members and group slices.
func editSnapshot(s *contract.HistorySnapshot) {
	edited := func(p *string) {
		if p != nil {
			*p += "-edited"
		}
	}
	raw := func(v json.RawMessage) {
		for i := range v {
			v[i] = ' '
		}
	}
	fields := func(fs []contract.Field) {
		for i := range fs {
			raw(fs[i].Value)
			fs[i].Name += "-edited"
		}
	}
	for i := range s.Messages {
		m := &s.Messages[i]
		for j, b := range m.Blocks {
			switch b := b.(type) {
			case *contract.TextBlock:
				b.Text += "-edited"
				fields(b.Extra)
			case *contract.ThinkingBlock:
				b.Thinking += "-edited"
				fields(b.Extra)
			case *contract.ToolCallBlock:
				b.ID += "-edited"
				raw(b.Arguments)
				fields(b.Extra)
			case *contract.ToolResultBlock:
				b.ToolCallID += "-edited"
				b.Content += "-edited"
				b.IsError = !b.IsError
				fields(b.Extra)
			case *contract.ImageBlock:
				edited(b.Data)
				edited(b.MimeType)
				fields(b.Extra)
			case *contract.FileReferenceBlock:
				b.Path += "-edited"
				fields(b.Extra)
			case *contract.ArtifactReferenceBlock:
				b.ArtifactID += "-edited"
				fields(b.Extra)
			case *contract.SummaryReferenceBlock:
				b.SummaryID += "-edited"
				fields(b.Extra)
			case *contract.OpaqueProviderBlock:
				edited(b.OriginalType)
				raw(b.Value)
				fields(b.Extra)
			}
			m.Blocks[j] = &contract.TextBlock{Text: "replaced"}
		}
		if m.TokenEstimate != nil {
			*m.TokenEstimate++
		}
		if m.CreatedAt != nil {
			*m.CreatedAt++
		}
		edited(m.Provider)
		edited(m.Model)
		edited(m.Provenance.RuntimeID)
		edited(m.Provenance.OriginalRole)
		for _, f := range []*bool{m.Flags.Atomic, m.Flags.Pinned, m.Flags.LocalOnly, m.Flags.Synthetic} {
			if f != nil {
				*f = !*f
			}
		}
		fields(m.Extra)
		fields(m.Provenance.Extra)
		fields(m.Flags.Extra)
		m.ID += "-edited"
		m.Role = contract.RoleCustom
	}
	for i := range s.ToolAtomicGroups {
		g := &s.ToolAtomicGroups[i]
		for j := range g.MessageIDs {
			g.MessageIDs[j] += "-edited"
		}
		for j := range g.ToolCallIDs {
			g.ToolCallIDs[j] += "-edited"
		}
		g.ID += "-edited"
		g.Complete = !g.Complete
	}
	if len(s.Messages) > 0 {
		s.Messages = append(s.Messages[:1], s.Messages[0])
	}
}

// contentDiff locates, as metadata, the first difference between the
// messages and groups of two snapshots, or returns "".
func contentDiff(want, got *contract.HistorySnapshot) string {
	if d := messagesDiff(want.Messages, got.Messages); d != "" {
		return d
	}
	if diffGroups(want.ToolAtomicGroups, got.ToolAtomicGroups) != "" {
		return "groups " + describeGroups(got.ToolAtomicGroups)
	}
	return ""
}

func checkSnapshotAliasing(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a := s.Adapter()
	reads := []struct {
		method string
		read   func(context.Context) (contract.HistorySnapshot, error)
	}{{"SnapshotHistory", a.SnapshotHistory}, {"RebuildDerivedState", a.RebuildDerivedState}}
	// What each method returns before any edit.
	want := make([]contract.HistorySnapshot, len(reads))
	for i, r := range reads {
		got, err := r.read(ctx)
		if err != nil {
			return failed(r.method+" must project a valid canonical history", err)
		}
		want[i] = contract.CloneSnapshot(&got)
	}
	for _, edit := range reads {
		got, err := edit.read(ctx)
		if err != nil {
			return failed(edit.method+" must project a valid canonical history", err)
		}
		editSnapshot(&got)
		for i, next := range reads {
			later, err := next.read(ctx)
			if err != nil {
				return failed(next.method+" must project a valid canonical history", err)
			}
			if d := contentDiff(&want[i], &later); d != "" {
				return broken("a snapshot is a copy the caller owns: editing it never changes what the adapter returns later",
					fmt.Sprintf("%s after the caller edited a snapshot of %s returns what it returned before", next.method, edit.method),
					"a changed history: "+d)
			}
		}
	}
	return nil
}

// payloadForm is one Go shape of a payload the caller may hand the
// adapter; make builds a fresh, equal value on every call.
type payloadForm struct {
	name string
	make func() any
}

// payloadJSON is the privacy probe payload as JSON text.
var payloadJSON = `{"messages":[{"role":"user","content":` + jsonString(privacyProbeText) + `}],"metadata":{"note":` + jsonString(privacyProbeText) + `}}`

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func payloadForms() []payloadForm {
	return []payloadForm{
		{"a map", func() any {
			return map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": privacyProbeText}},
				"metadata": map[string]any{"note": privacyProbeText, "tags": []any{"a", privacyProbeText}},
			}
		}},
		{"a json.RawMessage buffer", func() any { return json.RawMessage(payloadJSON) }},
		{"a []byte buffer", func() any { return []byte(payloadJSON) }},
		{"a pointer to a struct", func() any {
			return &chatPayload{Messages: []chatMessage{{Role: "user", Content: privacyProbeText}, {Role: "assistant", Content: fallbackText}}}
		}},
	}
}

func checkPayloadUnmodified(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	for _, form := range payloadForms() {
		payload := form.make()
		if _, err := a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: payload}); err != nil {
			return failed("EnforcePrivacy must sanitise an inspectable payload ("+form.name+")", err)
		}
		if !reflect.DeepEqual(payload, form.make()) {
			return broken("privacy enforcement never modifies the caller's payload", form.name+" as the caller built it", form.name+" changed by EnforcePrivacy (not shown)")
		}
		payload = form.make()
		c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: payload})
		if c.Status != contract.StatusCompleted {
			return broken("a completion with a sanitisable payload and a working transport completes", "status \"completed\" for "+form.name, describeResult(c))
		}
		if !reflect.DeepEqual(payload, form.make()) {
			return broken("a completion never modifies the caller's payload", form.name+" as the caller built it", form.name+" changed by Complete (not shown)")
		}
	}
	return nil
}

func checkCancellation(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	a, fx, tr := s.Adapter(), s.Fixture(), s.Transport()
	base, err := a.SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history", err)
	}
	bound := cancelBound
	if b := s.adapter.bound; b < bound {
		bound = b // shorter, or no bound at all
	}
	quick := &boundedAdapter{inner: s.adapter.inner, bound: bound}
	req := contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: PlainPayload()}
	for _, kind := range []string{"a cancelled", "an expiring"} {
		var cctx context.Context
		var cancel context.CancelFunc
		if kind == "a cancelled" {
			cctx, cancel = context.WithCancel(ctx)
			cancel()
		} else {
			cctx, cancel = context.WithTimeout(ctx, expiringIn)
		}
		c := quick.Complete(cctx, req)
		if c.Status != contract.StatusCompleted && c.Status != contract.StatusFallback {
			cancel()
			return broken("Complete never fails: with "+kind+" context it completes or falls back", "status \"completed\" or \"fallback\"", describeResult(c))
		}
		snap, err := quick.SnapshotHistory(cctx)
		if err == nil && (contentDiff(&base, &snap) != "" || snap.Revision != base.Revision) {
			cancel()
			return broken("a snapshot with "+kind+" context is an error or the canonical history, never another one",
				"an error or the history of revision "+q(base.Revision), "a changed history: "+contentDiff(&base, &snap)+", revision "+q(snap.Revision))
		}
		_, _ = quick.EnforcePrivacy(cctx, contract.PrivacyRequest{Provider: fx.Model.Provider, Payload: PlainPayload()})
		cancel()
	}
	snap, err := a.SnapshotHistory(ctx)
	if err != nil {
		return broken("after calls with cancelled contexts the adapter keeps working: a snapshot with a live context succeeds", "a snapshot", "error: "+Redact(err.Error()))
	}
	if d := contentDiff(&base, &snap); d != "" || snap.Revision != base.Revision {
		return broken("after calls with cancelled contexts the adapter keeps working: a snapshot is the canonical history", "the history of revision "+q(base.Revision), "a changed history: "+d+", revision "+q(snap.Revision))
	}
	// Only requests carrying the live completion's own token count: a
	// completion given up on may still reach the transport later (an
	// adapter behind a process boundary learns of the cancellation late,
	// if at all).
	live, tok := tokenPayload("live")
	before := tr.Len()
	c := a.Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: live})
	sent := 0
	for _, r := range tr.Requests()[before:] {
		if strings.Contains(string(r.Payload), tok) {
			sent++
		}
	}
	if c.Status != contract.StatusCompleted || sent != 1 {
		return broken("after calls with cancelled contexts the adapter keeps working: a completion with a live context completes through the transport",
			"status \"completed\" and 1 transport request with its payload", fmt.Sprintf("%s, %d transport requests with its payload", describeResult(c), sent))
	}
	return nil
}
