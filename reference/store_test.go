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

// samePrefix agrees with comparing the concatenated chunks with everything
// the reader holds, whatever the chunk sizes (empty ones included), the
// buffer size and the kind of difference.
func TestPropertySamePrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		chunks := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 9), 0, 6).Draw(t, "chunks")
		want := bytes.Join(chunks, nil)
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
		buf := make([]byte, rapid.IntRange(1, 12).Draw(t, "buf"))
		var r io.Reader = bytes.NewReader(got)
		if rapid.Bool().Draw(t, "one byte reads") {
			r = iotest.OneByteReader(r)
		}
		same, err := samePrefix(context.Background(), r, chunks, buf)
		if err != nil {
			t.Fatal(err)
		}
		if same != bytes.Equal(got, want) {
			t.Fatalf("samePrefix %v for %q against %q", same, got, want)
		}
	})
}

func TestSamePrefixStopsOnReadErrorsAndContexts(t *testing.T) {
	chunks := [][]byte{[]byte("abc"), []byte("def")}
	broken := errors.New("disk gone")
	r := io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(broken))
	if _, err := samePrefix(context.Background(), r, chunks, make([]byte, 4)); !errors.Is(err, broken) {
		t.Fatalf("read error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := samePrefix(ctx, bytes.NewReader([]byte("abcdef")), chunks, make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
}
