package gen_test

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/race"
)

func validHistory(t *testing.T, h []contract.Message) {
	t.Helper()
	s := contract.HistorySnapshot{
		SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "sess",
		Revision: "1", ProjectRoot: "/p", Messages: h, ToolAtomicGroups: contract.BuildToolAtomicGroups(h),
	}
	if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
		t.Fatalf("generated history is invalid: %+v", issues)
	}
}

func TestFamilyNames(t *testing.T) {
	kebab := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	fs := gen.Families()
	if len(fs) == 0 {
		t.Fatal("no families")
	}
	seen := map[gen.Family]bool{}
	for _, f := range fs {
		if !kebab.MatchString(string(f)) {
			t.Errorf("family %q is not a kebab-case name", f)
		}
		if seen[f] {
			t.Errorf("family %q repeats", f)
		}
		seen[f] = true
		got, err := gen.ParseFamily(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFamily(%q) = %q, %v", f, got, err)
		}
	}
	fs[0] = "changed"
	if gen.Families()[0] == "changed" {
		t.Error("Families returns the package's own slice")
	}
	for _, bad := range []string{"", "Multi-Result", "multi-result ", "multi_result", "text"} {
		if f, err := gen.ParseFamily(bad); err == nil {
			t.Errorf("ParseFamily(%q) = %q, want an error", bad, f)
		} else if !strings.Contains(err.Error(), "multi-result") {
			t.Errorf("ParseFamily(%q): error %q does not name the known families", bad, err)
		}
	}
}

func TestHistoryWithoutRejectsUnknownFamilies(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("HistoryWithout accepted an unknown family")
		}
	}()
	gen.HistoryWithout("rt", "sess", gen.Family("text"))
}

// TestHistoryWithoutNoFamilyIsHistory checks that leaving nothing out
// draws exactly what History draws.
func TestHistoryWithoutNoFamilyIsHistory(t *testing.T) {
	a, b := gen.History("rt", "sess"), gen.HistoryWithout("rt", "sess")
	for seed := range 100 {
		if !reflect.DeepEqual(a.Example(seed), b.Example(seed)) {
			t.Fatalf("seed %d: HistoryWithout() differs from History", seed)
		}
	}
}

// TestHistoryWithoutNeverDrawsLeftOutFamilies draws, for each family, 200
// histories that leave it out: none holds it, all are valid, and they still
// hold the other families.
func TestHistoryWithoutNeverDrawsLeftOutFamilies(t *testing.T) {
	race.SkipSequential(t)
	for _, f := range gen.Families() {
		t.Run(string(f), func(t *testing.T) {
			g := gen.HistoryWithout("rt", "sess", f)
			others := map[gen.Family]bool{}
			for seed := range 200 {
				h := g.Example(seed)
				validHistory(t, h)
				for _, got := range gen.FamiliesOf(h) {
					if got == f {
						t.Fatalf("seed %d: a history without %s holds it", seed, f)
					}
					others[got] = true
				}
			}
			for _, o := range gen.Families() {
				if o != f && !others[o] {
					t.Errorf("200 histories without %s hold no %s", f, o)
				}
			}
		})
	}
}

func TestHistoryWithoutEveryFamily(t *testing.T) {
	g := gen.HistoryWithout("rt", "sess", gen.Families()...)
	calls := 0
	for seed := range 300 {
		h := g.Example(seed)
		validHistory(t, h)
		if fs := gen.FamiliesOf(h); len(fs) != 0 {
			t.Fatalf("seed %d: a history without every family holds %v", seed, fs)
		}
		for _, m := range h {
			for _, b := range m.Blocks {
				if b.Type() == contract.BlockToolCall {
					calls++
				}
			}
		}
	}
	if calls == 0 {
		t.Error("histories without every family hold no tool call")
	}
}

// TestHistoryDrawsEveryFamily checks that the default generator holds each
// family in a fair share of its histories.
func TestHistoryDrawsEveryFamily(t *testing.T) {
	race.SkipSequential(t)
	const n = 1000
	count := map[gen.Family]int{}
	g := gen.History("rt", "sess")
	for seed := range n {
		for _, f := range gen.FamiliesOf(g.Example(seed)) {
			count[f]++
		}
	}
	for _, f := range gen.Families() {
		t.Logf("%-20s %4d of %d", f, count[f], n)
		if count[f] < n/40 {
			t.Errorf("%d of %d histories hold %s, want at least %d", count[f], n, f, n/40)
		}
	}
}

func TestFamiliesOf(t *testing.T) {
	msg := func(entry string, role contract.Role, blocks ...contract.Block) contract.Message {
		return contract.NewRuntimeMessage("rt", "sess", entry, role, blocks...)
	}
	call := func(id string) *contract.ToolCallBlock { return &contract.ToolCallBlock{ID: id, Name: "read"} }
	result := func(id string) *contract.ToolResultBlock {
		return &contract.ToolResultBlock{ToolCallID: id, ToolName: "read"}
	}
	text := &contract.TextBlock{Text: "hello"}
	extra := []contract.Field{{Name: "x", Value: []byte("1")}}
	pi := msg("p", contract.RoleUser)
	pi.Provenance.Source = contract.SourcePiSession

	cases := []struct {
		name string
		msgs []contract.Message
		want []gen.Family
	}{
		{"empty", nil, nil},
		{"plain exchange", []contract.Message{
			msg("1", contract.RoleUser, text), msg("2", contract.RoleAssistant, call("a")), msg("3", contract.RoleTool, result("a")),
		}, nil},
		{"batch answered by one message", []contract.Message{
			msg("1", contract.RoleAssistant, call("a"), call("b")), msg("2", contract.RoleTool, result("a"), result("b")),
		}, []gen.Family{gen.FamilyParallelBatch, gen.FamilyMultiResult}},
		{"repeated result and a live call", []contract.Message{
			msg("1", contract.RoleAssistant, call("a")), msg("2", contract.RoleTool, result("a")),
			msg("3", contract.RoleTool, result("a")), msg("4", contract.RoleAssistant, call("b")),
		}, []gen.Family{gen.FamilyRepeatedResult, gen.FamilyLiveCall}},
		{"result beside text", []contract.Message{
			msg("1", contract.RoleAssistant, text, call("a")), msg("2", contract.RoleTool, result("a"), text),
		}, []gen.Family{gen.FamilyResultWithText}},
		{"pi session", []contract.Message{pi}, []gen.Family{gen.FamilyPiSession}},
		{"block types", []contract.Message{msg("1", contract.RoleUser,
			&contract.OpaqueProviderBlock{OriginalType: new("x"), Value: []byte("null")}, &contract.ThinkingBlock{}, &contract.ImageBlock{},
			&contract.SummaryReferenceBlock{}, &contract.FileReferenceBlock{}, &contract.ArtifactReferenceBlock{},
		)}, []gen.Family{gen.FamilyThinking, gen.FamilyImage, gen.FamilyFileReference, gen.FamilyArtifactReference,
			gen.FamilySummaryReference, gen.FamilyOpaqueProvider}},
		{"raw provider blocks", []contract.Message{msg("1", contract.RoleUser,
			&contract.OpaqueProviderBlock{Value: []byte("null")},
			&contract.OpaqueProviderBlock{OriginalType: new("x"), Value: []byte(`{"a":1,"type":"x"}`)},
		)}, []gen.Family{gen.FamilyRawProviderBlock}},
		{"opaque blocks beside raw ones", []contract.Message{msg("1", contract.RoleUser,
			&contract.OpaqueProviderBlock{Value: []byte(`{"type":"x"}`)},                                    // an object without originalType
			&contract.OpaqueProviderBlock{OriginalType: new("x"), Value: []byte(`{"type":"y"}`)},            // another type
			&contract.OpaqueProviderBlock{OriginalType: new("x"), Value: []byte(`{"Type":"x"}`)},            // names match exactly
			&contract.OpaqueProviderBlock{OriginalType: new("x"), Value: []byte(`{"type":null}`)},           // not a string
			&contract.OpaqueProviderBlock{OriginalType: new(""), Value: []byte(`3`)},                        // a scalar with originalType
			&contract.OpaqueProviderBlock{OriginalType: new("x"), Value: []byte(`{"type":"x","type":"z"}`)}, // the last duplicate wins
		)}, []gen.Family{gen.FamilyOpaqueProvider}},
		{"flags", []contract.Message{func() contract.Message {
			m := msg("1", contract.RoleUser)
			m.Flags.Synthetic = new(false)
			return m
		}()}, []gen.Family{gen.FamilyMessageFlags}},
		{"atomic alone is no flags family", []contract.Message{func() contract.Message {
			m := msg("1", contract.RoleUser)
			m.Flags.Atomic = new(true)
			return m
		}()}, nil},
		{"createdAt at the clock's edges", []contract.Message{func() contract.Message {
			m := msg("1", contract.RoleUser)
			m.CreatedAt = new(-gen.MaxDateMillis)
			return m
		}(), func() contract.Message {
			m := msg("2", contract.RoleUser)
			m.CreatedAt = new(gen.MaxDateMillis)
			return m
		}()}, nil},
		{"createdAt past the clock", []contract.Message{func() contract.Message {
			m := msg("1", contract.RoleUser)
			m.CreatedAt = new(gen.MaxDateMillis + 1)
			return m
		}()}, []gen.Family{gen.FamilyCreatedAtOutOfRange}},
		{"createdAt before the clock", []contract.Message{func() contract.Message {
			m := msg("1", contract.RoleUser)
			m.CreatedAt = new(-1e21)
			return m
		}()}, []gen.Family{gen.FamilyCreatedAtOutOfRange}},
		// Both end in the middle of an exchange.
		{"long", gen.SyntheticHistory{RuntimeID: "rt", SessionID: "sess"}.Messages(100),
			[]gen.Family{gen.FamilyParallelBatch, gen.FamilyLiveCall, gen.FamilyLongHistory}},
		{"not long", gen.SyntheticHistory{RuntimeID: "rt", SessionID: "sess"}.Messages(99),
			[]gen.Family{gen.FamilyParallelBatch, gen.FamilyLiveCall}},
	}
	for _, where := range []string{"message", "provenance", "flags", "block"} {
		m := msg("1", contract.RoleUser, &contract.TextBlock{})
		switch where {
		case "message":
			m.Extra = extra
		case "provenance":
			m.Provenance.Extra = extra
		case "flags":
			m.Flags.Extra = extra
		default:
			m.Blocks[0].(*contract.TextBlock).Extra = extra
		}
		cases = append(cases, struct {
			name string
			msgs []contract.Message
			want []gen.Family
		}{"unknown member in " + where, []contract.Message{m}, []gen.Family{gen.FamilyUnknownMembers}})
	}
	for _, c := range cases {
		if got := gen.FamiliesOf(c.msgs); !slices.Equal(got, c.want) {
			t.Errorf("%s: FamiliesOf = %v, want %v", c.name, got, c.want)
		}
	}
}
