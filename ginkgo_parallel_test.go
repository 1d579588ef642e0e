package adapterkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// ginkgoParallelEnv, when set, makes TestGinkgoParallelVerdict run the
// module's Ginkgo suite serially and in parallel (.ci/run sets it).
const ginkgoParallelEnv = "ADAPTERKIT_GINKGO_PARALLEL"

// The module's Ginkgo suite gives the same verdict in parallel (go tool
// ginkgo -p) as serially: the same specs, each passed, failed or skipped
// alike, and the same exit status.
func TestGinkgoParallelVerdict(t *testing.T) {
	if os.Getenv(ginkgoParallelEnv) == "" {
		t.Skip(ginkgoParallelEnv + " is not set: the suite runs twice, about two minutes")
	}
	dir := t.TempDir()
	run := func(name string, flags ...string) (map[string]types.SpecState, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
		defer cancel()
		file := filepath.Join(dir, name+".json")
		cmd := exec.CommandContext(ctx, "go", append(append([]string{"tool", "ginkgo"}, flags...), "--json-report="+file, ".")...)
		// The children must not run this test again.
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, ginkgoParallelEnv+"=") })
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("go tool ginkgo %q: %v\n%s", flags, err, out)
			}
			code = ee.ExitCode()
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("go tool ginkgo %q wrote no report: %v\n%s", flags, err, out)
		}
		var reports []types.Report
		if err := json.Unmarshal(b, &reports); err != nil {
			t.Fatal(err)
		}
		states := map[string]types.SpecState{}
		for _, r := range reports {
			for _, s := range r.SpecReports {
				if s.LeafNodeType == types.NodeTypeIt {
					states[s.FullText()] = s.State
				}
			}
		}
		if len(states) == 0 {
			t.Fatalf("go tool ginkgo %q ran no spec\n%s", flags, out)
		}
		return states, code
	}
	serial, serialCode := run("serial")
	parallel, parallelCode := run("parallel", "-p", "--procs=4")
	if serialCode != parallelCode {
		t.Errorf("exit %d serially, %d in parallel", serialCode, parallelCode)
	}
	for spec, s := range serial {
		if p, ok := parallel[spec]; !ok || p != s {
			t.Errorf("%s: %s serially, %s in parallel", spec, s, p)
		}
	}
	for spec := range parallel {
		if _, ok := serial[spec]; !ok {
			t.Errorf("%s ran in parallel only", spec)
		}
	}
	t.Logf("%d specs, the same verdict each, serially and across 4 processes", len(serial))
}
