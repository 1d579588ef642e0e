package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// env is a temporary project root and history path.
type env struct {
	dir, root, path string
}

func newEnv(t testing.TB) env {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	canon, err := resolveRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	return env{dir: dir, root: canon, path: filepath.Join(dir, "history", "session.jsonl")}
}

func fixture() conformance.Fixture { return conformance.NewFixture() }

// create writes the fixture history into e.
func (e env) create(t testing.TB, opts ...HistoryOption) conformance.Fixture {
	t.Helper()
	fx := fixture()
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: e.root}
	if err := CreateHistory(context.Background(), e.path, h, fx.Messages, opts...); err != nil {
		t.Fatalf("CreateHistory: %v", err)
	}
	return fx
}

func (e env) read(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// write replaces the history file with text (for hand-made bad files).
func (e env) write(t testing.TB, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(e.path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e env) headerLine(runtimeID, sessionID, root string) string {
	return string(appendHeader(nil, &Header{RuntimeID: runtimeID, SessionID: sessionID, ProjectRoot: root}))
}

func recordLine(t testing.TB, m contract.Message) string {
	t.Helper()
	b, err := appendRecord(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixtureText is the fixture history as file text, with the given messages.
func (e env) fixtureText(t testing.TB, msgs []contract.Message) string {
	fx := fixture()
	var b strings.Builder
	b.WriteString(e.headerLine(fx.RuntimeID, fx.SessionID, e.root))
	for _, m := range msgs {
		b.WriteString(recordLine(t, m))
	}
	return b.String()
}

// recorder is a transport recording every request.
type recorder struct {
	reqs []contract.TransportRequest
	fail bool
}

func (r *recorder) Send(_ context.Context, req contract.TransportRequest) (json.RawMessage, error) {
	if r.fail {
		return nil, errors.New("transport down")
	}
	r.reqs = append(r.reqs, req)
	return json.RawMessage(`{"role":"assistant","content":"ok"}`), nil
}

func (e env) options(tr contract.Transport) Options {
	fx := fixture()
	if tr == nil {
		tr = &recorder{}
	}
	return Options{HistoryPath: e.path, RuntimeID: fx.RuntimeID, ProjectRoot: e.root, Model: &fx.Model, Transport: tr}
}

func newAdapter(t testing.TB, opts Options) *Adapter {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func hasDiagnostic(a *Adapter, code string) bool {
	return slices.ContainsFunc(a.Diagnostics(), func(d contract.Diagnostic) bool { return d.Code == code })
}

// expectSnapshotFailure asserts that a snapshot of e fails with sentinel,
// records the diagnostic code, and leaves the file's bytes as they were.
func expectSnapshotFailure(t *testing.T, e env, opts Options, sentinel error, code string) error {
	t.Helper()
	before, beforeErr := os.ReadFile(e.path)
	a := newAdapter(t, opts)
	_, err := a.SnapshotHistory(context.Background())
	if !errors.Is(err, sentinel) {
		t.Fatalf("snapshot error = %v, want one wrapping %v", err, sentinel)
	}
	if !hasDiagnostic(a, code) {
		t.Fatalf("diagnostics %+v lack %s", a.Diagnostics(), code)
	}
	after, afterErr := os.ReadFile(e.path)
	if !bytes.Equal(before, after) || (beforeErr == nil) != (afterErr == nil) {
		t.Fatal("snapshot changed the history file")
	}
	// A rebuild fails the same way and does not claim a rebuild.
	if _, err := a.RebuildDerivedState(context.Background()); !errors.Is(err, sentinel) {
		t.Fatalf("rebuild error = %v, want one wrapping %v", err, sentinel)
	}
	if hasDiagnostic(a, CodeDerivedStateRebuilt) {
		t.Fatal("a failed rebuild recorded derived-state-rebuilt")
	}
	return err
}

// expectUnchanged runs fn and asserts the file's bytes did not change.
func expectUnchanged(t *testing.T, e env, fn func()) {
	t.Helper()
	before := e.read(t)
	fn()
	if !bytes.Equal(before, e.read(t)) {
		t.Fatal("history file changed")
	}
}

// endsOnceAwaited is a context that ends (context.Canceled) the first time
// a caller waits on its Done channel: once the code under test waits for a
// lock, however long reaching that took on a loaded machine. A deadline
// could end before.
type endsOnceAwaited struct {
	context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (c *endsOnceAwaited) Done() <-chan struct{} {
	c.once.Do(c.cancel)
	return c.Context.Done()
}

// untilAwaited returns an endsOnceAwaited context.
func untilAwaited() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return &endsOnceAwaited{Context: ctx, cancel: cancel}, cancel
}
