package golden_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/golden"
)

// registry is the 0.2 compatibility registry: the values frozen for the
// 0.2 line.
type registry struct {
	Release                   string   `json:"release"`
	ContractVersion           string   `json:"contractVersion"`
	HistorySchemaVersion      string   `json:"historySchemaVersion"`
	ConformanceVersion        string   `json:"conformanceVersion"`
	CapabilityIDs             []string `json:"capabilityIds"`
	LocalKVEligibilityVersion string   `json:"localKvEligibilityVersion"`
	LocalKVRuntimePortVersion string   `json:"localKvRuntimePortVersion"`
	LocalKVDiagnosticsVersion string   `json:"localKvDiagnosticsVersion"`
}

func currentRegistry() registry {
	return registry{
		Release:                   "0.2",
		ContractVersion:           contract.ContractVersion,
		HistorySchemaVersion:      contract.HistorySchemaVersion,
		ConformanceVersion:        contract.ConformanceVersion,
		CapabilityIDs:             contract.CapabilityIDs(),
		LocalKVEligibilityVersion: contract.LocalKVEligibilityVersion,
		LocalKVRuntimePortVersion: contract.LocalKVRuntimePortVersion,
		LocalKVDiagnosticsVersion: contract.LocalKVDiagnosticsVersion,
	}
}

// registryHint is the failure message of a registry mismatch.
const registryHint = "The 0.2 compatibility registry changed. These values are frozen: a change here is a new contract version, not an edit. " +
	"Restore the old values; to introduce a new version, add it alongside the old one and pin it in a new golden."

// assertRegistry pins r in the golden "registry-0.2".
func assertRegistry(t testing.TB, r registry, opts ...golden.Option) {
	t.Helper()
	golden.Assert(t, "registry-0.2", r, append([]golden.Option{golden.Hint(registryHint)}, opts...)...)
}

func TestRegistryGolden(t *testing.T) {
	assertRegistry(t, currentRegistry())
}

// TestPackagesEmitTheRegistryVersions checks that what the local KV package
// writes carries the pinned versions, not copies that could drift.
func TestPackagesEmitTheRegistryVersions(t *testing.T) {
	r := currentRegistry()
	key := localkv.DeriveEligibility(localkv.EligibilityInput{
		Enabled: true, CapabilityEnabled: true, CapabilityVersion: r.LocalKVRuntimePortVersion,
		Destination: localkv.LocalDestination, RuntimeID: "r", RuntimeRevision: "1", Provider: "p", Model: "m",
		ModelRevision: "1", PrivacyPolicyVersion: "1", PromptPrefix: []byte("x"), PrefixTokenCount: 1, ContextTokenCount: 1,
	})
	if !key.Eligible || key.Key.Version != r.LocalKVEligibilityVersion {
		t.Errorf("eligibility key version %q (eligible %v), want %q", key.Key.Version, key.Eligible, r.LocalKVEligibilityVersion)
	}
	if d := localkv.NewController(idlePort{}).Diagnostics(); d.Version != r.LocalKVDiagnosticsVersion {
		t.Errorf("local KV diagnostics version %q, want %q", d.Version, r.LocalKVDiagnosticsVersion)
	}
	n := contract.NegotiateCapabilities(nil, nil)
	if n.ContractVersion != r.ContractVersion {
		t.Errorf("negotiation contract version %q, want %q", n.ContractVersion, r.ContractVersion)
	}
	var ids []string
	for _, s := range n.Statuses {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, r.CapabilityIDs) {
		t.Errorf("negotiation lists %q, want the registry order %q", ids, r.CapabilityIDs)
	}
}

// idlePort is a runtime port that is never called.
type idlePort struct{}

func (idlePort) TryReuse(context.Context, localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	return localkv.ReuseAnswer{}, errors.New("idle port")
}

func (idlePort) FullReplay(context.Context, localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	return localkv.ReplayAnswer{}, errors.New("idle port")
}

// recordingTB is a testing.TB that records failures instead of failing the
// test that owns it. Only the methods Assert uses are overridden; FailNow
// and Fatal record and return (Assert never relies on them stopping).
type recordingTB struct {
	testing.TB
	failed   bool
	messages []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fail()   { r.failed = true }
func (r *recordingTB) FailNow() {
	r.failed = true
}
func (r *recordingTB) Failed() bool { return r.failed }
func (r *recordingTB) Error(args ...any) {
	r.failed = true
	r.messages = append(r.messages, fmt.Sprint(args...))
}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.failed = true
	r.messages = append(r.messages, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Fatal(args ...any)                 { r.Error(args...) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// TestRegistryPinBites proves the registry golden fails, and says why, when
// any registry value changes. It compares against a copy of the golden
// file, never the file itself, and with updating switched off.
func TestRegistryPinBites(t *testing.T) {
	t.Setenv(golden.UpdateEnv, "0")
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(golden.DefaultDir, "registry-0.2"+golden.Suffix))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "registry-0.2"+golden.Suffix), data, 0o644); err != nil {
		t.Fatal(err)
	}

	ok := &recordingTB{TB: t}
	assertRegistry(ok, currentRegistry(), golden.Dir(dir))
	if ok.failed {
		t.Fatalf("the unchanged registry fails against its golden: %q", ok.messages)
	}

	edits := map[string]func(*registry){
		"contract version":     func(r *registry) { r.ContractVersion = "runtime-adapter-v2" },
		"history schema":       func(r *registry) { r.HistorySchemaVersion = "runtime-history-v2" },
		"conformance version":  func(r *registry) { r.ConformanceVersion += "-draft" },
		"capability order":     func(r *registry) { r.CapabilityIDs[0], r.CapabilityIDs[1] = r.CapabilityIDs[1], r.CapabilityIDs[0] },
		"capability added":     func(r *registry) { r.CapabilityIDs = append(r.CapabilityIDs, "streaming") },
		"capability removed":   func(r *registry) { r.CapabilityIDs = r.CapabilityIDs[:3] },
		"eligibility version":  func(r *registry) { r.LocalKVEligibilityVersion = "local-kv-eligibility-v2" },
		"runtime port version": func(r *registry) { r.LocalKVRuntimePortVersion = "local-kv-runtime-port-v2" },
		"diagnostics version":  func(r *registry) { r.LocalKVDiagnosticsVersion = "local-kv-diagnostics-v2" },
	}
	for name, edit := range edits {
		r := currentRegistry()
		edit(&r)
		rec := &recordingTB{TB: t}
		assertRegistry(rec, r, golden.Dir(dir))
		if !rec.failed {
			t.Errorf("%s changed, yet the registry golden passed", name)
			continue
		}
		if msg := strings.Join(rec.messages, "\n"); !strings.Contains(msg, "new contract version") {
			t.Errorf("%s changed: the failure does not say it is a new contract version:\n%s", name, msg)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "registry-0.2"+golden.Suffix)); string(after) != string(data) {
		t.Error("a failed comparison rewrote the golden file")
	}
}
