package reference

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

// heldOf returns the held bytes of pieces, one block each.
func heldOf(pieces ...string) heldBytes {
	var h heldBytes
	for _, p := range pieces {
		h = h.extended(p)
	}
	return h
}

// Held bytes built in blocks of any sizes (empty ones included) match
// exactly the bytes they were given: not one byte changed, missing or
// added, whatever the reads and the buffer look like.
func TestPropertyHeldBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pieces []string
		for _, p := range rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 9), 0, 6).Draw(t, "pieces") {
			pieces = append(pieces, string(p))
		}
		want := []byte(strings.Join(pieces, ""))
		h := heldOf(pieces...)
		if h.size != int64(len(want)) {
			t.Fatalf("held %d bytes, want %d", h.size, len(want))
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
		same, err := h.matches(context.Background(), r, make([]byte, rapid.IntRange(1, 8).Draw(t, "buffer")))
		if err != nil {
			t.Fatal(err)
		}
		if same != bytes.Equal(got, want) {
			t.Fatalf("matches %v for %q against %q", same, got, want)
		}
	})
}

// Extending held bytes leaves the ones it extends as they were.
func TestHeldBytesExtensionKeepsTheOriginal(t *testing.T) {
	h := heldOf("abc", "def")
	next := h.extended("ghijkl")
	for _, c := range []struct {
		h    heldBytes
		data string
	}{{h, "abcdef"}, {next, "abcdefghijkl"}, {heldOf("abcdefghijkl"), "abcdefghijkl"}} {
		if same, err := c.h.matches(context.Background(), strings.NewReader(c.data), make([]byte, 4)); !same || err != nil {
			t.Fatalf("held bytes of %q do not match them: %v", c.data, err)
		}
	}
	if same, _ := h.matches(context.Background(), strings.NewReader("abcdefghijkl"), make([]byte, 4)); same {
		t.Fatal("held bytes match a longer file")
	}
}

func TestHeldBytesStopOnReadErrorsAndContexts(t *testing.T) {
	h := heldOf("abcdef")
	broken := errors.New("disk gone")
	r := io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(broken))
	if _, err := h.matches(context.Background(), r, make([]byte, 4)); !errors.Is(err, broken) {
		t.Fatalf("read error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.matches(ctx, bytes.NewReader([]byte("abcdef")), make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
}
