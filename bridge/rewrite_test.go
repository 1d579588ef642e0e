package bridge

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// appendOnly hides the rewrite hook of an instance's source.
type appendOnly struct{ conformance.Source }

// The rewrite hook crosses the bridge when the served source has one, and
// only then.
func TestSourceRewriteCrossesTheBridge(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	base := reference.NewConformanceFactory()
	without := conformance.NewFactory("append only", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		inst, err := base.Create(ctx, setup)
		inst.Source = appendOnly{inst.Source}
		return inst, err
	})
	for _, c := range []struct {
		factory conformance.Factory
		rewrite bool
	}{{base, true}, {without, false}} {
		f := Pipe(c.factory, Options{})
		fx := conformance.NewFixture()
		inst, err := f.Create(ctx, conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
		if err != nil {
			t.Fatal(err)
		}
		rw, ok := inst.Source.(conformance.SourceRewriter)
		if ok != c.rewrite {
			t.Fatalf("%s: the remote source rewrites %t, want %t", c.factory.Name(), ok, c.rewrite)
		}
		if ok {
			m := contract.CloneMessage(&fx.Messages[0])
			m.Blocks = []contract.Block{&contract.TextBlock{Text: "rewritten over the bridge"}}
			if err := rw.Rewrite(ctx, m); err != nil {
				t.Fatal(err)
			}
			snap, err := inst.Adapter.SnapshotHistory(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b := snap.Messages[0].Blocks[0].(*contract.TextBlock); b.Text != "rewritten over the bridge" {
				t.Fatalf("snapshot after a rewrite holds %q", b.Text)
			}
			unknown := contract.CloneMessage(&m)
			unknown.ID += "-unknown"
			if rw.Rewrite(ctx, unknown) == nil {
				t.Fatal("a rewrite of an unknown id succeeded")
			}
		}
		if err := inst.Adapter.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if err := inst.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
