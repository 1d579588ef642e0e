package conformance_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/mutants"
)

// refuser wraps correct() with a runtime refusing every generated history
// refuse returns an error for.
func refuser(refuse func(fx conformance.Fixture, fams []gen.Family) error) conformance.Factory {
	return conformance.NewFactory("refuser", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if generated(setup.Fixture) {
			if err := refuse(setup.Fixture, gen.FamiliesOf(setup.Fixture.Messages)); err != nil {
				return conformance.Instance{}, err
			}
		}
		return correct().Create(ctx, setup)
	})
}

// projection runs the projection check with a fixed seed.
func projection(f conformance.Factory, opts ...conformance.Option) conformance.Result {
	c, _ := conformance.CheckByID(conformance.CheckProjection)
	return c.Run(ctx, f, append([]conformance.Option{conformance.WithHistories(40), conformance.WithSeed(11)}, opts...)...)
}

func wantFailure(t *testing.T, r conformance.Result, rule, actual string) {
	t.Helper()
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, rule) || !strings.Contains(r.Failure.Actual, actual) {
		t.Fatalf("projection %s %+v; want a failure of rule %q observing %q", r.Status, r.Failure, rule, actual)
	}
}

func TestRefusalsNameAFamilyTheHistoryHolds(t *testing.T) {
	freeText := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		if slices.Contains(fams, gen.FamilyImage) {
			return fmt.Errorf("%w: image blocks", conformance.ErrUnrepresentable)
		}
		return nil
	})
	wantFailure(t, projection(freeText), "names the family of gen.Families", "a refusal naming no family")
	unknown := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		if slices.Contains(fams, gen.FamilyImage) {
			return conformance.Unrepresentable("pictures")
		}
		return nil
	})
	wantFailure(t, projection(unknown), "names the family of gen.Families", `no family of gen.Families ("pictures")`)
	// Refusing histories with images for multi-result, which most of them
	// do not hold.
	wrong := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		if slices.Contains(fams, gen.FamilyImage) && !slices.Contains(fams, gen.FamilyMultiResult) {
			return conformance.Unrepresentable(gen.FamilyMultiResult)
		}
		return nil
	})
	wantFailure(t, projection(wrong), "names the family of gen.Families", "refused for multi-result; the history holds none")
	var f *conformance.Failure
	if err := conformance.CheckHistory(ctx, refusing(func(conformance.Fixture) bool { return true }), conformance.NewFixture().Messages[:1]); !errorsAs(err, &f) ||
		!strings.Contains(f.Actual, "refused for image; the history holds none") {
		t.Fatalf("CheckHistory of a refused plain history = %v", err)
	}
}

func errorsAs(err error, f **conformance.Failure) bool {
	ff, ok := err.(*conformance.Failure)
	*f = ff
	return ok
}

func TestARefusedFamilyIsRefusedEverywhere(t *testing.T) {
	// Refuses every other history with a parallel batch.
	n := 0
	alternate := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		if !slices.Contains(fams, gen.FamilyParallelBatch) {
			return nil
		}
		n++
		if n%2 == 0 {
			return conformance.Unrepresentable(gen.FamilyParallelBatch)
		}
		return nil
	})
	wantFailure(t, projection(alternate), "a refused family is a limit of the run: every generated history holding it is refused",
		"refused parallel-batch for one history after projecting 1 others faithfully")
	// Refuses only the first history with a parallel batch.
	first := true
	once := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		if slices.Contains(fams, gen.FamilyParallelBatch) && first {
			first = false
			return conformance.Unrepresentable(gen.FamilyParallelBatch)
		}
		return nil
	})
	wantFailure(t, projection(once), "every generated history holding it is refused", "projected a history holding parallel-batch faithfully after refusing parallel-batch")
	// Refusing for another family the history holds keeps the rule.
	either := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		switch {
		case slices.Contains(fams, gen.FamilyMultiResult):
			return conformance.Unrepresentable(gen.FamilyMultiResult)
		case slices.Contains(fams, gen.FamilyImage):
			return conformance.Unrepresentable(gen.FamilyImage, "image blocks")
		}
		return nil
	})
	r := projection(either)
	if r.Status != conformance.StatusPass || len(r.Limits) != 2 || r.Limits[0].Family != gen.FamilyMultiResult || r.Limits[1].Family != gen.FamilyImage {
		t.Fatalf("projection %s %+v, limits %+v: want a pass with limits multi-result, image", r.Status, r.Failure, r.Limits)
	}
	if !strings.Contains(r.Note, "; 6 isolation histories refused") {
		t.Fatalf("note %q: want the isolation histories counted", r.Note)
	}
}

func TestIsolationHistoriesAreRefusedForTheirFamily(t *testing.T) {
	// Refuses multi-result only beside another family: the drawn histories
	// all hold more, the isolation histories hold multi-result alone.
	sometimes := refuser(func(_ conformance.Fixture, fams []gen.Family) error {
		if slices.Contains(fams, gen.FamilyMultiResult) && len(fams) > 1 {
			return conformance.Unrepresentable(gen.FamilyMultiResult)
		}
		return nil
	})
	r := projection(sometimes)
	wantFailure(t, r, "histories made of the shapes every runtime holds plus that family alone are refused for it", "isolation history of multi-result (run seed 11")
	if !strings.Contains(r.Failure.Actual, "projected faithfully") {
		t.Fatalf("actual %q", r.Failure.Actual)
	}
}

func TestLongHistoriesAreNoLimit(t *testing.T) {
	at64 := refuser(func(fx conformance.Fixture, _ []gen.Family) error {
		if len(fx.Messages) >= 64 {
			return conformance.Unrepresentable(gen.FamilyLongHistory, "more than 64 messages")
		}
		return nil
	})
	r := projection(at64, conformance.WithHistories(64))
	// The failure names the rule the refusal broke: the detail, which
	// shows the history's shape first, may be clipped before the refusal.
	if r.Status != conformance.StatusFail || !(strings.HasPrefix(r.Failure.Rule, "long-history is no limit below") || strings.HasPrefix(r.Failure.Rule, "a refusal names the family")) {
		t.Fatalf("projection %s %+v: want the long-history refusal to fail", r.Status, r.Failure)
	}
	var long []contract.Message
	for seed := 0; long == nil; seed++ {
		if ms := gen.History(conformance.FixtureRuntimeID, conformance.FixtureSessionID).Example(seed); len(ms) >= 100 {
			long = ms
		}
	}
	var f *conformance.Failure
	if err := conformance.CheckHistory(ctx, at64, long); !errorsAs(err, &f) || !strings.Contains(f.Rule, "long-history is no limit below MinLongHistoryRefusal") ||
		!strings.Contains(f.Actual, fmt.Sprintf("refused for long-history at %d messages, below 10000", len(long))) {
		t.Fatalf("CheckHistory of a refused long history = %v", err)
	}
}

// declaring wraps correct() with instances declaring limits and holding
// no history of them.
func declaring(limits ...gen.Family) conformance.Factory {
	return conformance.NewFactory("declaring", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		for _, f := range limits {
			if holds(setup.Fixture, f) {
				return conformance.Instance{}, fmt.Errorf("a history of the declared family %s was drawn", f)
			}
		}
		inst, err := correct().Create(ctx, setup)
		inst.Limits = limits
		return inst, err
	})
}

func TestDeclaredLimitsAreNotDrawn(t *testing.T) {
	r := projection(declaring(gen.FamilyImage, gen.FamilyThinking))
	want := []conformance.Limit{{Family: gen.FamilyThinking, Reason: "declared by the instance"}, {Family: gen.FamilyImage, Reason: "declared by the instance"}}
	if r.Status != conformance.StatusPass || !slices.Equal(r.Limits, want) || !strings.HasSuffix(r.Note, "; declared limits: image, thinking") {
		t.Fatalf("projection %s %+v, limits %+v, note %q", r.Status, r.Failure, r.Limits, r.Note)
	}
	wantFailure(t, projection(declaring(gen.FamilyLongHistory)), "an instance declares as limits families of gen.Families other than long-history", `declared limit "long-history"`)
	wantFailure(t, projection(declaring(gen.FamilyImage), conformance.WithRequiredFamilies(gen.FamilyImage)), "a required family is no limit", "image is a limit: declared by the instance")
}

func TestRequiredFamiliesAreNoLimits(t *testing.T) {
	images := refusing(func(fx conformance.Fixture) bool { return generated(fx) && holds(fx, gen.FamilyImage) })
	wantFailure(t, projection(images, conformance.WithRequiredFamilies(gen.FamilyImage)), "a required family is no limit", "image is a limit: refused: image blocks")
	wantFailure(t, projection(correct(), conformance.WithRequiredFamilies(gen.FamilyImage), conformance.WithoutFamilies(gen.FamilyImage)),
		"a required family is no limit", "image is left out")
	if r := projection(images, conformance.WithRequiredFamilies(gen.FamilyThinking)); r.Status != conformance.StatusPass {
		t.Fatalf("another family required: %s %+v", r.Status, r.Failure)
	}
	rep := conformance.RunChecks(ctx, images, conformance.WithChecks(conformance.CheckProjection, conformance.CaseCanonicalHistory), conformance.WithSeed(11))
	if !rep.Passed || len(rep.Limits) != 1 || rep.Limits[0].Family != gen.FamilyImage || rep.Limits[0].Count == 0 {
		t.Fatalf("run report: passed %t, limits %+v", rep.Passed, rep.Limits)
	}
	b, _ := json.Marshal(rep.Limits)
	if !strings.Contains(string(b), `"family":"image","count":`) || !strings.Contains(string(b), `"reason":"refused: image blocks"`) {
		t.Fatalf("limits in JSON: %s", b)
	}
}

// holding wraps correct() with a runtime holding every history as hold
// makes it, and reporting what it holds.
func holding(hold func(ms []contract.Message)) conformance.Factory {
	return conformance.NewFactory("holding", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		hold(setup.Fixture.Messages)
		inst, err := correct().Create(ctx, setup)
		inst.Held = contract.CloneMessages(setup.Fixture.Messages)
		return inst, err
	})
}

func eachMessage(f func(m *contract.Message)) func(ms []contract.Message) {
	return func(ms []contract.Message) {
		for i := range ms {
			f(&ms[i])
		}
	}
}

func referenceAsOpaque(m *contract.Message) {
	for i, b := range m.Blocks {
		switch b.Type() {
		case contract.BlockFileReference, contract.BlockArtifactReference, contract.BlockSummaryReference:
			enc, _ := contract.AppendMessageJSON(nil, &contract.Message{Blocks: []contract.Block{b}})
			var v struct{ Blocks []json.RawMessage }
			_ = json.Unmarshal(enc, &v)
			m.Blocks[i] = &contract.OpaqueProviderBlock{OriginalType: new(string(b.Type())), Value: v.Blocks[0]}
		}
	}
}

// piHolding is correct() holding every history as DS4's Pi runtime does
// (mutants.HoldLikePi), refusing what Pi cannot hold.
func piHolding(slips bool) conformance.Factory {
	return conformance.NewFactory("pi", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		msgs, err := mutants.HoldLikePi(setup.Fixture.Model, setup.Fixture.Messages, slips)
		if err != nil {
			return conformance.Instance{}, err
		}
		setup.Fixture.Messages = msgs
		inst, err := correct().Create(ctx, setup)
		inst.Held = contract.CloneMessages(msgs)
		return inst, err
	})
}

// A runtime holding histories as Pi does passes the catalogue with every
// holding difference shown as a limit (60 histories of seed 11 hold them
// all; the model runs 60 steps, its default steps in the long form).
func TestHeldHistoriesDifferOnlyInTheVocabulary(t *testing.T) {
	rep := conformance.RunChecks(ctx, piHolding(false), conformance.WithSeed(11), conformance.WithHistories(60), conformance.WithModelSteps(longSteps(60, conformance.DefaultModelSteps)))
	_, failedN, _ := rep.Counts()
	if !rep.Passed {
		for _, c := range rep.Checks {
			if !c.Passed() {
				t.Errorf("%s: %+v", c.ID, c.Failure)
			}
		}
		t.Fatalf("%d checks failed", failedN)
	}
	var names []conformance.HoldingDifference
	var refused []gen.Family
	for _, l := range rep.Limits {
		if l.Holding != "" {
			names = append(names, l.Holding)
		} else {
			refused = append(refused, l.Family)
		}
	}
	if !slices.Equal(names, conformance.HoldingDifferences()) {
		t.Fatalf("limits %+v: want every holding difference", rep.Limits)
	}
	// A history holding several of them is refused for the first.
	if len(refused) < 3 || slices.ContainsFunc(refused, func(f gen.Family) bool { return !slices.Contains(mutants.PiRefuses, f) }) {
		t.Fatalf("refused %v, want families of %v", refused, mutants.PiRefuses)
	}
	for _, c := range rep.Checks {
		if c.ID != conformance.CaseCanonicalHistory {
			continue
		}
		// The fixture: no createdAt, no provider or model anywhere, no
		// unknown member, no reference.
		want := []conformance.HoldingDifference{conformance.HoldingProvenanceSource, conformance.HoldingRuntimeIDDropped,
			conformance.HoldingOriginalRoleRewritten, conformance.HoldingTokenEstimateDerived, conformance.HoldingAtomicDerived,
			conformance.HoldingCreatedAtAssigned, conformance.HoldingAssistantModelFilled}
		var got []conformance.HoldingDifference
		for _, l := range c.Limits {
			if l.Count != 1 {
				t.Errorf("canonical-history limit %+v: one history", l)
			}
			got = append(got, l.Holding)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("canonical-history limits %v, want %v", got, want)
		}
	}
}

// Pi's converter slips are no holding differences: a history with an
// empty provider, an empty image member or the flags pinned, localOnly
// and synthetic fails, naming each slipped member, while the holding
// differences found are still shown.
func TestPiSlipsFail(t *testing.T) {
	r := projection(piHolding(true), conformance.WithHistories(200))
	if r.Status != conformance.StatusFail {
		t.Fatalf("projection %s: the slips pass", r.Status)
	}
	// Every history was checked, and each slip is named with its count.
	for _, want := range []string{"of 201 histories (200 generated, 1 long) failed: ", "held flags.pinned in ", "held flags.localOnly in ",
		"held flags.synthetic in ", "held blocks[].data in ", "held provider in ", "(held differently otherwise: "} {
		if !strings.Contains(r.Failure.Actual, want) {
			t.Errorf("failure %q does not say %q", r.Failure.Actual, want)
		}
	}
	if !strings.Contains(r.Note, "201 histories (200 generated, 1 long): ") || !strings.Contains(r.Note, " failed: ") {
		t.Errorf("note %q does not count the failures", r.Note)
	}
	if len(r.Limits) == 0 {
		t.Errorf("a failing projection shows no limits")
	}
	for _, m := range []func(contract.Message) contract.Message{
		func(m contract.Message) contract.Message { m.Provider = new(""); return m },
		func(m contract.Message) contract.Message {
			m.Blocks = append(m.Blocks, &contract.ImageBlock{MimeType: new(""), Data: new("")})
			return m
		},
	} {
		msgs := conformance.NewFixture().Messages
		msgs[3] = m(msgs[3])
		err := conformance.CheckHistory(ctx, piHolding(true), msgs)
		var f *conformance.Failure
		if !errorsAs(err, &f) || !strings.Contains(f.Rule, "differs from the one it was given only in the holding differences") {
			t.Fatalf("an empty string dropped: CheckHistory = %v", err)
		}
		if err := conformance.CheckHistory(ctx, piHolding(false), msgs); err != nil {
			t.Fatalf("without the slips: %v", err)
		}
	}
}

// A held history differing outside the vocabulary fails canonical-history,
// in-order and projection; the other checks compare with what is held.
func TestHeldHistoriesDifferingOutsideTheVocabularyFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hold   func(ms []contract.Message)
		actual string
	}{
		{"upper text", eachMessage(func(m *contract.Message) {
			for i, b := range m.Blocks {
				if tb, ok := b.(*contract.TextBlock); ok {
					m.Blocks[i] = &contract.TextBlock{Text: strings.ToUpper(tb.Text) + "!", Extra: tb.Extra}
				}
			}
		}), "blocks[0].text: 30 bytes expected, 31 got"},
		{"role", eachMessage(func(m *contract.Message) { m.Role = contract.RoleUser }), "role"},
		{"reordered", func(ms []contract.Message) {
			if len(ms) > 1 {
				ms[0], ms[1] = ms[1], ms[0]
			}
		}, "held as"},
		{"tool result", eachMessage(func(m *contract.Message) {
			for i, b := range m.Blocks {
				if r, ok := b.(*contract.ToolResultBlock); ok {
					m.Blocks[i] = &contract.ToolResultBlock{ToolCallID: r.ToolCallID, ToolName: r.ToolName, Content: r.Content + " ", IsError: r.IsError}
				}
			}
		}), "blocks[0].content: 26 bytes expected, 27 got"},
		{"created", eachMessage(func(m *contract.Message) { m.CreatedAt = new(1.5) }), "createdAt: absent expected, present got"},
		{"dropped", func(ms []contract.Message) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := conformance.NewFactory("holding", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
				tc.hold(setup.Fixture.Messages)
				inst, err := correct().Create(ctx, setup)
				inst.Held = contract.CloneMessages(setup.Fixture.Messages)
				if tc.name == "dropped" && len(inst.Held) > 0 {
					inst.Held = inst.Held[1:]
				}
				return inst, err
			})
			c, _ := conformance.CheckByID(conformance.CaseCanonicalHistory)
			r := c.Run(ctx, f)
			if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "differs from the one it was given only in the holding differences") ||
				!strings.Contains(r.Failure.Actual, tc.actual) {
				t.Fatalf("canonical-history %s %+v; want a failure of the held history", r.Status, r.Failure)
			}
			c, _ = conformance.CheckByID(conformance.CheckInOrder)
			if r := c.Run(ctx, f); r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Actual, "canonical-history") {
				t.Fatalf("in-order %s %+v; want canonical-history failed", r.Status, r.Failure)
			}
			r = projection(f, conformance.WithoutShrinking(), conformance.WithHistories(8))
			if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "differs from the one it was given only in the holding differences") {
				t.Fatalf("projection %s %+v; want a failure of the held history", r.Status, r.Failure)
			}
			// The other checks compare with what the runtime holds.
			c, _ = conformance.CheckByID(conformance.CaseRebuild)
			if r := c.Run(ctx, f); tc.name != "dropped" && r.Status != conformance.StatusPass {
				t.Fatalf("rebuild %s %+v", r.Status, r.Failure)
			}
		})
	}
}

// picks holds the predicates of historyWith, by the pseudo-family it
// names.
var picks = map[gen.Family]func(ms []contract.Message) bool{}

// historyWith names a pseudo-family for historyHolding: the histories
// pick is true of.
func historyWith(pick func(ms []contract.Message) bool) gen.Family {
	f := gen.Family("pick-" + strconv.Itoa(len(picks)))
	picks[f] = pick
	return f
}

// anyWith names a pseudo-family for historyHolding: the histories with a
// message pick is true of.
func anyWith(pick func(m *contract.Message) bool) gen.Family {
	return historyWith(func(ms []contract.Message) bool {
		return slices.ContainsFunc(ms, func(m contract.Message) bool { return pick(&m) })
	})
}

func toolMessage(m *contract.Message) bool {
	return slices.ContainsFunc(m.Blocks, func(b contract.Block) bool {
		return b.Type() == contract.BlockToolCall || b.Type() == contract.BlockToolResult
	})
}

// historyHolding returns a generated history holding family f, or one
// holding a message that f's pick (anyWith) is true of.
func historyHolding(t *testing.T, f gen.Family) []contract.Message {
	t.Helper()
	for seed := range 500 {
		ms := gen.HistoryWithout(conformance.FixtureRuntimeID, conformance.FixtureSessionID, gen.FamilyLongHistory).Example(seed)
		if pick := picks[f]; pick != nil {
			if pick(ms) {
				return ms
			}
			continue
		}
		if !slices.Contains(gen.FamiliesOf(ms), f) {
			continue
		}
		// A history of unknown members holds them in a message and
		// elsewhere too.
		extras := 0
		for i := range ms {
			if len(ms[i].Extra) > 0 {
				extras++
			}
			extras += len(ms[i].Provenance.Extra)
		}
		if f != gen.FamilyUnknownMembers || extras > 1 && slices.ContainsFunc(ms, func(m contract.Message) bool { return len(m.Extra) > 0 }) {
			return ms
		}
	}
	t.Fatalf("no history of %s", f)
	return nil
}

// Each holding difference is recognised alone, and a near miss of one is
// no holding difference.
func TestHoldingDifferencesAreExact(t *testing.T) {
	firstBlock := func(ms []contract.Message, typ contract.BlockType, f func(m *contract.Message, k int)) {
		for i := range ms {
			for k, b := range ms[i].Blocks {
				if b.Type() == typ {
					f(&ms[i], k)
					return
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		family gen.Family // a history holding it, or one anyWith picks
		hold   func(ms []contract.Message)
		want   conformance.HoldingDifference // "" when the held history must fail
	}{
		{"all unknown members dropped", gen.FamilyUnknownMembers, eachMessage(mutants.DropUnknown), conformance.HoldingUnknownMembersDropped},
		{"some unknown members dropped", gen.FamilyUnknownMembers, func(ms []contract.Message) {
			for i := range ms {
				if len(ms[i].Extra) > 0 {
					ms[i].Extra = nil
					return
				}
			}
		}, ""},
		{"reference as opaque", gen.FamilyFileReference, eachMessage(referenceAsOpaque), conformance.HoldingReferenceAsOpaque},
		{"reference as opaque with another value", gen.FamilyFileReference, func(ms []contract.Message) {
			firstBlock(ms, contract.BlockFileReference, func(m *contract.Message, k int) {
				m.Blocks[k] = &contract.OpaqueProviderBlock{OriginalType: new(string(contract.BlockFileReference)), Value: json.RawMessage(`{"type":"fileReference","path":"elsewhere"}`)}
			})
		}, ""},
		{"text as opaque", gen.FamilyThinking, func(ms []contract.Message) {
			firstBlock(ms, contract.BlockThinking, func(m *contract.Message, k int) {
				m.Blocks[k] = &contract.OpaqueProviderBlock{OriginalType: new(string(contract.BlockThinking)), Value: json.RawMessage(`{}`)}
			})
		}, ""},
		{"pi-session source", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Provenance.Source = contract.SourcePiSession }), conformance.HoldingProvenanceSource},
		{"provenance entry", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Provenance.SessionID += "-held" }), ""},
		{"thinking as text", gen.FamilyThinking, func(ms []contract.Message) {
			firstBlock(ms, contract.BlockThinking, func(m *contract.Message, k int) {
				m.Blocks[k] = &contract.TextBlock{Text: m.Blocks[k].(*contract.ThinkingBlock).Thinking}
			})
		}, ""},
		{"tool result as custom", gen.FamilyMultiResult, eachMessage(func(m *contract.Message) {
			if m.Role == contract.RoleTool {
				m.Role = contract.RoleCustom
			}
		}), ""},
		{"arguments", gen.FamilyParallelBatch, func(ms []contract.Message) {
			firstBlock(ms, contract.BlockToolCall, func(m *contract.Message, k int) {
				c := *m.Blocks[k].(*contract.ToolCallBlock)
				c.Arguments = json.RawMessage(`{"held":true}`)
				m.Blocks[k] = &c
			})
		}, ""},
		{"runtime id dropped under pi-session", gen.FamilyThinking, eachMessage(func(m *contract.Message) {
			m.Provenance.Source, m.Provenance.RuntimeID = contract.SourcePiSession, nil
		}), conformance.HoldingRuntimeIDDropped},
		{"runtime id dropped under runtime-session", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Provenance.RuntimeID = nil }), ""},
		{"original role rewritten", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Provenance.OriginalRole = new("pi-" + string(m.Role)) }),
			conformance.HoldingOriginalRoleRewritten},
		{"original role blank", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Provenance.OriginalRole = new(" ") }), ""},
		{"original role dropped", anyWith(func(m *contract.Message) bool { return m.Provenance.OriginalRole != nil }),
			eachMessage(func(m *contract.Message) { m.Provenance.OriginalRole = nil }), ""},
		{"two original role names for one role", gen.FamilyThinking, func(ms []contract.Message) {
			for i := range ms {
				ms[i].Provenance.OriginalRole = new(string(ms[i].Role) + strconv.Itoa(i))
			}
		}, ""},
		{"token estimate derived", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.TokenEstimate = new(float64(len(m.Blocks))) }),
			conformance.HoldingTokenEstimateDerived},
		{"token estimate changed but not added", historyWith(func(ms []contract.Message) bool {
			has := func(m contract.Message) bool { return m.TokenEstimate != nil }
			return slices.ContainsFunc(ms, has) && slices.ContainsFunc(ms, func(m contract.Message) bool { return !has(m) })
		}), eachMessage(func(m *contract.Message) {
			if m.TokenEstimate != nil {
				m.TokenEstimate = new(*m.TokenEstimate + 1)
			}
		}), ""},
		{"token estimate fractional", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.TokenEstimate = new(2.5) }), ""},
		{"token estimate negative", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.TokenEstimate = new(-1.0) }), ""},
		{"atomic derived", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Flags.Atomic = new(toolMessage(m)) }),
			conformance.HoldingAtomicDerived},
		{"atomic everywhere", gen.FamilyThinking, eachMessage(func(m *contract.Message) { m.Flags.Atomic = new(true) }), ""},
		{"created at assigned", anyWith(func(m *contract.Message) bool { return m.CreatedAt == nil }), func(ms []contract.Message) {
			for i := range ms {
				if ms[i].CreatedAt == nil {
					ms[i].CreatedAt = new(float64(1_767_225_600_000 + i))
				}
			}
		}, conformance.HoldingCreatedAtAssigned},
		{"created at assigned a fraction", anyWith(func(m *contract.Message) bool { return m.CreatedAt == nil }), eachMessage(func(m *contract.Message) {
			if m.CreatedAt == nil {
				m.CreatedAt = new(0.5)
			}
		}), ""},
		{"created at assigned beyond the clock", anyWith(func(m *contract.Message) bool { return m.CreatedAt == nil }), eachMessage(func(m *contract.Message) {
			if m.CreatedAt == nil {
				m.CreatedAt = new(gen.MaxDateMillis + 1)
			}
		}), ""},
		{"created at in whole milliseconds", anyWith(func(m *contract.Message) bool { return m.CreatedAt != nil && *m.CreatedAt != math.Trunc(*m.CreatedAt) }),
			eachMessage(func(m *contract.Message) {
				if m.CreatedAt != nil && math.Abs(*m.CreatedAt) <= gen.MaxDateMillis {
					m.CreatedAt = new(math.Trunc(*m.CreatedAt))
				}
			}), conformance.HoldingCreatedAtWholeMillis},
		{"created at a millisecond off", anyWith(func(m *contract.Message) bool { return m.CreatedAt != nil }), eachMessage(func(m *contract.Message) {
			if m.CreatedAt != nil {
				m.CreatedAt = new(math.Trunc(*m.CreatedAt) + 1)
			}
		}), ""},
		{"assistant model filled", anyWith(func(m *contract.Message) bool { return m.Role == contract.RoleAssistant && m.Provider == nil }),
			eachMessage(func(m *contract.Message) {
				if m.Role == contract.RoleAssistant {
					m.Provider = cmp.Or(m.Provider, new(conformance.FixtureProvider))
					m.Model = cmp.Or(m.Model, new(conformance.FixtureModelID))
				}
			}), conformance.HoldingAssistantModelFilled},
		{"assistant model filled with another", anyWith(func(m *contract.Message) bool { return m.Role == contract.RoleAssistant && m.Provider == nil }),
			eachMessage(func(m *contract.Message) {
				if m.Role == contract.RoleAssistant && m.Provider == nil {
					m.Provider = new("another")
				}
			}), ""},
		{"assistant empty provider filled", anyWith(func(m *contract.Message) bool {
			return m.Role == contract.RoleAssistant && m.Provider != nil && *m.Provider == ""
		}),
			eachMessage(func(m *contract.Message) {
				if m.Role == contract.RoleAssistant && m.Provider != nil && *m.Provider == "" {
					m.Provider = new(conformance.FixtureProvider)
				}
			}), ""},
		{"other roles' model dropped", anyWith(func(m *contract.Message) bool {
			return m.Role != contract.RoleAssistant && (m.Provider != nil || m.Model != nil)
		}),
			eachMessage(func(m *contract.Message) {
				if m.Role != contract.RoleAssistant {
					m.Provider, m.Model = nil, nil
				}
			}), conformance.HoldingNonAssistantModelDropped},
		{"assistant model dropped", anyWith(func(m *contract.Message) bool { return m.Role == contract.RoleAssistant && m.Provider != nil }),
			eachMessage(func(m *contract.Message) { m.Provider, m.Model = nil, nil }), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := historyHolding(t, tc.family)
			err := conformance.CheckHistory(ctx, holding(tc.hold), msgs)
			if tc.want == "" {
				var f *conformance.Failure
				if !errorsAs(err, &f) || !strings.Contains(f.Rule, "differs from the one it was given only in the holding differences") {
					t.Fatalf("CheckHistory = %v, want a failure of the held history", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckHistory = %v", err)
			}
			opts := []conformance.Option{conformance.WithHistories(8)}
			if tc.want == conformance.HoldingCreatedAtWholeMillis {
				// A time beyond the clock has no whole millisecond to
				// hold: such a runtime refuses the family, or leaves it out.
				// A time with a fraction is in about one draw in eight:
				// 20 draws hold a few.
				opts = []conformance.Option{conformance.WithHistories(20), conformance.WithoutFamilies(gen.FamilyCreatedAtOutOfRange)}
			}
			r := projection(holding(tc.hold), opts...)
			if r.Status != conformance.StatusPass || !slices.ContainsFunc(r.Limits, func(l conformance.Limit) bool { return l.Holding == tc.want && l.Count > 0 }) {
				t.Fatalf("projection %s %+v, limits %+v; want %s counted", r.Status, r.Failure, r.Limits, tc.want)
			}
		})
	}
}

// A defect confined to long histories is found in every run, whatever the
// family it touches: the run checks a long history holding every family
// its draws held. Three seeds by default, eight in the long form.
func TestDefectsInLongHistoriesAreFoundEveryRun(t *testing.T) {
	for _, f := range []gen.Family{gen.FamilyThinking, gen.FamilyImage, gen.FamilyRawProviderBlock, gen.FamilyMessageFlags} {
		// The runtime drops the blocks or flags of f from histories of
		// 60 messages or more, and holds shorter ones faithfully.
		lossy := conformance.NewFactory("long-lossy", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
			if len(setup.Fixture.Messages) >= 60 {
				for i := range setup.Fixture.Messages {
					m := &setup.Fixture.Messages[i]
					if f == gen.FamilyMessageFlags {
						m.Flags.Pinned, m.Flags.LocalOnly, m.Flags.Synthetic = nil, nil, nil
						continue
					}
					m.Blocks = slices.DeleteFunc(m.Blocks, func(b contract.Block) bool {
						return slices.Contains(gen.FamiliesOf([]contract.Message{{Blocks: []contract.Block{b}}}), f)
					})
				}
			}
			return correct().Create(ctx, setup)
		})
		for seed := range longSeeds(3, 8) {
			c, _ := conformance.CheckByID(conformance.CheckProjection)
			if r := c.Run(ctx, lossy, conformance.WithoutShrinking(), conformance.WithSeed(seed+1), conformance.WithHistories(20+int(seed))); r.Status != conformance.StatusFail {
				t.Errorf("%s lost in long histories, run %d: %s %q", f, seed, r.Status, r.Note)
			}
		}
	}
}

// dropsThinking leaves every thinking block out of its snapshots.
type dropsThinking struct{ contract.Adapter }

func (a dropsThinking) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := a.Adapter.SnapshotHistory(ctx)
	for i := range s.Messages {
		s.Messages[i].Blocks = slices.DeleteFunc(s.Messages[i].Blocks, func(b contract.Block) bool { return b.Type() == contract.BlockThinking })
	}
	return s, err
}

// A generated history that fails is shown shrunk, the same way on every
// run: the smallest history the budget finds that fails the same way,
// here one message or a tool exchange holding a thinking block.
func TestProjectionFailuresAreShrunk(t *testing.T) {
	t.Parallel()
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return dropsThinking{a} }, new(int))
	r := projection(f)
	if r.Status != conformance.StatusFail {
		t.Fatalf("projection %s, want a failure", r.Status)
	}
	var from, to int
	i := strings.Index(r.Failure.Actual, ", shrunk from ")
	if i < 0 {
		t.Fatalf("the failure is not shrunk: %s", r.Failure.Actual)
	}
	if _, err := fmt.Sscanf(r.Failure.Actual[i:], ", shrunk from %d to %d messages", &from, &to); err != nil || to > 2 || to >= from {
		t.Fatalf("shrunk from %d to %d messages (%v): %s", from, to, err, r.Failure.Actual)
	}
	// The budget counts tries, not time: a run on a machine as busy as
	// the one it fails on shrinks to the same history.
	if again := projection(f); again.Failure == nil || again.Failure.Actual != r.Failure.Actual {
		t.Fatalf("a second run shrinks differently:\n%s\n%+v", r.Failure.Actual, again.Failure)
	}
}
