package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// isolationHistories is how many isolation histories — the shapes every
// runtime holds plus one family alone — the kit draws for each refused
// family; each must be refused for it.
const isolationHistories = 3

// isolationTries bounds the draws searched for isolation histories.
const isolationTries = 4000

// checkProjection hands the factory generated canonical histories (seeds
// 1..n of the run's history generator, without the families left out or
// declared) and checks each snapshot is their faithful projection, and
// that the refusals keep the rules of a limit.
func checkProjection(ctx context.Context, e *env) error {
	n := e.opts.Histories
	if n <= 0 {
		return skip("no generated histories were asked for")
	}
	p := &ProjectionRun{factory: e.factory, opts: e.opts}
	defer func() { e.limits, e.note = p.limits, p.Note(); p.cover(e) }()
	if err := p.start(ctx, e); err != nil {
		return err
	}
	for seed := 1; seed <= n; seed++ {
		if !e.opts.owns(seed - 1) {
			continue // another shard's history
		}
		fx := NewFixture()
		msgs := gen.HistoryWithout(fx.RuntimeID, fx.SessionID, p.leftOut...).Example(seed)
		// A history that fails is counted by the kind of its first
		// difference, and the run goes on: the verdict tells everything
		// the run saw.
		where := fmt.Sprintf("generated history seed %d", seed)
		if _, err := p.check(ctx, e, where, msgs); err != nil {
			if !p.failures.add(err) {
				return err
			}
			if p.failing == nil {
				p.failing, p.failingWhere = msgs, where
			}
		}
	}
	// The first history that failed is shown shrunk, as small as a
	// budget finds that fails the same way.
	if p.failing != nil && !e.opts.NoShrink {
		first := p.failures.kinds[0].first
		if br, msgs := p.shrinkHistory(ctx, e, p.failing, first); br != nil {
			p.failures.replace(first, shrunk(br, p.failingWhere, len(p.failing), msgs))
		}
	}
	return p.verdict(ctx, e)
}

// cover counts what the run covered in e (Result.Covered): the generated
// histories, the long ones the verdict added, the refused ones, the
// isolation histories, and for each family how many generated histories
// holding it were projected faithfully (in a shard only) — so that a merge
// of a campaign's shards can judge across them what one run judges alone.
func (p *ProjectionRun) cover(e *env) {
	e.cover("histories", p.drawn-p.long)
	e.cover("long", p.long)
	e.cover("refused", p.refused)
	e.cover("isolation", p.isolated)
	if !p.opts.sharded() {
		return // only a merge of shards reads these
	}
	for _, ev := range p.events {
		if ev.refused != "" || ev.long {
			continue
		}
		for _, f := range ev.families {
			e.cover(projectedKey+string(f), 1)
		}
	}
}

// projectedKey prefixes the count of faithfully projected histories
// holding a family, in Result.Covered.
const projectedKey = "projected:"

// Bounds of what a projection verdict shows of its failures: how many
// kinds, and how much of each kind's first failure.
const (
	maxFailureKinds  = 6
	maxFailureDetail = 600
)

// projectionFailures counts the histories of a projection run that
// failed, by rule and by kind: a history showing several kinds of
// difference (brokenRule.kind) counts once for each.
type projectionFailures struct {
	kinds []failureKind
	n     int
}

// failureKind is one kind of failure: the first one seen, and how many
// histories showed it.
type failureKind struct {
	rule, kind string
	first      *brokenRule
	count      int
}

// add counts err, the failure of one history, and reports whether it is a
// failure of that history alone (a broken rule): any other error — the
// adapter failing, the factory failing — ends the run.
func (f *projectionFailures) add(err error) bool {
	var br *brokenRule
	if !errors.As(err, &br) {
		return false
	}
	f.n++
next:
	for _, kind := range strings.Split(br.kind, ", ") {
		for i := range f.kinds {
			if f.kinds[i].rule == br.rule && f.kinds[i].kind == kind {
				f.kinds[i].count++
				continue next
			}
		}
		f.kinds = append(f.kinds, failureKind{rule: br.rule, kind: kind, first: br, count: 1})
	}
	return true
}

// replace shows was, the first failure of its kinds, as now.
func (f *projectionFailures) replace(was, now *brokenRule) {
	for i := range f.kinds {
		if f.kinds[i].first == was {
			f.kinds[i].first = now
		}
	}
}

// err is the run's failure, nil when no history failed. Its rule is the
// rule the histories broke (or, when they broke several, that every
// history is projected or refused); it says how many of drawn failed, and
// for every kind (up to maxFailureKinds) how many histories showed it and
// the first of them.
func (f *projectionFailures) err(drawn, long int) error {
	if f.n == 0 {
		return nil
	}
	first := f.kinds[0].first
	rule, expected := first.rule, first.expected
	for _, k := range f.kinds {
		if k.rule != rule {
			rule, expected = "every generated history is projected faithfully, or refused by the rules of a limit", historyCount(drawn, long)+" projected faithfully or refused"
			break
		}
	}
	// Kinds whose first failure is the same history share its detail.
	var parts, group []string
	for i, k := range f.kinds {
		if i == maxFailureKinds {
			parts = append(parts, fmt.Sprintf("and %d more kinds", len(f.kinds)-i))
			break
		}
		shown := cmp.Or(k.kind, "broke: "+k.rule)
		if rule != k.rule && k.kind != "" {
			shown += " (broke: " + k.rule + ")"
		}
		group = append(group, fmt.Sprintf("%s in %d", shown, k.count))
		if i+1 < len(f.kinds) && i+1 < maxFailureKinds && f.kinds[i+1].first == k.first {
			continue
		}
		detail := k.first.actual
		if len(detail) > maxFailureDetail {
			detail = clipRunes(detail, maxFailureDetail) + "…"
		}
		parts = append(parts, strings.Join(group, ", ")+", first "+detail)
		group = nil
	}
	return &brokenRule{rule: rule, expected: expected, kind: first.kind,
		actual: fmt.Sprintf("%d of %s failed: %s", f.n, historyCount(drawn, long), strings.Join(parts, "; "))}
}

// historyCount says how many histories a projection run checked: "20
// generated histories", "21 histories (20 generated, 1 long)".
func historyCount(drawn, long int) string {
	if long == 0 {
		return fmt.Sprintf("%d generated histories", drawn)
	}
	return fmt.Sprintf("%d histories (%d generated, %d long)", drawn, drawn-long, long)
}

// clipRunes cuts s to at most n bytes on a rune boundary.
func clipRunes(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ProjectionRun is one run of the projection check over a series of
// generated histories: it hands each to the factory, checks each snapshot
// is the history's faithful projection (compared with the history the
// instance holds, Instance.Held, whose holding differences it counts), and
// keeps the rules of refusals across the series (see ErrUnrepresentable).
// The projection check and the property spec of package spec are built on
// it. It is not safe for concurrent use.
type ProjectionRun struct {
	factory  Factory
	opts     *options
	leftOut  []gen.Family // the families no history is drawn from
	declared []gen.Family // the families the instance declared
	events   []projected  // every drawn history, in order
	drawn    int          // histories handed to Check
	refused  int          // of which refused
	isolated int          // isolation histories refused
	failures projectionFailures
	limits   limitSet
	// kept are faithfully projected histories the run keeps for its
	// history of every family: the first holding each family, then others
	// up to longOfRun messages.
	kept      [][]contract.Message
	keptLen   int
	keptFams  []gen.Family
	longDrawn bool // the history of every family was checked
	long      int  // of the histories drawn, the long ones the verdict added
	// failing is the first generated history that failed, and where it
	// came from, for the failure to show it shrunk.
	failing      []contract.Message
	failingWhere string
}

// longOfRun is how many messages the history of every family holds at
// least (a long history, gen.FamilyLongHistory), and the most the run
// keeps for it beyond the first history of each family.
const longOfRun = 120

// keep keeps msgs, projected faithfully, for the history of every family
// when it holds a family no kept history holds, or the kept ones are still
// short.
func (p *ProjectionRun) keep(msgs []contract.Message, fams []gen.Family) {
	fams = slices.DeleteFunc(slices.Clone(fams), func(f gen.Family) bool { return f == gen.FamilyLongHistory })
	news := slices.ContainsFunc(fams, func(f gen.Family) bool { return !slices.Contains(p.keptFams, f) })
	if len(msgs) == 0 || len(msgs) >= 1000 || !news && p.keptLen >= longOfRun {
		return
	}
	p.kept = append(p.kept, msgs)
	p.keptLen += len(msgs)
	for _, f := range fams {
		if !slices.Contains(p.keptFams, f) {
			p.keptFams = append(p.keptFams, f)
		}
	}
}

// ofEveryFamily returns the history of every family the run drew: the kept
// histories one after another, each copy's message and tool call ids made
// unique with a suffix, repeated until it is long. A defect confined to
// long histories shows in it for every family the run holds.
func (p *ProjectionRun) ofEveryFamily() []contract.Message {
	var out []contract.Message
	for k := 0; len(out) < longOfRun; k++ {
		for _, h := range p.kept {
			suffix := "~" + strconv.Itoa(len(out))
			for _, m := range contract.CloneMessages(h) {
				m.ID += suffix
				m.SourceEntryID += suffix
				m.Provenance.EntryID += suffix
				for _, b := range m.Blocks {
					switch b := b.(type) {
					case *contract.ToolCallBlock:
						b.ID += suffix
					case *contract.ToolResultBlock:
						b.ToolCallID += suffix
					}
				}
				out = append(out, m)
			}
		}
	}
	return out
}

// projected is the outcome for one drawn history.
type projected struct {
	where    string
	families []gen.Family
	refused  gen.Family // the family it was refused for; "" when projected
	long     bool       // a long history the verdict added, not a generated one
}

// checkLongOne checks a long history the verdict adds, marking its event
// so.
func (p *ProjectionRun) checkLongOne(ctx context.Context, e *env, where string, msgs []contract.Message) error {
	p.long++
	before := len(p.events)
	_, err := p.check(ctx, e, where, msgs)
	if len(p.events) > before {
		p.events[len(p.events)-1].long = true
	}
	return err
}

// NewProjectionRun starts a run of the projection check: it creates one
// instance holding the conformance fixture to read the limits it declares
// (Instance.Limits), which no history of the run may hold (see LeftOut).
// The error is a *Failure (check "projection").
func NewProjectionRun(ctx context.Context, factory Factory, opts ...Option) (*ProjectionRun, error) {
	p := &ProjectionRun{factory: factory, opts: newOptions(opts)}
	return p, p.do(ctx, func(ctx context.Context, e *env) error { return p.start(ctx, e) })
}

// LeftOut returns the families no history of the run may hold: those the
// options leave out (WithoutFamilies) and those the instance declared.
func (p *ProjectionRun) LeftOut() []gen.Family { return slices.Clone(p.leftOut) }

// Check hands the factory one history of the run and checks the snapshot
// is its faithful projection. It returns nil; a *Refusal (matching
// ErrUnrepresentable) when the factory refused the history by the rules
// one history can show; or a *Failure explaining the first difference, or
// the broken rule of the refusal, as metadata only. Whether the refusals
// keep the rules across the run is Verdict's to say.
func (p *ProjectionRun) Check(ctx context.Context, messages []contract.Message) error {
	var refusal *Refusal
	err := p.do(ctx, func(ctx context.Context, e *env) error {
		r, err := p.check(ctx, e, "a drawn history", messages)
		refusal = r
		return err
	})
	if err == nil && refusal != nil {
		return refusal
	}
	return err
}

// Verdict checks the rules of refusals across the run — a refused family
// is refused in every history holding it and in isolation histories
// drawn for it (from the run's seed), and at most half the histories are
// refused — and returns nil or a *Failure. Call it once, after the last
// Check.
func (p *ProjectionRun) Verdict(ctx context.Context) error {
	return p.do(ctx, func(ctx context.Context, e *env) error { return p.verdict(ctx, e) })
}

// Limits returns the limits the run found so far.
func (p *ProjectionRun) Limits() []Limit { return p.limits.list() }

// Note says what the run measured: how many histories were projected and
// refused, for which families, and which families were left out.
func (p *ProjectionRun) Note() string {
	note := historyCount(p.drawn, p.long) + fmt.Sprintf(": %d projected faithfully", p.drawn-p.refused-p.failures.n)
	if p.refused > 0 {
		var parts []string
		for _, l := range p.limits.list() {
			if l.Family != "" && l.Count > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", l.Count, l.Family))
			}
		}
		note += fmt.Sprintf(", %d refused: %s", p.refused, strings.Join(parts, ", "))
	}
	if p.failures.n > 0 {
		var kinds []string
		for _, k := range p.failures.kinds {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.count, cmp.Or(k.kind, "broke: "+k.rule)))
		}
		note += fmt.Sprintf(", %d failed: %s", p.failures.n, strings.Join(kinds, ", "))
	}
	if p.isolated > 0 {
		note += fmt.Sprintf("; %d isolation histories refused", p.isolated)
	}
	var held []string
	for _, l := range p.limits.list() {
		if l.Holding != "" {
			held = append(held, fmt.Sprintf("%d %s", l.Count, l.Holding))
		}
	}
	if len(held) > 0 {
		note += "; held differently: " + strings.Join(held, ", ")
	}
	if len(p.declared) > 0 {
		note += "; declared limits: " + LimitNames(familyLimits(p.declared))
	}
	if len(p.opts.LeftOut) > 0 {
		note += "; families left out: " + LimitNames(familyLimits(p.opts.LeftOut))
	}
	return note
}

func familyLimits(fs []gen.Family) []Limit {
	out := make([]Limit, len(fs))
	for i, f := range fs {
		out[i] = Limit{Family: f}
	}
	return out
}

// do runs f as the projection check runs: guarded, every instance it
// started closed; a failure is returned as a *Failure.
func (p *ProjectionRun) do(ctx context.Context, f func(ctx context.Context, e *env) error) error {
	c, _ := CheckByID(CheckProjection)
	c.run = f
	r := c.runIn(ctx, &env{factory: p.factory, opts: p.opts})
	if r.Failure != nil {
		return r.Failure
	}
	return nil
}

// start reads the limits an instance holding the conformance fixture
// declares, and checks no required family is left out.
func (p *ProjectionRun) start(ctx context.Context, e *env) error {
	p.leftOut = slices.Clone(p.opts.LeftOut)
	for _, f := range p.opts.LeftOut {
		if slices.Contains(p.opts.RequiredFamilies, f) {
			return broken(ruleRefusalRequired, fmt.Sprintf("histories of %s drawn (it is required)", f), fmt.Sprintf("%s is left out (WithoutFamilies)", f))
		}
		// Nothing of a family left out is checked: the verdict says so.
		p.limits.add(Limit{Family: f, Reason: "left out of the run (WithoutFamilies)"})
	}
	declared, err := declaredLimits(ctx, e)
	if err != nil {
		return err
	}
	p.declared = declared
	for _, f := range declared {
		if !slices.Contains(p.leftOut, f) {
			p.limits.add(Limit{Family: f, Reason: "declared by the instance"})
			p.leftOut = append(p.leftOut, f)
		}
	}
	return requiredLimit(p.limits.list(), p.opts.RequiredFamilies)
}

// declaredLimits creates an instance holding the conformance fixture and
// returns the families it declares it cannot hold (Instance.Limits), each
// once, checked to be families of gen.Families other than long-history.
func declaredLimits(ctx context.Context, e *env) ([]gen.Family, error) {
	s, err := e.start(ctx)
	if err != nil {
		return nil, err
	}
	limits := slices.Clone(s.instance.Limits)
	e.forget(s)
	if err := s.Close(ctx); err != nil {
		return nil, failed("the instance must shut down and clean up without error", err)
	}
	var declared []gen.Family
	for _, f := range limits {
		if _, err := gen.ParseFamily(string(f)); err != nil || f == gen.FamilyLongHistory {
			return nil, broken(ruleDeclaredLimits, "declared limits of gen.Families, long-history not among them", "declared limit "+q(string(f)))
		}
		if !slices.Contains(declared, f) {
			declared = append(declared, f)
		}
	}
	return declared, nil
}

// check projects one drawn history, where naming it in failures. It
// returns the refusal when the factory refused the history by the rules
// one history can show.
func (p *ProjectionRun) check(ctx context.Context, e *env, where string, msgs []contract.Message) (*Refusal, error) {
	p.drawn++
	where += ", " + historyShape(msgs)
	fams := gen.FamiliesOf(msgs)
	err := p.projectOne(ctx, e, msgs)
	r, ok := refusalOf(err)
	if !ok {
		if err != nil {
			return nil, withNote(err, where)
		}
		p.events = append(p.events, projected{where: where, families: fams})
		p.keep(msgs, fams)
		return nil, nil
	}
	if err := checkRefusal(r, msgs); err != nil {
		return nil, withNote(err, where)
	}
	p.refused++
	p.events = append(p.events, projected{where: where, families: fams, refused: r.Family})
	reason := "refused"
	if r.Detail != "" {
		reason += ": " + r.Detail
	}
	p.limits.add(Limit{Family: r.Family, Count: 1, Reason: reason})
	return &r, nil
}

// verdict reports the histories that failed, and otherwise checks the
// rules of refusals across the run. A run that drew no long history first
// checks one, drawn from the run's seed: a runtime's limits on length must
// show in every run.
func (p *ProjectionRun) verdict(ctx context.Context, e *env) error {
	seed := e.seed()
	if len(p.kept) > 0 && !p.longDrawn {
		p.longDrawn = true
		msgs := p.ofEveryFamily()
		where := fmt.Sprintf("the history of every family the run drew (%d histories repeated, %d messages)", len(p.kept), len(msgs))
		if err := p.checkLongOne(ctx, e, where, msgs); err != nil && !p.failures.add(err) {
			return err
		}
	}
	if err := p.checkLong(ctx, e, seed); err != nil && !p.failures.add(err) {
		return err
	}
	if err := p.failures.err(p.drawn, p.long); err != nil {
		return err
	}
	var refusedFams []gen.Family
	for _, ev := range p.events {
		if ev.refused != "" && !slices.Contains(refusedFams, ev.refused) {
			refusedFams = append(refusedFams, ev.refused)
		}
	}
	for _, f := range refusedFams {
		if err := p.consistent(f); err != nil {
			return err
		}
	}
	// A shard sees part of a campaign's histories: the bound is the
	// merge's to judge, over every shard's (MergeReports).
	if 2*p.refused > p.drawn && !p.opts.sharded() {
		return broken(ruleRefusalBound, fmt.Sprintf("at most %d of %d generated histories refused", p.drawn/2, p.drawn),
			fmt.Sprintf("%d refused", p.refused))
	}
	for _, f := range refusedFams {
		if err := p.isolation(ctx, e, f, seed); err != nil {
			return err
		}
	}
	return requiredLimit(p.limits.list(), p.opts.RequiredFamilies)
}

// checkLong checks one long history drawn from seed, unless the run drew
// one already or leaves long histories out.
func (p *ProjectionRun) checkLong(ctx context.Context, e *env, seed uint64) error {
	if slices.Contains(p.leftOut, gen.FamilyLongHistory) || slices.ContainsFunc(p.events, func(ev projected) bool {
		return slices.Contains(ev.families, gen.FamilyLongHistory)
	}) {
		return nil
	}
	fx := NewFixture()
	g := gen.HistoryWithout(fx.RuntimeID, fx.SessionID, p.leftOut...)
	for k := 0; k < isolationTries; k++ {
		s := isolationSeed(seed, gen.FamilyLongHistory, k)
		if msgs := g.Example(s); slices.Contains(gen.FamiliesOf(msgs), gen.FamilyLongHistory) {
			return p.checkLongOne(ctx, e, fmt.Sprintf("long history (run seed %d, draw %d)", seed, s), msgs)
		}
	}
	return fmt.Errorf("conformance: no long history in %d draws from seed %d", isolationTries, seed)
}

// consistent returns a broken rule when a history holding the refused
// family f was projected: before the first refusal of f, or after it.
func (p *ProjectionRun) consistent(f gen.Family) error {
	first := slices.IndexFunc(p.events, func(ev projected) bool { return ev.refused == f })
	before, after := 0, -1
	for i, ev := range p.events {
		if ev.refused != "" || !slices.Contains(ev.families, f) {
			continue
		}
		if i < first {
			before++
		} else if after < 0 {
			after = i
		}
	}
	expected := fmt.Sprintf("every generated history holding %s refused", f)
	switch {
	case before > 0:
		return broken(ruleRefusalConsistent, expected, fmt.Sprintf("refused %s for one history after projecting %d others faithfully (%s)", f, before, p.events[first].where))
	case after >= 0:
		return broken(ruleRefusalConsistent, expected, fmt.Sprintf("projected a history holding %s faithfully after refusing %s (%s)", f, f, p.events[after].where))
	}
	return nil
}

// isolation draws the isolation histories of the refused family f from
// seed and checks each is refused for f.
func (p *ProjectionRun) isolation(ctx context.Context, e *env, f gen.Family, seed uint64) error {
	hs, draws, err := isolationDraws(f, seed)
	if err != nil {
		return err
	}
	for i, msgs := range hs {
		where := fmt.Sprintf("isolation history of %s (run seed %d, draw %d), %s", f, seed, draws[i], historyShape(msgs))
		err := p.projectOne(ctx, e, msgs)
		r, ok := refusalOf(err)
		switch {
		case !ok && err != nil:
			return withNote(err, where)
		case !ok:
			return broken(ruleRefusalIsolation, fmt.Sprintf("the history holding %s alone refused for %s", f, f), where+": projected faithfully")
		}
		if err := checkRefusal(r, msgs); err != nil {
			return withNote(err, where)
		}
		p.isolated++
	}
	return nil
}

// isolationDraws returns the isolation histories of f drawn from seed —
// histories holding f and no other family — and the draw of each.
func isolationDraws(f gen.Family, seed uint64) ([][]contract.Message, []int, error) {
	fx := NewFixture()
	others := slices.DeleteFunc(gen.Families(), func(g gen.Family) bool { return g == f })
	g := gen.HistoryWithout(fx.RuntimeID, fx.SessionID, others...)
	var hs [][]contract.Message
	var draws []int
	for k := 0; k < isolationTries && len(hs) < isolationHistories; k++ {
		s := isolationSeed(seed, f, k)
		if msgs := g.Example(s); slices.Equal(gen.FamiliesOf(msgs), []gen.Family{f}) {
			hs, draws = append(hs, msgs), append(draws, s)
		}
	}
	if len(hs) < isolationHistories {
		return nil, nil, fmt.Errorf("conformance: no %d isolation histories of %s in %d draws from seed %d", isolationHistories, f, isolationTries, seed)
	}
	return hs, draws, nil
}

// isolationSeed is the k-th draw's seed for the isolation histories of f:
// a splitmix64 step of the run seed, the family and k, as a non-negative
// int.
func isolationSeed(seed uint64, f gen.Family, k int) int {
	x := seed ^ uint64(slices.Index(gen.Families(), f)+1)<<40 ^ uint64(k)
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return int(x >> 2)
}

// projectOne creates an instance holding msgs and checks its snapshot
// with the history it holds, after judging how it holds it. A refusal of
// the history is returned as it is.
func (p *ProjectionRun) projectOne(ctx context.Context, e *env, msgs []contract.Message) (err error) {
	fx := NewFixture()
	fx.Messages = msgs
	s, err := e.startWith(ctx, fx)
	if err != nil {
		return err
	}
	// Closed whatever the history showed: a run checks every history, and
	// a shrink many more, each on an instance of its own.
	defer func() {
		e.forget(s)
		if cerr := s.Close(ctx); cerr != nil && err == nil {
			err = failed("the instance must shut down and clean up without error", cerr)
		}
	}()
	if s.heldErr != nil {
		p.limits.addHolding(s.holding)
		return s.heldErr
	}
	snap, err := s.Adapter().SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project any valid canonical history", err)
	}
	if err := checkSnapshot(&snap, fx.RuntimeID, fx.SessionID, s.ExpectedProjectRoot(), s.fixture.Messages); err != nil {
		return err
	}
	p.limits.addHolding(s.holding)
	return nil
}

// withNote prefixes what a failure observed with where it was observed.
func withNote(err error, where string) error {
	if err == nil {
		return nil
	}
	var br *brokenRule
	if errors.As(err, &br) {
		return &brokenRule{rule: br.rule, expected: br.expected, actual: where + ": " + br.actual, kind: br.kind}
	}
	var ae *adapterError
	if errors.As(err, &ae) {
		return &adapterError{rule: ae.rule + " (" + where + ")", err: ae.err}
	}
	return err
}

// CheckHistory creates an instance holding the canonical history
// messages (with the conformance fixture's runtime, session and model),
// snapshots it and checks the snapshot is its faithful projection. It
// returns nil; a *Refusal (matching ErrUnrepresentable) when the factory
// refused the history by the rules one history can show; or a *Failure
// (check "projection") explaining the first difference as metadata only.
// It judges one history alone; ProjectionRun also keeps the rules of
// refusals across a series. Fuzz in package spec calls it for every
// history the fuzzer draws.
func CheckHistory(ctx context.Context, factory Factory, messages []contract.Message, opts ...Option) error {
	p := &ProjectionRun{factory: factory, opts: newOptions(opts)}
	return p.Check(ctx, messages)
}

// CompareSnapshot returns nil when snap is the faithful projection of the
// canonical history messages — the messages member by member in order, no
// validation issue, exactly the derived tool atomic groups (as a set) —
// and otherwise a *Failure (check "projection") explaining the first
// difference as metadata only. It does not compare the snapshot's runtime,
// session or root with anything. The spec package's HoldHistory matcher
// is built on it.
func CompareSnapshot(snap contract.HistorySnapshot, messages []contract.Message) error {
	err := checkSnapshot(&snap, snap.RuntimeID, snap.SessionID, snap.ProjectRoot, messages)
	if err == nil {
		return nil
	}
	_, f, _ := result(CheckProjection, err)
	return f
}
