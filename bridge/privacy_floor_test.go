package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/reference"
)

// privacyFactory makes reference adapters enforcing cfg, each over a
// history of the fixture in a temporary folder.
func privacyFactory(t *testing.T, cfg privacy.Config) conformance.Factory {
	return conformance.NewFactory("reference adapter with a privacy configuration", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		dir := t.TempDir()
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return conformance.Instance{}, err
		}
		fx := setup.Fixture
		path := filepath.Join(root, "history.jsonl")
		if err := reference.CreateHistory(ctx, path, reference.Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}, fx.Messages); err != nil {
			return conformance.Instance{}, err
		}
		a, err := reference.New(reference.Options{HistoryPath: path, RuntimeID: fx.RuntimeID, ProjectRoot: root, Model: &fx.Model, Transport: setup.Transport, Privacy: &cfg})
		if err != nil {
			return conformance.Instance{}, err
		}
		return conformance.Instance{Adapter: a, ExpectedProjectRoot: root, Cleanup: func(context.Context) error { return os.RemoveAll(path) }, PrivacyConfig: &cfg}, nil
	})
}

// TestPipeEnforcesMarkerStructure sends, in process and over the bridge,
// payloads whose marker structure raises the floor of the whole payload to
// local-only: a mismatched close that leaves an outer marker open under a
// later local-only pair, and a member name holding an unclosed marker, in
// content context and at the root. Both ways, every content must be withheld from a remote
// provider, in EnforcePrivacy's result and at the transport.
func TestPipeEnforcesMarkerStructure(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	const pl = `"[DS4 local-only content excluded by privacy policy]"`
	sensitiveAllowed := privacy.DefaultConfig()
	sensitiveAllowed.RemoteProviders = map[string][]privacy.Classification{"remote-x": {privacy.Normal, privacy.Internal, privacy.Sensitive}}
	cases := []struct {
		name    string
		cfg     privacy.Config
		payload any
		want    string
		blocked int
	}{
		{"mismatched close leaves the outer marker open", sensitiveAllowed,
			json.RawMessage(`{"messages":[{"role":"user","content":"[ds4:internal]a[ds4:sensitive]b[/ds4:internal]"},` +
				`{"role":"user","content":"public text"},{"role":"user","content":"[ds4:local-only]c[/ds4:local-only]"}]}`),
			`{"messages":[{"role":"user","content":` + pl + `},{"role":"user","content":` + pl + `},{"role":"user","content":` + pl + `}]}`, 3},
		{"unclosed marker in a member name", privacy.DefaultConfig(),
			map[string]any{"messages": []any{map[string]any{"role": "user", "content": "public text"}},
				"tools": []any{map[string]any{"input": map[string]any{"x [ds4:local-only]SECRET": "y"}}}},
			`{"messages":[{"content":` + pl + `,"role":"user"}],"tools":[{"input":{` + pl + `:` + pl + `}}]}`, 3},
		{"unclosed marker in a member name at the root", privacy.DefaultConfig(),
			json.RawMessage(`{"x [ds4:local-only]SECRET":1,"messages":[{"role":"user","content":"public text"}]}`),
			`{` + pl + `:1,"messages":[{"role":"user","content":` + pl + `}]}`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, via := range []struct {
				name    string
				factory conformance.Factory
			}{{"in process", privacyFactory(t, c.cfg)}, {"over the bridge", Pipe(privacyFactory(t, c.cfg), Options{})}} {
				tr := &recorder{}
				inst, err := via.factory.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
				if err != nil {
					t.Fatal(err)
				}
				res, perr := inst.Adapter.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: "remote-x", Payload: c.payload})
				r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "remote-x", Model: "m", Payload: c.payload})
				if err := inst.Adapter.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
				if err := inst.Cleanup(ctx); err != nil {
					t.Fatal(err)
				}
				if perr != nil || string(res.Payload) != c.want || res.BlockedBlocks != c.blocked {
					t.Errorf("%s: EnforcePrivacy gave %s (%d blocked, error %v)\nwant %s (%d blocked)", via.name, res.Payload, res.BlockedBlocks, perr, c.want, c.blocked)
				}
				if r.Status != contract.StatusCompleted || tr.count() != 1 {
					t.Fatalf("%s: result %+v, %d transport calls", via.name, r, tr.count())
				}
				got := tr.reqs[0].Payload
				if string(got) != c.want {
					t.Errorf("%s: transport saw %s\nwant %s", via.name, got, c.want)
				}
				if bytes.Contains(got, []byte("public text")) || bytes.Contains(got, []byte("SECRET")) {
					t.Errorf("%s: withheld text reached the transport", via.name)
				}
			}
		})
	}
}

// TestUpstreamPrivacyEngineOverTheBridge runs the privacy checks on the
// adapter built on the TypeScript kit's engine (the legal variant
// upstream-privacy-engine), in process and over the bridge: both ways
// privacy-engine and privacy-probes pass with the same limit
// member-name-floor, and fail under strict privacy.
func TestUpstreamPrivacyEngineOverTheBridge(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	i := slices.IndexFunc(mutants.Catalogue(), func(m mutants.Mutant) bool { return m.Name == "upstream-privacy-engine" })
	if i < 0 {
		t.Fatal("no legal variant upstream-privacy-engine")
	}
	m := mutants.Catalogue()[i]
	engine, _ := conformance.CheckByID(conformance.CheckPrivacyEngine)
	probes, _ := conformance.CheckByID(conformance.CheckPrivacyProbes)
	limits := map[string][][]conformance.Limit{}
	for name, f := range map[string]conformance.Factory{"in process": m.Factory(mutantBase()), "over the bridge": Pipe(m.Factory(mutantBase()), Options{})} {
		for _, c := range []conformance.Check{engine, probes} {
			r := c.Run(ctx, f, conformance.WithSeed(7))
			if r.Status != conformance.StatusPass || len(r.Limits) != 1 || r.Limits[0].Deviation != conformance.LimitMemberNameFloor {
				t.Fatalf("%s: %s %s, limits %+v, %v", name, c.ID, r.Status, r.Limits, r.Failure)
			}
			limits[c.ID] = append(limits[c.ID], r.Limits)
			if r := c.Run(ctx, f, conformance.WithSeed(7), conformance.WithStrictPrivacy()); r.Status != conformance.StatusFail {
				t.Fatalf("%s: strict %s %s", name, c.ID, r.Status)
			}
		}
	}
	for id, ls := range limits {
		if !slices.Equal(ls[0], ls[1]) {
			t.Fatalf("%s: the limits differ: %+v and %+v", id, ls[0], ls[1])
		}
	}
}
