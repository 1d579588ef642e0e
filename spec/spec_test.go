package spec_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

// The suite embedded twice: with and without an embedding port, which also
// shows that Describe can be called more than once. The suite is the face
// under test here, not the model check, which examples/memadapter's own
// conformance run takes through its default steps: by default the two
// embeddings run the model spec over 60 operations (a sequence or two,
// the first with two instances side by side); ADAPTERKIT_STRESS=1 runs
// them with the default steps.
var (
	_ = spec.Describe(memadapter.ConformanceFactory(memadapter.WithEmbeddings()), append(faceModelSteps(), conformance.WithName("memadapter with embeddings"))...)
	_ = spec.Describe(needsTB(memadapter.ConformanceFactory()), faceModelSteps()...)
	// A shard of a campaign: its model and property specs run the shard's
	// part, every other spec is shard 1's and skips.
	_ = spec.Describe(memadapter.ConformanceFactory(memadapter.WithEmbeddings()), conformance.WithName("memadapter, shard 2 of 3"), conformance.WithSeed(0x5eed),
		conformance.WithShard(2, 3), conformance.WithModelSteps(150), conformance.WithHistories(6))
)

// faceModelSteps are the model options of the unsharded embeddings: 60
// operations by default, the check's default under ADAPTERKIT_STRESS=1.
func faceModelSteps() []conformance.Option {
	if stressed() {
		return nil
	}
	return []conformance.Option{conformance.WithModelSteps(60)}
}

// needsTB wraps a factory that refuses to create an instance unless the
// suite hands it the running test, and uses its TempDir and Cleanup.
func needsTB(f conformance.Factory) conformance.Factory {
	return conformance.NewFactory(f.Name(), func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		if setup.TB == nil {
			return conformance.Instance{}, errors.New("the suite handed the factory no testing.TB")
		}
		dir := setup.TB.TempDir()
		setup.TB.Cleanup(func() {
			if _, err := os.Stat(dir); err != nil {
				setup.TB.Errorf("the test's temporary directory is gone before its cleanup: %v", err)
			}
		})
		return f.Create(ctx, setup)
	})
}

func TestSpec(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "spec")
}
