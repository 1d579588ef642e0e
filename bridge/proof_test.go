package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
)

// mutantEnv names the mutant a "serve-mutant" child serves.
const mutantEnv = "BRIDGE_TEST_MUTANT"

// mutantBase is the correct adapter every mutant wraps, as in the mutants'
// own tests.
func mutantBase() conformance.Factory { return memadapter.ConformanceFactory() }

// baseOf is the base factory of m: the reference adapter's for a mutant
// that reads its history file, mutantBase otherwise.
func baseOf(m mutants.Mutant) conformance.Factory {
	if m.ReadsTheHistoryFile() {
		return reference.NewConformanceFactory()
	}
	return mutantBase()
}

func init() {
	childServers["serve-reference"] = func() conformance.Factory { return reference.NewConformanceFactory() }
	childServers["serve-mutant"] = func() conformance.Factory {
		for _, m := range mutants.Catalogue() {
			if m.Name == os.Getenv(mutantEnv) {
				return m.Factory(baseOf(m))
			}
		}
		panic("no mutant named in " + mutantEnv)
	}
}

func reportJSON(t *testing.T, r conformance.Report, err error) string {
	t.Helper()
	if err != nil {
		return "error"
	}
	b, jerr := json.Marshal(r)
	if jerr != nil {
		t.Fatal(jerr)
	}
	return string(b)
}

// The reference adapter passes over the bridge — in process over pipes and
// in a child process — with the very report it gets in process.
func TestReferenceOverTheBridge(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	want, err := conformance.Run(ctx, reference.NewConformanceFactory())
	if err != nil || !want.Passed {
		t.Fatalf("in process: passed %t, %v", want.Passed, err)
	}
	for name, f := range map[string]conformance.Factory{
		"pipe":    Pipe(reference.NewConformanceFactory(), Options{}),
		"process": childFactory("serve-reference", Options{}),
	} {
		got, err := conformance.Run(ctx, f)
		if g, w := reportJSON(t, got, err), reportJSON(t, want, nil); g != w {
			t.Errorf("%s: report\n got %s (%v)\nwant %s", name, g, err, w)
		}
		if err := conformance.Verify(ctx, f); err != nil {
			t.Errorf("%s: Verify: %v", name, err)
		}
	}
}

// Every mutant is caught over the bridge exactly as in process: the same
// report (or the same runner error), the same failed cases.
//
// By default every mutant crosses the bridge over pipes in process, and
// the first mutant of each outcome (runner error, failed cases, whether it
// reads the history file) crosses it in a child process too;
// ADAPTERKIT_STRESS=1 runs every mutant in a child process. Both legs run
// the same client and server code; what the child process adds — the
// process, its pipes, the history file it reads — one mutant of each
// outcome shows.
func TestMutantsOverTheBridge(t *testing.T) {
	overProcess, outcomes := map[string]bool{}, map[string]bool{}
	for _, m := range mutants.Catalogue() {
		outcome := fmt.Sprint(m.RunnerErr, m.RunnerFails(), m.ReadsTheHistoryFile())
		overProcess[m.Name] = !outcomes[outcome] || os.Getenv("ADAPTERKIT_STRESS") == "1"
		outcomes[outcome] = true
	}
	for _, m := range mutants.Catalogue() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel() // each mutant waits on its own child process
			ctx := context.Background()
			want, wantErr := conformance.Run(ctx, m.Factory(baseOf(m)))
			faces := map[string]conformance.Factory{"pipe": Pipe(m.Factory(baseOf(m)), Options{})}
			if overProcess[m.Name] {
				faces["process"] = childFactory("serve-mutant", Options{}, mutantEnv+"="+m.Name)
			}
			for name, f := range faces {
				got, err := conformance.Run(ctx, f)
				switch {
				case m.RunnerErr != nil:
					if !errors.Is(wantErr, m.RunnerErr) || !errors.Is(err, m.RunnerErr) {
						t.Errorf("%s: runner error %v, in process %v; want %v", name, err, wantErr, m.RunnerErr)
					}
				case err != nil || wantErr != nil:
					t.Errorf("%s: runner error %v, in process %v", name, err, wantErr)
				default:
					if g, w := reportJSON(t, got, err), reportJSON(t, want, wantErr); g != w {
						t.Errorf("%s: report\n got %s\nwant %s", name, g, w)
					}
					if !slices.Equal(got.Failed(), m.RunnerFails()) {
						t.Errorf("%s: failed cases %q, want %q", name, got.Failed(), m.RunnerFails())
					}
				}
			}
		})
	}
}

// The Node.js example adapter, a complete adapter in another language,
// passes the seven cases through the bridge.
func TestNodeExampleAdapter(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node.js example adapter (examples/node-adapter) is not run")
	}
	ctx := context.Background()
	f := NewFactory(ExecConfig{Path: node, Args: []string{"../examples/node-adapter/adapter.mjs"}, Stderr: os.Stderr,
		Options: Options{CallTimeout: bound(10 * time.Second)}})
	r, err := conformance.Run(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Assert(r); err != nil {
		t.Fatal(err)
	}
	if err := conformance.Verify(ctx, f); err != nil {
		t.Fatal(err)
	}
	if r.FactoryName != "node-example-adapter" {
		t.Errorf("factory name %q, want the one the process gave", r.FactoryName)
	}
}
