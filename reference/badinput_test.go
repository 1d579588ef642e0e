package reference

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// Every bad history is rejected whole: the snapshot errors with the right
// sentinel, records the right diagnostic and leaves the file untouched.

func fixtureHeader(e env) string {
	fx := fixture()
	return e.headerLine(fx.RuntimeID, fx.SessionID, e.root)
}

func TestSnapshotMissingFile(t *testing.T) {
	e := newEnv(t)
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryMissing, CodeHistoryReadFailed)
}

func TestSnapshotEmptyFile(t *testing.T) {
	e := newEnv(t)
	e.write(t, "")
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotDirectory(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(e.path, 0o700); err != nil {
		t.Fatal(err)
	}
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotUnterminatedLastLine(t *testing.T) {
	e := newEnv(t)
	text := e.fixtureText(t, fixture().Messages)
	e.write(t, strings.TrimSuffix(text, "\n"))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
	if !strings.Contains(err.Error(), "unterminated final record") {
		t.Fatalf("error %q does not say the final record is unterminated", err)
	}
}

func TestSnapshotMalformedHeader(t *testing.T) {
	e := newEnv(t)
	e.write(t, `{"type":"ds4-runtime-session-v1","runtimeId":`+"\n")
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotHeaderMissingMember(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	e.write(t, `{"type":"ds4-runtime-session-v1","runtimeId":"`+fx.RuntimeID+`","sessionId":"`+fx.SessionID+`"}`+"\n")
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotWrongHeaderType(t *testing.T) {
	e := newEnv(t)
	text := e.fixtureText(t, fixture().Messages)
	e.write(t, strings.Replace(text, HeaderType, "ds4-runtime-session-v2", 1))
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotWrongRecordType(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	rec := strings.Replace(recordLine(t, fx.Messages[1]), `{"type":"message"`, `{"type":"note"`, 1)
	e.write(t, fixtureHeader(e)+recordLine(t, fx.Messages[0])+rec)
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotRecordTypeOverriddenByLaterMember(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	// A later "type" member wins, as in JSON.parse: not a message record.
	rec := strings.TrimSuffix(recordLine(t, fx.Messages[0]), "}\n") + `,"type":"note"}` + "\n"
	if _, reason, _ := decodeRecord([]byte(strings.TrimSuffix(rec, "\n")), false); reason != "record is not a message record" {
		t.Fatalf("reason %q", reason)
	}
	e.write(t, fixtureHeader(e)+rec)
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotMalformedJSONLine(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	e.write(t, fixtureHeader(e)+recordLine(t, fx.Messages[0])+`{"type":"message","message":{"id":}`+"\n")
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotBlankLine(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	e.write(t, fixtureHeader(e)+recordLine(t, fx.Messages[0])+"  \r\n"+recordLine(t, fx.Messages[1]))
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotInvalidUTF8(t *testing.T) {
	e := newEnv(t)
	text := e.fixtureText(t, fixture().Messages)
	e.write(t, strings.Replace(text, "Inspect", "Insp\xffct", 1))
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotUnknownBlockType(t *testing.T) {
	e := newEnv(t)
	text := e.fixtureText(t, fixture().Messages)
	e.write(t, strings.Replace(text, `{"type":"text","text":"The project`, `{"type":"video","text":"The project`, 1))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
	if !errors.Is(err, contract.ErrUnknownBlockType) {
		t.Fatalf("error %v does not wrap ErrUnknownBlockType", err)
	}
}

func TestSnapshotMissingProvenance(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	rec := recordLine(t, fx.Messages[0])
	start := strings.Index(rec, `,"provenance":`)
	end := strings.Index(rec, `,"tokenEstimate"`)
	e.write(t, fixtureHeader(e)+rec[:start]+rec[end:])
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
	if !errors.Is(err, contract.ErrMissingField) {
		t.Fatalf("error %v does not wrap ErrMissingField", err)
	}
}

func TestSnapshotDuplicateID(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	e.write(t, e.fixtureText(t, append(fx.Messages, fx.Messages[3])))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryInvalid, CodeHistoryInvalid)
	if !strings.Contains(err.Error(), contract.CodeHistoryMessageIDDuplicate) {
		t.Fatalf("error %q lacks the duplicate code", err)
	}
}

func TestSnapshotInvalidDiagnosticCountsIssues(t *testing.T) {
	e := newEnv(t)
	fx := fixture()
	e.write(t, e.fixtureText(t, append(fx.Messages, fx.Messages[3], fx.Messages[3])))
	a := newAdapter(t, e.options(nil))
	if _, err := a.SnapshotHistory(context.Background()); !errors.Is(err, ErrHistoryInvalid) {
		t.Fatal(err)
	}
	d := a.Diagnostics()
	want := contract.Diagnostic{Code: CodeHistoryInvalid, Severity: contract.SeverityError, Message: "Canonical history validation failed with 2 issue(s)"}
	if len(d) != 1 || d[0] != want {
		t.Fatalf("diagnostics %+v, want [%+v]", d, want)
	}
}

func TestSnapshotProvenanceMismatch(t *testing.T) {
	e := newEnv(t)
	msgs := fixture().Messages
	msgs[3].Provenance.RuntimeID = new("other-runtime")
	e.write(t, e.fixtureText(t, msgs))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryInvalid, CodeHistoryInvalid)
	if !strings.Contains(err.Error(), contract.CodeHistoryProvenanceInvalid) {
		t.Fatalf("error %q lacks the provenance code", err)
	}
}

func TestSnapshotBrokenToolGroup(t *testing.T) {
	e := newEnv(t)
	msgs := fixture().Messages
	msgs = append(msgs[:1], msgs[2:]...) // a result whose call is gone
	e.write(t, e.fixtureText(t, msgs))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryInvalid, CodeHistoryInvalid)
	if !strings.Contains(err.Error(), contract.CodeToolResultOrphaned) {
		t.Fatalf("error %q lacks the orphaned-result code", err)
	}
}

func TestSnapshotAboveByteBound(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	opts := e.options(nil)
	opts.MaxBytes = int64(len(e.read(t))) - 1
	expectSnapshotFailure(t, e, opts, ErrHistoryTooLarge, CodeHistoryReadFailed)
}

func TestSnapshotAboveMessageBound(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	opts := e.options(nil)
	opts.MaxMessages = 3
	expectSnapshotFailure(t, e, opts, ErrHistoryTooLarge, CodeHistoryReadFailed)
}

func TestSnapshotHeaderRuntimeIDMismatch(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	opts := e.options(nil)
	opts.RuntimeID = "another-runtime"
	expectSnapshotFailure(t, e, opts, ErrIdentityMismatch, CodeHistoryIdentityMismatch)
}

func TestSnapshotProjectRootMismatch(t *testing.T) {
	e := newEnv(t)
	e.create(t)
	other := filepath.Join(e.dir, "elsewhere")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := e.options(nil)
	opts.ProjectRoot = other
	expectSnapshotFailure(t, e, opts, ErrIdentityMismatch, CodeHistoryIdentityMismatch)
}

func TestSnapshotProjectRootThroughSymlinkElsewhere(t *testing.T) {
	e := newEnv(t)
	other := filepath.Join(e.dir, "elsewhere")
	link := filepath.Join(e.dir, "link")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	// The header names the link, which points away from the trusted root.
	e.write(t, e.headerLine(fixture().RuntimeID, fixture().SessionID, link)+
		strings.SplitAfterN(e.fixtureText(t, fixture().Messages), "\n", 2)[1])
	expectSnapshotFailure(t, e, e.options(nil), ErrIdentityMismatch, CodeHistoryIdentityMismatch)
}

func TestSnapshotRootSymlinkRetargetedAfterCache(t *testing.T) {
	e := newEnv(t)
	other := filepath.Join(e.dir, "elsewhere")
	link := filepath.Join(e.dir, "link")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.root, link); err != nil {
		t.Fatal(err)
	}
	e.write(t, e.headerLine(fixture().RuntimeID, fixture().SessionID, link)+
		strings.SplitAfterN(e.fixtureText(t, fixture().Messages), "\n", 2)[1])
	a := newAdapter(t, e.options(nil))
	if _, err := a.SnapshotHistory(context.Background()); err != nil {
		t.Fatalf("a header root linking to the trusted root was refused: %v", err)
	}
	// Retarget the link: the cached history must not hide the change.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SnapshotHistory(context.Background()); !errors.Is(err, ErrIdentityMismatch) {
		t.Fatalf("error %v, want ErrIdentityMismatch", err)
	}
	if !hasDiagnostic(a, CodeHistoryIdentityMismatch) {
		t.Fatal("no identity diagnostic")
	}
}

func TestSnapshotHeaderRootThatDoesNotResolve(t *testing.T) {
	e := newEnv(t)
	e.write(t, e.headerLine(fixture().RuntimeID, fixture().SessionID, filepath.Join(e.dir, "gone"))+
		strings.SplitAfterN(e.fixtureText(t, fixture().Messages), "\n", 2)[1])
	expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
}

func TestSnapshotToleratesCarriageReturns(t *testing.T) {
	e := newEnv(t)
	e.write(t, strings.ReplaceAll(e.fixtureText(t, fixture().Messages), "\n", "\r\n"))
	a := newAdapter(t, e.options(nil))
	s, err := a.SnapshotHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 4 {
		t.Fatalf("%d messages", len(s.Messages))
	}
}

func TestErrorsCarryNoContent(t *testing.T) {
	e := newEnv(t)
	text := e.fixtureText(t, fixture().Messages)
	e.write(t, strings.Replace(text, `"role":"user"`, `"role":"SECRET-ROLE-VALUE"`, 1))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryCorrupt, CodeHistoryReadFailed)
	if strings.Contains(err.Error(), "SECRET-ROLE-VALUE") || strings.Contains(err.Error(), "Inspect") {
		t.Fatalf("error text carries file content: %q", err)
	}
}

func TestSnapshotBlankHeaderSessionID(t *testing.T) {
	e := newEnv(t)
	e.write(t, e.headerLine(fixture().RuntimeID, " ", e.root))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryInvalid, CodeHistoryInvalid)
	if err.Error() != "Reference history is invalid: "+contract.CodeHistoryIdentityInvalid {
		t.Fatalf("error %q", err)
	}
}

func TestSnapshotReusedToolCallID(t *testing.T) {
	e := newEnv(t)
	msgs := fixture().Messages
	again := nextMessage("entry-call-again")
	again.Blocks = []contract.Block{&contract.ToolCallBlock{ID: "tool-call-1", Name: "read"}}
	e.write(t, e.fixtureText(t, append(msgs, again)))
	err := expectSnapshotFailure(t, e, e.options(nil), ErrHistoryInvalid, CodeHistoryInvalid)
	if !strings.Contains(err.Error(), contract.CodeToolCallIdentityInvalid) {
		t.Fatalf("error %q", err)
	}
}
