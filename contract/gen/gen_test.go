package gen_test

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/jsstring"
	"github.com/ds4context/adapterkit/internal/race"
	"pgregory.net/rapid"
)

func TestGeneratedSnapshotsAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot().Draw(t, "snapshot")
		if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
			t.Fatalf("generated snapshot is invalid: %+v", issues)
		}
		ids := map[string]bool{}
		for i := range s.Messages {
			m := &s.Messages[i]
			if ids[m.ID] {
				t.Fatalf("message id %q repeats", m.ID)
			}
			ids[m.ID] = true
			if m.Blocks == nil {
				t.Fatalf("message %q has nil blocks", m.ID)
			}
			if err := contract.ValidateMessage(m); err != nil {
				t.Fatal(err)
			}
			if m.ID != s.SessionID+":"+m.SourceEntryID {
				t.Fatalf("message id %q is not <session>:<entry>", m.ID)
			}
		}
	})
}

func TestHistoryOfRespectsBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.IntRange(0, 10).Draw(t, "lo")
		hi := rapid.IntRange(lo, 12).Draw(t, "hi")
		if hi == 0 {
			hi = 1
		}
		h := gen.HistoryOf(gen.HistoryOptions{RuntimeID: "r", SessionID: "s", MinMessages: lo, MaxMessages: hi}).Draw(t, "history")
		if len(h) < lo || len(h) > hi {
			t.Fatalf("history of %d messages outside [%d, %d]", len(h), lo, hi)
		}
	})
}

func TestMessageProvenanceIsConsistent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := gen.Message("rt", "sess").Draw(t, "message")
		s := contract.HistorySnapshot{
			SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "rt", SessionID: "sess",
			Revision: "1", ProjectRoot: "/p", Messages: []contract.Message{m},
		}
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
		for _, is := range contract.ValidateHistorySnapshot(&s) {
			switch is.Code {
			case contract.CodeToolResultOrphaned, contract.CodeToolCallIdentityInvalid:
				// Block draws tool blocks with arbitrary ids.
			default:
				t.Fatalf("unexpected issue %s", is.Code)
			}
		}
	})
}

// shapes records which kinds of history content a set of histories shows.
type shapes map[string]bool

func (sh shapes) observe(h []contract.Message) {
	type loc struct{ msg, n int }
	calls := map[string]loc{}
	results := map[string][]int{}
	callOrder := []string{}
	for i := range h {
		m := &h[i]
		sh["role:"+string(m.Role)] = true
		nCalls, nResults := 0, 0
		for _, b := range m.Blocks {
			sh["block:"+string(b.Type())] = true
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				nCalls++
				calls[b.ID] = loc{i, nCalls}
				callOrder = append(callOrder, b.ID)
			case *contract.ToolResultBlock:
				nResults++
				results[b.ToolCallID] = append(results[b.ToolCallID], i)
			}
		}
		if nCalls > 1 {
			sh["parallel batch"] = true
		}
		if nResults > 1 {
			sh["shared result message"] = true
		}
		if nCalls == 0 && nResults == 0 {
			sh["non-tool message"] = true
		}
	}
	lastAnswer := -1
	for k, id := range callOrder {
		rs := results[id]
		switch {
		case len(rs) == 0 && k == len(callOrder)-1:
			sh["live call at the end"] = true
		case len(rs) == 0:
			sh["live call in the middle"] = true
		case len(rs) > 1:
			sh["repeated result"] = true
		}
		if len(rs) > 0 {
			if rs[0] < lastAnswer {
				sh["results out of order"] = true
			}
			lastAnswer = rs[0]
		}
	}
	for k := 1; k < len(callOrder); k++ {
		prev, cur := callOrder[k-1], callOrder[k]
		if calls[prev].msg != calls[cur].msg && len(results[prev]) > 0 && results[prev][0] > calls[cur].msg {
			sh["interleaved exchanges"] = true
		}
	}
}

func TestHistoriesCoverEveryShape(t *testing.T) {
	g := gen.History("rt", "sess")
	sh := shapes{}
	for seed := range 300 {
		sh.observe(g.Example(seed))
	}
	want := []string{
		"parallel batch", "shared result message", "non-tool message", "live call at the end",
		"live call in the middle", "repeated result", "results out of order", "interleaved exchanges",
	}
	for _, r := range []contract.Role{contract.RoleSystem, contract.RoleUser, contract.RoleAssistant, contract.RoleTool, contract.RoleCustom} {
		want = append(want, "role:"+string(r))
	}
	for _, b := range []contract.BlockType{
		contract.BlockText, contract.BlockThinking, contract.BlockToolCall, contract.BlockToolResult, contract.BlockImage,
		contract.BlockFileReference, contract.BlockArtifactReference, contract.BlockSummaryReference, contract.BlockOpaqueProvider,
	} {
		want = append(want, "block:"+string(b))
	}
	for _, w := range want {
		if !sh[w] {
			t.Errorf("300 generated histories show no %s", w)
		}
	}
}

var allCodes = []string{
	contract.CodeHistorySchemaIncompatible, contract.CodeHistoryIdentityInvalid, contract.CodeTrustedProjectRootMissing,
	contract.CodeHistoryMessageIDDuplicate, contract.CodeHistoryMessageIDMissing, contract.CodeHistoryProvenanceInvalid,
	contract.CodeToolCallIdentityInvalid, contract.CodeToolResultOrphaned, contract.CodeToolAtomicGroupInvalid,
	contract.CodeToolAtomicMessageMissing, contract.CodeToolAtomicMessageOverlap, contract.CodeToolAtomicCallOverlap,
	contract.CodeToolAtomicGroupMissing, contract.CodeToolAtomicGroupMismatch, contract.CodeToolAtomicCallUnknown,
}

func TestMutationsCoverEveryValidationCode(t *testing.T) {
	covered := map[string]bool{}
	names := map[string]bool{}
	for _, m := range gen.Mutations {
		if names[m.Name] {
			t.Errorf("mutation name %q repeats", m.Name)
		}
		names[m.Name] = true
		if len(m.Codes) == 0 {
			t.Errorf("mutation %s expects no code", m.Name)
		}
		for _, c := range m.Codes {
			if contract.IssueMessage(c) == "" {
				t.Errorf("mutation %s expects unknown code %q", m.Name, c)
			}
			covered[c] = true
		}
		if got, ok := gen.MutationByName(m.Name); !ok || got.Name != m.Name {
			t.Errorf("MutationByName(%q) does not find it", m.Name)
		}
	}
	for _, c := range allCodes {
		if !covered[c] {
			t.Errorf("no mutation yields %s", c)
		}
	}
}

// TestEveryMutationAppliesDeterministically applies each mutation to fixed
// example snapshots, as a fixture generator would: each applies to at least
// one of them, yields exactly its codes, and leaves the input untouched when
// given a clone.
func TestEveryMutationAppliesDeterministically(t *testing.T) {
	race.SkipSequential(t)
	g := gen.SnapshotOf(gen.SnapshotOptions{MinMessages: 6, MaxMessages: 16})
	var samples []contract.HistorySnapshot
	for seed := range 40 {
		samples = append(samples, g.Example(seed))
	}
	for _, m := range gen.Mutations {
		applied := 0
		for i := range samples {
			before, _ := samples[i].MarshalJSON()
			s := contract.CloneSnapshot(&samples[i])
			if !m.Apply(&s) {
				after, _ := s.MarshalJSON()
				if string(before) != string(after) {
					t.Errorf("%s: Apply reported false but changed the snapshot", m.Name)
				}
				continue
			}
			applied++
			if got := distinctCodes(contract.ValidateHistorySnapshot(&s)); !slices.Equal(got, m.Codes) {
				t.Errorf("%s on sample %d: codes %v, want %v", m.Name, i, got, m.Codes)
			}
			again, _ := samples[i].MarshalJSON()
			if string(before) != string(again) {
				t.Errorf("%s: mutating a clone changed the original", m.Name)
			}
		}
		if applied == 0 {
			t.Errorf("%s applies to none of %d sample snapshots", m.Name, len(samples))
		}
	}
}

func TestMutationsReportFalseOnEmptySnapshots(t *testing.T) {
	for _, m := range gen.Mutations {
		s := contract.HistorySnapshot{
			SchemaVersion: contract.HistorySchemaVersion, RuntimeID: "r", SessionID: "s", Revision: "1", ProjectRoot: "/p",
			Messages: []contract.Message{}, ToolAtomicGroups: []contract.ToolAtomicGroup{},
		}
		if !m.Apply(&s) {
			if len(s.Messages) != 0 || len(s.ToolAtomicGroups) != 0 {
				t.Errorf("%s: reported false but changed the snapshot", m.Name)
			}
			continue
		}
		if got := distinctCodes(contract.ValidateHistorySnapshot(&s)); !slices.Equal(got, m.Codes) {
			t.Errorf("%s on an empty history: codes %v, want %v", m.Name, got, m.Codes)
		}
	}
}

// distinctCodes returns the distinct codes of issues in validation order.
func distinctCodes(issues []contract.ValidationIssue) []string {
	var out []string
	for _, c := range allCodes {
		for _, is := range issues {
			if is.Code == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func TestCapabilityGeneratorsCoverMalformedCases(t *testing.T) {
	seen := map[string]bool{}
	g := gen.Declarations()
	for seed := range 200 {
		decls := g.Example(seed)
		ids := map[string]int{}
		for _, d := range decls {
			ids[d.ID]++
			switch {
			case !contract.IsRegisteredCapability(d.ID):
				seen["unknown id"] = true
			case d.Supported && contract.IsBlank(d.Version):
				seen["missing version"] = true
			case d.Supported && slices.Contains(gen.InvalidVersions, d.Version):
				seen["invalid version"] = true
			case !d.Supported && contract.IsBlank(d.Reason):
				seen["missing reason"] = true
			case d.Supported:
				seen["valid supported"] = true
			default:
				seen["valid unsupported"] = true
			}
		}
		for id, n := range ids {
			if n > 1 && contract.IsRegisteredCapability(id) {
				seen["duplicate"] = true
			}
		}
	}
	for _, w := range []string{"unknown id", "missing version", "invalid version", "missing reason", "valid supported", "valid unsupported", "duplicate"} {
		if !seen[w] {
			t.Errorf("200 generated declaration lists show no %s", w)
		}
	}
	reqs := map[string]bool{}
	rg := gen.Requests()
	for seed := range 100 {
		for _, r := range rg.Example(seed) {
			reqs[fmt.Sprint(contract.IsRegisteredCapability(r.ID), r.Required)] = true
		}
	}
	if len(reqs) != 4 {
		t.Errorf("generated requests show only %v", reqs)
	}
}

// The capability tables hold strings on which JavaScript's string rules
// and Go's disagree: negotiation written with Go's string functions
// differs from contract.NegotiateCapabilities on some entry of each, so a
// property comparing an adapter's negotiation with the contract's over
// gen.Declarations and gen.Requests catches it.
func TestCapabilityTablesSeparateJavaScriptFromGo(t *testing.T) {
	id := contract.CapabilityCompaction
	status := func(d contract.CapabilityDeclaration) contract.CapabilityStatus {
		d.ID = id
		return contract.NegotiateCapabilities([]contract.CapabilityDeclaration{d}, []contract.CapabilityRequest{{ID: id}}).Statuses[0]
	}
	ascii := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)
	fold := regexp.MustCompile(`(?i)^[a-z0-9][a-z0-9._-]{0,63}$`)
	goVersions := map[string]func(string) bool{
		"trims with strings.TrimSpace":              func(v string) bool { return ascii.MatchString(strings.TrimSpace(v)) },
		"matches case-insensitively with Go's (?i)": func(v string) bool { return fold.MatchString(jsstring.Trim(v)) },
	}
	for name, valid := range goVersions {
		if !slices.ContainsFunc(slices.Concat(gen.ValidVersions, gen.InvalidVersions), func(v string) bool {
			return valid(v) != status(contract.CapabilityDeclaration{Supported: true, Version: v}).Supported
		}) {
			t.Errorf("no version of the tables tells a negotiation that %s from the contract's", name)
		}
	}
	cut := func(r string, n int) string {
		if len([]rune(r)) > n {
			r = string([]rune(r)[:n])
		}
		return r
	}
	goReasons := map[string]func(string) string{
		"collapses whitespace with strings.Fields": func(r string) string { return jsstring.Truncate(strings.Join(strings.Fields(r), " "), 240) },
		"cuts reasons to 240 runes":                func(r string) string { return cut(jsstring.Trim(jsstring.CollapseSpace(r)), 240) },
	}
	for name, normalise := range goReasons {
		if !slices.ContainsFunc(gen.Reasons, func(r string) bool {
			want := normalise(r)
			if want == "" {
				want = contract.ReasonMissingReason
			}
			return status(contract.CapabilityDeclaration{Reason: r}).Reason != want
		}) {
			t.Errorf("no reason of the tables tells a negotiation that %s from the contract's", name)
		}
	}
	goIDs := map[string]func(string) string{
		"trims ids with strings.TrimSpace":     strings.TrimSpace,
		"lower-cases ids with strings.ToLower": strings.ToLower,
		"folds ids with strings.EqualFold": func(s string) string {
			for _, id := range contract.CapabilityIDs() {
				if strings.EqualFold(s, id) {
					return id
				}
			}
			return s
		},
	}
	for name, normalise := range goIDs {
		if !slices.ContainsFunc(gen.UnknownCapabilityIDs, func(s string) bool { return contract.IsRegisteredCapability(normalise(s)) }) {
			t.Errorf("no unknown id of the tables is a registry id to a negotiation that %s", name)
		}
	}
}

// recorder is a rapid.TB that records a failing check instead of failing
// the test, so a test can look at what rapid reports.
type recorder struct {
	testing.TB
	failed bool
	log    strings.Builder
}

func (r *recorder) Helper()                         {}
func (r *recorder) Logf(format string, args ...any) { fmt.Fprintf(&r.log, format+"\n", args...) }
func (r *recorder) Log(args ...any)                 { fmt.Fprintln(&r.log, args...) }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}
func (r *recorder) Error(args ...any) { r.failed = true; r.Log(args...) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
}
func (r *recorder) Fatal(args ...any) { r.Error(args...) }
func (r *recorder) FailNow()          { r.failed = true }
func (r *recorder) Fail()             { r.failed = true }
func (r *recorder) Failed() bool      { return r.failed }

// TestShrinkingFindsSmallHistories checks a deliberately false property —
// "no history holds a parallel batch" — and expects rapid to shrink the
// counterexample to the one message that holds a batch.
func TestShrinkingFindsSmallHistories(t *testing.T) {
	var last []contract.Message
	failed, log := checkFails(t, func(h []contract.Message) string {
		last = h
		for _, m := range h {
			n := 0
			for _, b := range m.Blocks {
				if b.Type() == contract.BlockToolCall {
					n++
				}
			}
			if n > 1 {
				return fmt.Sprintf("message %s holds %d calls", m.ID, n)
			}
		}
		return ""
	})
	if !failed {
		t.Fatal("rapid found no history with a parallel batch")
	}
	if !strings.Contains(log, "rapid.seed") {
		t.Errorf("the failure report names no seed to reproduce it")
	}
	if len(last) != 1 {
		t.Fatalf("minimal counterexample has %d messages, want 1: %s", len(last), describe(last))
	}
	m := last[0]
	if len(m.Blocks) != 2 || m.Blocks[0].Type() != contract.BlockToolCall || m.Blocks[1].Type() != contract.BlockToolCall {
		t.Errorf("minimal counterexample %s is not a bare batch of two calls", describe(last))
	}
}

// checkFails runs a property over default histories that fails when bad
// returns a reason, without failing the test or writing a fail file, and
// returns whether it failed and what rapid reported. Unless -rapid.seed
// names one, it starts from a fixed seed, so the test is deterministic.
func checkFails(t *testing.T, bad func(h []contract.Message) string) (bool, string) {
	t.Helper()
	set := func(name, value string) {
		f := flag.Lookup(name)
		if f == nil {
			return
		}
		old := f.Value.String()
		if name == "rapid.seed" && old != "0" {
			return
		}
		if err := f.Value.Set(value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Value.Set(old) })
	}
	set("rapid.nofailfile", "true")
	set("rapid.seed", "20261201")
	rec := &recorder{TB: t}
	rapid.Check(rec, func(rt *rapid.T) {
		if reason := bad(gen.History("rt", "sess").Draw(rt, "history")); reason != "" {
			rt.Fatal(reason)
		}
	})
	return rec.failed, rec.log.String()
}

func describe(h []contract.Message) string {
	var b strings.Builder
	for _, m := range h {
		fmt.Fprintf(&b, "%s[", m.Role)
		for _, bl := range m.Blocks {
			fmt.Fprintf(&b, " %s", bl.Type())
		}
		b.WriteString(" ] ")
	}
	return b.String()
}

// Apply never writes through what the snapshot shared with another: a
// shallow copy taken before keeps every message and group as they were.
func TestApplyDoesNotWriteThroughSharedValues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot().Draw(t, "snapshot")
		before := contract.CloneSnapshot(&s)
		shallow := s // shares every slice and block with s
		m := gen.Mutations[rapid.IntRange(0, len(gen.Mutations)-1).Draw(t, "mutation")]
		m.ApplyAt(&s, rapid.IntRange(0, 7).Draw(t, "target"))
		got, err := contract.AppendSnapshotJSON(nil, &shallow)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := contract.AppendSnapshotJSON(nil, &before)
		if string(got) != string(want) {
			t.Fatalf("mutation %s wrote through a value the snapshot shared", m.Name)
		}
	})
}
