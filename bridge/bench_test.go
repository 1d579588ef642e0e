package bridge

import (
	"context"
	"testing"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// BenchmarkRoundTrip measures one call and its response (TrustedProjectRoot:
// a short request and a short result), in process over pipes and to a real
// child process.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name    string
		factory conformance.Factory
	}{
		{"pipe", Pipe(&fakeFactory{}, Options{})},
		{"process", childFactory("serve-fake", Options{})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			inst, err := bc.factory.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
			if err != nil {
				b.Fatal(err)
			}
			defer inst.Cleanup(ctx)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inst.Adapter.TrustedProjectRoot(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnapshot measures a snapshot of the four-message fixture across
// the bridge: encoding, one line each way, and strict decoding.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	inst, err := Pipe(&fakeFactory{}, Options{}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inst.Adapter.SnapshotHistory(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
