package memadapter_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

// TestConformance is all an adapter repository needs to run the whole
// conformance suite against its adapter from go test: the seven contract
// cases (each on a fresh instance), the in-order run, the extended checks
// and the property check. Select specs with Ginkgo's flags, for example
//
//	go test ./examples/memadapter -ginkgo.v -ginkgo.label-filter=privacy
//
// A repository that already has a Ginkgo suite writes instead, at package
// level: var _ = spec.Describe(memadapter.ConformanceFactory(memadapter.WithEmbeddings()))
func TestConformance(t *testing.T) {
	spec.Run(t, memadapter.ConformanceFactory(memadapter.WithEmbeddings()))
}

// TestConformanceReport runs the seven cases with the framework-free runner
// and asserts its report: what a repository without Ginkgo writes.
func TestConformanceReport(t *testing.T) {
	report, err := conformance.Run(context.Background(), memadapter.ConformanceFactory(memadapter.WithEmbeddings()))
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Assert(report); err != nil {
		t.Fatal(err)
	}
}

// FuzzProjection fuzzes the projection of generated histories through the
// adapter: go test ./examples/memadapter -run '^$' -fuzz FuzzProjection.
func FuzzProjection(f *testing.F) {
	spec.Fuzz(f, memadapter.ConformanceFactory())
}

// The example's conformance factory offers the source hook, and a torn
// record makes snapshots fail with an error diagnostic instead of
// projecting what is left.
func TestTornRecordIsRejected(t *testing.T) {
	ctx := context.Background()
	inst, err := memadapter.ConformanceFactory().Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	if inst.Source == nil {
		t.Fatal("no Source")
	}
	if err := inst.Source.Corrupt(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Adapter.SnapshotHistory(ctx); !errors.Is(err, memadapter.ErrInvalidHistory) {
		t.Fatalf("SnapshotHistory of a torn history: %v, want ErrInvalidHistory", err)
	}
	ds := inst.Adapter.Diagnostics()
	if len(ds) != 1 || ds[0].Code != "canonical-history-read-failed" || ds[0].Severity != contract.SeverityError {
		t.Fatalf("diagnostics %+v, want one canonical-history-read-failed error", ds)
	}
}

func TestNewRefusesAnUnencodableMessage(t *testing.T) {
	m := contract.NewRuntimeMessage("r", "s", "e", contract.RoleUser)
	m.Blocks = []contract.Block{nil}
	_, err := memadapter.New(memadapter.Options{RuntimeID: "r", SessionID: "s", ProjectRoot: "/", Messages: []contract.Message{m},
		Transport: conformance.NewRecordingTransport()})
	if !errors.Is(err, memadapter.ErrInvalidHistory) {
		t.Fatalf("New = %v, want ErrInvalidHistory", err)
	}
}

// FuzzModel fuzzes sequences of operations against the model of the
// contract: go test ./examples/memadapter -run '^$' -fuzz FuzzModel.
func FuzzModel(f *testing.F) {
	spec.FuzzModel(f, memadapter.ConformanceFactory(memadapter.WithEmbeddings()))
}

// BenchmarkModelInput is the work of one FuzzModel exec on this adapter:
// one sequence drawn from a random 256-byte input (the seeds' size) run
// against the model. Its ops/s bounds the fuzzer's execs/s from above.
func BenchmarkModelInput(b *testing.B) {
	factory := memadapter.ConformanceFactory(memadapter.WithEmbeddings())
	r := rand.New(rand.NewPCG(1, 2))
	input := make([]byte, 256)
	for b.Loop() {
		for i := range input {
			input[i] = byte(r.Uint32())
		}
		if err := conformance.CheckModelInput(context.Background(), factory, input); err != nil {
			b.Fatal(err)
		}
	}
}
