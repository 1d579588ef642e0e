package conformance

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

// The ids of the source checks, which change the canonical history behind
// the adapter through the instance's Source and are skipped without one.
const (
	// CheckSourceAppend appends a message to the canonical source and
	// rebuilds.
	CheckSourceAppend = "source-append"
	// CheckSourceRevision checks the revision follows the source's content.
	CheckSourceRevision = "source-revision"
	// CheckSourceCorrupt corrupts the canonical source.
	CheckSourceCorrupt = "source-corrupt"
)

// noSource is the skip reason of the source checks.
const noSource = "the factory's instances offer no Source hook (Instance.Source is nil), so the canonical history cannot be changed"

func sourceChecks() []Check {
	return []Check{
		{ID: CheckSourceAppend, Kind: KindExtended, run: checkSourceAppend,
			Summary: "after a message is appended to the canonical source, a rebuild and a snapshot end with that message, content-equal, under a new revision",
			Rule:    "rebuilding re-reads the canonical source: a snapshot holds what the source holds now, under a new revision when it changed"},
		{ID: CheckSourceRevision, Kind: KindExtended, run: checkSourceRevision,
			Summary: "snapshots of an unchanged source share one revision; every append gives snapshots a revision not seen before",
			Rule:    "the revision tracks the canonical content: the same while the source is unchanged, different once it changed"},
		{ID: CheckSourceCorrupt, Kind: KindExtended, run: checkSourceCorrupt,
			Summary: "a corrupt canonical source makes snapshots and rebuilds fail with an error diagnostic, and leaves earlier snapshots untouched",
			Rule:    "a corrupt canonical source is rejected with an error and an error diagnostic, never projected as an empty or invented history"},
	}
}

// sourceOf returns the session's source, its calls bounded, or a skip.
func sourceOf(s *Session) (*boundedSource, error) {
	if s.instance.Source == nil {
		return nil, skip(noSource)
	}
	return &boundedSource{inner: s.instance.Source, bound: s.adapter.bound}, nil
}

// boundedSource is an instance's Source whose calls are bounded like the
// adapter's.
type boundedSource struct {
	inner Source
	bound time.Duration
}

func (b *boundedSource) Append(ctx context.Context, msg contract.Message) (err error) {
	ctx, cancel := boundedContext(ctx, b.bound)
	defer cancel()
	bounded("Source.Append", b.bound, func() { err = b.inner.Append(ctx, msg) })
	return err
}

func (b *boundedSource) Corrupt(ctx context.Context) (err error) {
	ctx, cancel := boundedContext(ctx, b.bound)
	defer cancel()
	bounded("Source.Corrupt", b.bound, func() { err = b.inner.Corrupt(ctx) })
	return err
}

// appendedMessage is the n-th message a source check appends: a valid
// user message of the fixture's runtime and session with a new entry id.
func appendedMessage(fx Fixture, n int) contract.Message {
	entry := fmt.Sprintf("entry-appended-%d", n)
	return contract.NewRuntimeMessage(fx.RuntimeID, fx.SessionID, entry, contract.RoleUser,
		&contract.TextBlock{Text: fmt.Sprintf("Appended note number %d for the conformance project.", n)})
}

// appendTo appends the n-th message through src and returns it.
func appendTo(ctx context.Context, src *boundedSource, fx Fixture, n int) (contract.Message, error) {
	m := appendedMessage(fx, n)
	if err := src.Append(ctx, m); err != nil {
		return m, failed("the instance's Source must append a valid message with a new id", err)
	}
	return m, nil
}

// messagesDiff describes, as metadata, the first message of got whose wire
// JSON differs from want's, or returns "" when they are equal.
func messagesDiff(want, got []contract.Message) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d messages expected, %d got", len(want), len(got))
	}
	for i := range want {
		w, err := contract.AppendMessageJSON(nil, &want[i])
		if err != nil {
			return fmt.Sprintf("message #%d: the expected message cannot be encoded", i)
		}
		g, err := contract.AppendMessageJSON(nil, &got[i])
		if err != nil {
			return fmt.Sprintf("message #%d (id %s) cannot be encoded as wire JSON", i, q(got[i].ID))
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("message #%d (id %s): wire JSON of %d bytes expected, %d bytes got, with different content", i, q(got[i].ID), len(w), len(g))
		}
	}
	return ""
}

// checkAppended checks that snap, returned by method after the source
// gained the messages appended, holds exactly want (the fixture's messages
// and the appended ones) under a revision other than before's.
func checkAppended(method string, snap *contract.HistorySnapshot, s *Session, before string, want []contract.Message) error {
	last := want[len(want)-1]
	if n := len(snap.Messages); n == 0 || snap.Messages[n-1].ID != last.ID {
		return broken(method+" after an append projects the canonical source as it is now: the appended message comes last",
			fmt.Sprintf("%d messages ending with %s", len(want), q(last.ID)), fmt.Sprintf("%d messages, ids %s", n, qs(messageIDs(snap.Messages))))
	}
	fx := s.Fixture()
	want = s.asHeld(want, snap.Messages, len(fx.Messages))
	if err := checkSnapshot(snap, fx.RuntimeID, fx.SessionID, s.ExpectedProjectRoot(), want); err != nil {
		return withNote(err, method+" after an append")
	}
	if d := messagesDiff(want, snap.Messages); d != "" {
		return broken(method+" after an append holds every message as the source holds it, content and all", "each message equal to the canonical one, member by member", d)
	}
	if snap.Revision == before {
		return broken(method+" after an append reports a new revision: the content changed", "a revision other than "+q(before), "revision "+q(snap.Revision))
	}
	return nil
}

func checkSourceAppend(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	src, err := sourceOf(s)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	base, err := a.SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history", err)
	}
	m, err := appendTo(ctx, src, fx, 1)
	if err != nil {
		return err
	}
	want := append(contract.CloneMessages(fx.Messages), m)
	r, err := a.RebuildDerivedState(ctx)
	if err != nil {
		return failed("RebuildDerivedState must rebuild from a valid canonical history after an append", err)
	}
	if err := checkAppended("RebuildDerivedState", &r, s, base.Revision, want); err != nil {
		return err
	}
	snap, err := a.SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history after an append", err)
	}
	if err := checkAppended("SnapshotHistory", &snap, s, base.Revision, want); err != nil {
		return err
	}
	if snap.Revision != r.Revision {
		return broken("the revision of an unchanged canonical history is the same in every snapshot", "the rebuilt revision "+q(r.Revision), "revision "+q(snap.Revision))
	}
	return nil
}

func checkSourceRevision(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	src, err := sourceOf(s)
	if err != nil {
		return err
	}
	a, fx := s.Adapter(), s.Fixture()
	// snapshotTwice takes two snapshots of the unchanged source; they must
	// share a revision and hold n messages.
	snapshotTwice := func(stage string, n int) (string, error) {
		var revs [2]string
		for i := range revs {
			snap, err := a.SnapshotHistory(ctx)
			if err != nil {
				return "", failed("SnapshotHistory must project a valid canonical history ("+stage+")", err)
			}
			if len(snap.Messages) != n {
				return "", broken("a snapshot projects the canonical source as it is now: one more message after each append",
					fmt.Sprintf("%d messages %s", n, stage), fmt.Sprintf("%d messages", len(snap.Messages)))
			}
			revs[i] = snap.Revision
		}
		if revs[0] != revs[1] {
			return "", broken("the revision of an unchanged canonical history is the same in every snapshot",
				"two snapshots "+stage+" with one revision", "revisions "+q(revs[0])+" and "+q(revs[1]))
		}
		return revs[0], nil
	}
	first, err := a.SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history", err)
	}
	seen := []string{}
	n := len(first.Messages)
	for i := 0; i <= 2; i++ {
		stage := "of the fixture"
		if i > 0 {
			if _, err := appendTo(ctx, src, fx, i); err != nil {
				return err
			}
			n++
			stage = fmt.Sprintf("after append #%d", i)
		}
		rev, err := snapshotTwice(stage, n)
		if err != nil {
			return err
		}
		if slices.Contains(seen, rev) {
			return broken("the revision changes whenever the canonical content does", fmt.Sprintf("a revision %s other than the earlier %s", stage, qs(seen)), "revision "+q(rev))
		}
		seen = append(seen, rev)
	}
	return nil
}

// errorDiagnostics counts the diagnostics of severity error.
func errorDiagnostics(ds []contract.Diagnostic) int {
	n := 0
	for _, d := range ds {
		if d.Severity == contract.SeverityError {
			n++
		}
	}
	return n
}

// describeHistory describes a snapshot an adapter should not have returned.
func describeHistory(snap *contract.HistorySnapshot) string {
	if len(snap.Messages) == 0 {
		return "an empty history (revision " + q(snap.Revision) + ")"
	}
	return fmt.Sprintf("a history of %d messages (revision %s, ids %s)", len(snap.Messages), q(snap.Revision), qs(messageIDs(snap.Messages)))
}

func checkSourceCorrupt(ctx context.Context, e *env) error {
	s, err := e.start(ctx)
	if err != nil {
		return err
	}
	src, err := sourceOf(s)
	if err != nil {
		return err
	}
	a := s.Adapter()
	base, err := a.SnapshotHistory(ctx)
	if err != nil {
		return failed("SnapshotHistory must project a valid canonical history", err)
	}
	kept := contract.CloneSnapshot(&base)
	if err := src.Corrupt(ctx); err != nil {
		return failed("the instance's Source must corrupt the canonical history", err)
	}
	for _, call := range []struct {
		method string
		read   func(context.Context) (contract.HistorySnapshot, error)
	}{{"SnapshotHistory", a.SnapshotHistory}, {"RebuildDerivedState", a.RebuildDerivedState}} {
		errorsBefore := errorDiagnostics(a.Diagnostics())
		snap, err := call.read(ctx)
		if err == nil {
			return broken(call.method+" of a corrupt canonical source fails: it never yields an empty, stale or invented history",
				"an error", describeHistory(&snap))
		}
		// §12: the reference adapter records canonical-history-read-failed
		// (severity error).
		// latitude: SPEC §4 makes the read an error and says nothing of
		// other adapters' diagnostics.
		if n := errorDiagnostics(a.Diagnostics()); n <= errorsBefore && a.Identity().AdapterName == referenceAdapterName {
			return broken("a failed "+call.method+" of a corrupt canonical source records a diagnostic of severity error (§12: the reference adapter's canonical-history-read-failed)",
				fmt.Sprintf("more than %d error diagnostics", errorsBefore), fmt.Sprintf("%d error diagnostics", n))
		}
	}
	if d := messagesDiff(kept.Messages, base.Messages); d != "" {
		return broken("a failed rebuild leaves the snapshots returned earlier untouched", "the earlier snapshot's messages as returned", d)
	}
	if diffGroups(kept.ToolAtomicGroups, base.ToolAtomicGroups) != "" || base.Revision != kept.Revision {
		return broken("a failed rebuild leaves the snapshots returned earlier untouched", "the earlier snapshot's groups and revision as returned",
			"revision "+q(base.Revision)+", groups "+describeGroups(base.ToolAtomicGroups))
	}
	return nil
}
