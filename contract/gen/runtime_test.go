package gen_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/internal/jsstring"
	"github.com/ds4context/adapterkit/internal/race"
	"pgregory.net/rapid"
)

func validSnapshot(rt, session string, msgs []contract.Message) []contract.ValidationIssue {
	s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: rt, SessionID: session,
		Revision: "r", ProjectRoot: "/p", Messages: msgs, ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs)}
	return contract.ValidateHistorySnapshot(&s)
}

// Appends and in-place rewrites keep any valid history valid.
func TestAppendsAndRewritesKeepHistoriesValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const rt, session = "rt", "session"
		h := gen.History(rt, session).Draw(t, "history")
		for n := range rapid.IntRange(1, 6).Draw(t, "appends") {
			h = append(h, gen.AppendedMessages(rt, session, n).Draw(t, "appended")...)
		}
		if issues := validSnapshot(rt, session, h); len(issues) != 0 {
			t.Fatalf("history with appends is invalid: %+v", issues)
		}
		i := rapid.IntRange(0, len(h)-1).Draw(t, "at")
		r := gen.RewrittenMessage(h[i]).Draw(t, "rewritten")
		if r.ID != h[i].ID {
			t.Fatalf("rewrite changed the id")
		}
		h[i] = r
		if issues := validSnapshot(rt, session, h); len(issues) != 0 {
			t.Fatalf("history with a rewrite is invalid: %+v", issues)
		}
	})
}

// Appends and rewrites told to leave families out draw none of them, and
// keep the history valid.
func TestAppendsAndRewritesLeaveFamiliesOut(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const rt, session = "rt", "session"
		leave := rapid.SliceOfDistinct(rapid.SampledFrom(gen.Families()), func(f gen.Family) gen.Family { return f }).Draw(t, "leave")
		h := gen.HistoryWithout(rt, session, leave...).Draw(t, "history")
		for n := range rapid.IntRange(1, 6).Draw(t, "appends") {
			h = append(h, gen.AppendedMessages(rt, session, n, leave...).Draw(t, "appended")...)
		}
		for range rapid.IntRange(0, 4).Draw(t, "rewrites") {
			i := rapid.IntRange(0, len(h)-1).Draw(t, "at")
			h[i] = gen.RewrittenMessage(h[i], leave...).Draw(t, "rewritten")
		}
		if issues := validSnapshot(rt, session, h); len(issues) != 0 {
			t.Fatalf("history is invalid: %+v", issues)
		}
		for _, f := range gen.FamiliesOf(h) {
			// Appends may make a history long.
			if slices.Contains(leave, f) && f != gen.FamilyLongHistory {
				t.Fatalf("the history with appends and rewrites holds %s, left out", f)
			}
		}
	})
}

// The value generators reach their extremes and stay within their rules.
func TestValueGeneratorsReachTheirRanges(t *testing.T) {
	race.SkipSequential(t)
	var bigPayload, nonObject, bigBatch, longText, combining, lookAlike bool
	reached := func() bool { return bigPayload && nonObject && bigBatch && longText && combining && lookAlike }
	// The extremes are rare draws: check rounds of draws until every one
	// was reached, within a bound far above what they need.
	for round := 0; round < 20 && !reached(); round++ {
		checkValueGenerators(t, &bigPayload, &nonObject, &bigBatch, &longText, &combining, &lookAlike)
	}
	if !reached() {
		t.Fatalf("reached: 1 MiB payload %t, non-object %t, 500 texts %t, 8 KiB text %t, combining mark %t, look-alike %t",
			bigPayload, nonObject, bigBatch, longText, combining, lookAlike)
	}
}

// checkValueGenerators is one rapid run of the value generators' rules,
// noting which extremes it reached.
func checkValueGenerators(t *testing.T, bigPayload, nonObject, bigBatch, longText, combining, lookAlike *bool) {
	rapid.Check(t, func(t *rapid.T) {
		n := gen.Size(0, 1000).Draw(t, "size")
		if n < 0 || n > 1000 {
			t.Fatalf("size %d out of [0, 1000]", n)
		}
		p := gen.Payload(1<<20).Draw(t, "payload")
		if !json.Valid(p) {
			t.Fatalf("payload is not JSON")
		}
		*bigPayload = *bigPayload || len(p) >= 1<<20
		*nonObject = *nonObject || p[0] != '{'
		texts := gen.EmbeddingTexts(600).Draw(t, "texts")
		if len(texts) == 0 || len(texts) > 600 {
			t.Fatalf("%d texts", len(texts))
		}
		*bigBatch = *bigBatch || len(texts) >= 500
		for _, s := range texts {
			*longText = *longText || len(s) >= 8<<10
		}
		id := gen.Identifier().Draw(t, "id")
		if contract.IsBlank(id) || strings.ContainsAny(id, "0123456789") {
			t.Fatalf("identifier %q is blank or holds a digit", id)
		}
		for _, r := range id {
			*combining = *combining || unicode.Is(unicode.Mn, r)
		}
		prov := gen.Provider().Draw(t, "provider")
		*lookAlike = *lookAlike || jsstring.Lower(jsstring.Trim(prov)) != prov
		d := gen.ModelDescriptor().Draw(t, "model")
		if d.ContextWindow <= 0 || contract.IsBlank(d.ID) || contract.IsBlank(d.Provider) {
			t.Fatalf("invalid model %+v", d)
		}
	})
}

// Model ids reach SPEC §11's bound of 256 UTF-16 code units in characters
// outside the Basic Multilingual Plane: one at the bound, which local KV
// eligibility takes and which is longer than 256 in bytes, and one a unit
// over it, which eligibility refuses and which is within 256 in runes.
func TestModelIdsReachTheIdentifierBound(t *testing.T) {
	eligible := func(model string) localkv.Eligibility {
		return localkv.DeriveEligibility(localkv.EligibilityInput{
			Enabled: true, CapabilityEnabled: true, CapabilityVersion: contract.LocalKVRuntimePortVersion,
			Destination: string(contract.DestinationLocal), RuntimeID: "rt", RuntimeRevision: "r1",
			ModelRevision: "m1", PrivacyPolicyVersion: "p1", Provider: "ollama", Model: model,
			PromptPrefix: []byte("prefix"), PrefixTokenCount: 1, ContextTokenCount: 2,
		})
	}
	at, over := 0, 0
	for seed := range 200 {
		id := gen.ModelDescriptor().Example(seed).ID
		switch units := jsstring.Len(id); {
		case units == 256 && len(id) > 256:
			at++
			if e := eligible(id); !e.Eligible {
				t.Fatalf("a model id of 256 UTF-16 code units is ineligible: %s", e.Reason)
			}
		case units == 257 && utf8.RuneCountInString(id) <= 256:
			over++
			if e := eligible(id); e.Reason != localkv.ReasonInvalidModel {
				t.Fatalf("a model id of 257 UTF-16 code units is not refused as invalid-model: %+v", e)
			}
		}
	}
	if at == 0 || over == 0 {
		t.Fatalf("200 model descriptors: %d ids at the 256-unit bound, %d one unit over it", at, over)
	}
	t.Logf("200 model descriptors: %d ids at the 256-unit bound, %d one unit over it", at, over)
}
