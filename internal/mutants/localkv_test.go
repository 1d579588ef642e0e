package mutants_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/mutants"
	"github.com/ds4context/adapterkit/spec"
)

// kvChildEnv marks the child process that runs the local KV checks.
const kvChildEnv = "ADAPTERKIT_LOCALKV_CHILD"

// Names of the two embeddings the local KV child runs.
const (
	withKVName    = "reference with a local KV port"
	withoutKVName = "reference whose factory drops the local KV port"
)

// withoutLocalKV is the reference factory made blind to Setup.LocalKVPort:
// its adapter declares local-kv-reuse unsupported.
func withoutLocalKV() conformance.Factory {
	return conformance.NewFactory("no local KV", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		setup.LocalKVPort = nil
		return base().Create(ctx, setup)
	})
}

// TestLocalKVSuite is the Ginkgo suite TestLocalKVChecksRunOrSkip runs in a
// child process.
func TestLocalKVSuite(t *testing.T) {
	if os.Getenv(kvChildEnv) == "" {
		t.Skip("runs as a child process of TestLocalKVChecksRunOrSkip")
	}
	spec.Describe(base(), spec.WithName(withKVName))
	spec.Describe(withoutLocalKV(), spec.WithName(withoutKVName))
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "local KV checks")
}

// The six local KV checks run, and pass, on the reference adapter given a
// port; on an adapter that does not declare the capability each is skipped
// with a message saying so — never passed.
func TestLocalKVChecksRunOrSkip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocalKVSuite$", "-ginkgo.no-color",
		"-ginkgo.label-filter=feature:local-kv-reuse", "-ginkgo.json-report="+file)
	cmd.Env = append(os.Environ(), kvChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("local KV checks failed: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(file)
	var rs []types.Report
	if err == nil {
		err = json.Unmarshal(b, &rs)
	}
	if err != nil || len(rs) != 1 {
		t.Fatalf("no report (%v)", err)
	}
	keys := []string{mutants.LocalKVHit, mutants.LocalKVChangedPrefix, mutants.LocalKVNonHit,
		mutants.LocalKVReplayFailure, mutants.LocalKVRemote, mutants.LocalKVMetadataOnly}
	got := map[string][]string{}
	for _, r := range rs[0].SpecReports {
		if r.LeafNodeType != types.NodeTypeIt || r.State == types.SpecStateSkipped && r.Failure.Message == "" {
			continue // filtered out by the label
		}
		name := strings.TrimPrefix(r.ContainerHierarchyTexts[0], spec.SuiteTitle+" ")
		key := specKey(r)
		switch {
		case name == withKVName && r.State == types.SpecStatePassed:
			got[name] = append(got[name], key)
		case name == withoutKVName && r.State == types.SpecStateSkipped &&
			strings.Contains(r.Failure.Message, "does not declare the local-kv-reuse capability"):
			got[name] = append(got[name], key)
		default:
			t.Errorf("%s: %s %s (%q)", name, key, r.State, r.Failure.Message)
		}
	}
	for _, name := range []string{withKVName, withoutKVName} {
		if !slices.Equal(slices.Sorted(slices.Values(got[name])), slices.Sorted(slices.Values(keys))) {
			t.Errorf("%s: checks %q, want each of %q", name, got[name], keys)
		}
	}
}
