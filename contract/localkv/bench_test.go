package localkv

import (
	"context"
	"crypto/sha256"
	"testing"
)

// benchPrefix is a 128,000-byte prompt prefix of printable text.
func benchPrefix() []byte {
	p := make([]byte, 128_000)
	for i := range p {
		p[i] = byte('a' + i%26)
	}
	return p
}

// BenchmarkDeriveEligibility128KB derives a key for a 128,000-byte prefix and
// small options. Compare it with BenchmarkSHA256_128KB: hashing the prefix is
// the floor, and everything else should cost little on top of it.
func BenchmarkDeriveEligibility128KB(b *testing.B) {
	in := baseInput()
	in.PromptPrefix = benchPrefix()
	b.SetBytes(int64(len(in.PromptPrefix)))
	b.ReportAllocs()
	for b.Loop() {
		if el := DeriveEligibility(in); !el.Eligible {
			b.Fatal(el.Reason)
		}
	}
}

// BenchmarkSHA256_128KB hashes the same 128,000 bytes once.
func BenchmarkSHA256_128KB(b *testing.B) {
	p := benchPrefix()
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		sha256.Sum256(p)
	}
}

// warmPort always hits, as a runtime with the prefix cached does.
type warmPort struct{}

func (warmPort) TryReuse(context.Context, ReuseRequest) (ReuseAnswer, error) { return goodHit, nil }
func (warmPort) FullReplay(context.Context, ReuseRequest) (ReplayAnswer, error) {
	return goodReplay, nil
}

// BenchmarkControllerWarmHit is one complete request served by reuse: the
// controller's own cost over a small prefix and payload.
func BenchmarkControllerWarmHit(b *testing.B) {
	c := NewController(warmPort{})
	req := request()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
