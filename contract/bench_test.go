package contract_test

import (
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

func benchSnapshot(n int) contract.HistorySnapshot {
	h := gen.SyntheticHistory{RuntimeID: "bench-runtime", SessionID: "bench-session"}
	msgs := h.Messages(n)
	return contract.HistorySnapshot{
		SchemaVersion:    contract.HistorySchemaVersion,
		RuntimeID:        "bench-runtime",
		SessionID:        "bench-session",
		Revision:         "r1",
		ProjectRoot:      "/bench",
		Messages:         msgs,
		ToolAtomicGroups: contract.BuildToolAtomicGroups(msgs),
	}
}

// BenchmarkBuildAndValidate measures what an adapter does per snapshot:
// derive the groups of n messages, then validate the snapshot.
func BenchmarkBuildAndValidate(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		s := benchSnapshot(n)
		if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
			b.Fatalf("synthetic history is invalid: %v", issues)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
				if len(contract.ValidateHistorySnapshot(&s)) != 0 {
					b.Fatal("invalid")
				}
			}
		})
	}
}

func BenchmarkBuildToolAtomicGroups(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		s := benchSnapshot(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				contract.BuildToolAtomicGroups(s.Messages)
			}
		})
	}
}

// BenchmarkBuildAndValidateSnapshot measures the same work through the
// combined function, which derives the tool graph once.
func BenchmarkBuildAndValidateSnapshot(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		s := benchSnapshot(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(contract.BuildAndValidateSnapshot(&s)) != 0 {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkCloneMessages measures deep copies of 1, 10, 1,000 and 100,000
// messages: bytes and allocations per copy grow with what is copied, not
// with the slabs a long copy carves its blocks from.
func BenchmarkCloneMessages(b *testing.B) {
	s := benchSnapshot(100_000)
	for _, n := range []int{1, 10, 1_000, 100_000} {
		msgs := s.Messages[:n]
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				contract.CloneMessages(msgs)
			}
		})
	}
}
