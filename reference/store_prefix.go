package reference

import (
	"context"
	"io"
	"unsafe"
)

// compareChunk is how much of a file a prefix comparison reads at a time.
const compareChunk = 1 << 20

// heldBytes is a file's first bytes as a cache read them, kept to prove
// byte for byte that a later read of the file begins with them: blocks of
// whole lines, each an immutable string, never empty. The cached messages
// are decoded with contract.DecodeMessageString from these same blocks, so
// their strings are parts of them and the bytes are in memory once, not
// once as the file and once as the decoded text.
type heldBytes struct {
	blocks []string
	size   int64
}

// extended returns h followed by block. h is left as it was; the result
// may use the spare capacity of h.blocks beyond its length, so only the
// newest of a line of extensions may be extended.
func (h heldBytes) extended(block string) heldBytes {
	if block == "" {
		return h
	}
	return heldBytes{blocks: append(h.blocks, block), size: h.size + int64(len(block))}
}

// keep returns b as a string without copying it. The caller gives b up:
// nothing may write to its bytes again.
func keep(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// matches reports whether r holds exactly the bytes h holds and nothing
// more, comparing every byte. buf is the buffer r is read into (any
// length above 0). It stops at the first difference or when ctx ends.
func (h heldBytes) matches(ctx context.Context, r io.Reader, buf []byte) (bool, error) {
	bi, bo := 0, 0 // the next byte to compare is h.blocks[bi][bo]
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n, err := io.ReadFull(r, buf)
		for got := buf[:n]; len(got) > 0; {
			if bi == len(h.blocks) {
				return false, nil // r holds more
			}
			want := h.blocks[bi][bo:]
			k := min(len(got), len(want))
			if string(got[:k]) != want[:k] {
				return false, nil
			}
			got = got[k:]
			if bo += k; bo == len(h.blocks[bi]) {
				bi, bo = bi+1, 0
			}
		}
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return bi == len(h.blocks), nil
		default:
			return false, err
		}
	}
}
