package reference

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

// A prefixPrint built in pieces of any sizes (empty ones included), with
// any chunk length, matches exactly the bytes it was given: not one byte
// changed, missing or added, whatever the reads look like.
func TestPropertyPrefixPrint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pieces := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 9), 0, 6).Draw(t, "pieces")
		want := bytes.Join(pieces, nil)
		p := prefixPrint{chunk: rapid.IntRange(1, 8).Draw(t, "chunk")}
		for _, piece := range pieces {
			before := p
			p = p.extended(piece)
			if before.size() > p.size() {
				t.Fatal("extending shrank the print")
			}
		}
		if p.size() != int64(len(want)) {
			t.Fatalf("print of %d bytes, want %d", p.size(), len(want))
		}
		got := bytes.Clone(want)
		switch rapid.IntRange(0, 3).Draw(t, "edit") {
		case 1:
			if len(got) > 0 {
				got[rapid.IntRange(0, len(got)-1).Draw(t, "at")] ^= 1 + rapid.Byte().Draw(t, "x")%255
			}
		case 2:
			got = got[:rapid.IntRange(0, len(got)).Draw(t, "cut")]
		case 3:
			got = append(got, rapid.SliceOfN(rapid.Byte(), 1, 4).Draw(t, "more")...)
		}
		var r io.Reader = bytes.NewReader(got)
		if rapid.Bool().Draw(t, "one byte reads") {
			r = iotest.OneByteReader(r)
		}
		same, err := p.matches(context.Background(), r, make([]byte, p.chunk))
		if err != nil {
			t.Fatal(err)
		}
		if same != bytes.Equal(got, want) {
			t.Fatalf("matches %v for %q against %q", same, got, want)
		}
	})
}

// Extending a print leaves the print it extends as it was, even when two
// extensions of it are made.
func TestPrefixPrintExtensionKeepsTheOriginal(t *testing.T) {
	p := prefixPrint{chunk: 4}.extended([]byte("abcdef"))
	a := p.extended([]byte("ghijkl"))
	b := p.extended([]byte("GHIJKL"))
	for _, c := range []struct {
		p    prefixPrint
		data string
	}{{p, "abcdef"}, {b, "abcdefGHIJKL"}, {prefixPrint{chunk: 4}.extended([]byte("abcdefghijkl")), "abcdefghijkl"}} {
		if same, err := c.p.matches(context.Background(), bytes.NewReader([]byte(c.data)), make([]byte, 4)); !same || err != nil {
			t.Fatalf("print of %q does not match it: %v", c.data, err)
		}
	}
	if a.size() != 12 || b.size() != 12 {
		t.Fatal("extensions have the wrong size")
	}
}

func TestPrefixPrintStopsOnReadErrorsAndContexts(t *testing.T) {
	p := prefixPrint{chunk: 4}.extended([]byte("abcdef"))
	broken := errors.New("disk gone")
	r := io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(broken))
	if _, err := p.matches(context.Background(), r, make([]byte, 4)); !errors.Is(err, broken) {
		t.Fatalf("read error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.matches(ctx, bytes.NewReader([]byte("abcdef")), make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
}
