package reference

import (
	"bytes"
	"context"
	"hash/maphash"
	"io"
	"unsafe"
)

// printChunk is the length of the chunks a prefixPrint remembers by their
// fingerprints.
const printChunk = 1 << 20

// fingerprint is a 128-bit keyed hash of a chunk: two 64-bit hashes of
// hash/maphash with seeds drawn at random when the process starts, so
// that nothing outside the process can choose bytes that collide.
type fingerprint [2]uint64

var printSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func printOf(b []byte) fingerprint {
	// maphash hashes a string with the runtime's own (AES-based, where
	// the processor has it) hash, several times faster than
	// maphash.Bytes; the string views b only for the call.
	s := unsafe.String(unsafe.SliceData(b), len(b))
	return fingerprint{maphash.Comparable(printSeeds[0], s), maphash.Comparable(printSeeds[1], s)}
}

// prefixPrint remembers a file's first bytes without keeping most of
// them: the fingerprint of every complete chunk of chunk bytes, and the
// bytes after the last complete one (fewer than chunk). Comparing a file
// with it reads the file once and costs one keyed hash per byte, in
// memory it costs 16 bytes per chunk plus the tail: a cache keeps the
// decoded history and not the file a second time.
type prefixPrint struct {
	chunk  int
	prints []fingerprint
	tail   []byte
}

// size is the number of bytes p remembers.
func (p prefixPrint) size() int64 { return int64(len(p.prints))*int64(p.chunk) + int64(len(p.tail)) }

// extended returns the print of p's bytes followed by more. p is left as
// it was; the result may use the spare capacity of p.prints beyond its
// length.
func (p prefixPrint) extended(more []byte) prefixPrint {
	n := p
	tail := p.tail[:len(p.tail):len(p.tail)] // appending copies
	if len(tail)+len(more) < p.chunk {
		n.tail = append(tail, more...)
		return n
	}
	first := p.chunk - len(tail)
	head := more[:first]
	if len(tail) > 0 {
		head = append(tail, head...)
	}
	n.prints = append(p.prints, printOf(head))
	rest := more[first:]
	for len(rest) >= p.chunk {
		n.prints = append(n.prints, printOf(rest[:p.chunk]))
		rest = rest[p.chunk:]
	}
	n.tail = bytes.Clone(rest)
	return n
}

// matches reports whether r holds exactly the bytes p remembers and
// nothing more: every complete chunk of r has the fingerprint p keeps for
// it, and the rest is p's tail, byte for byte. buf is a buffer of at least
// p.chunk bytes. It stops at the first difference or when ctx ends.
func (p prefixPrint) matches(ctx context.Context, r io.Reader, buf []byte) (bool, error) {
	read := func(n int) ([]byte, bool, error) {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		got, err := io.ReadFull(r, buf[:n])
		switch err {
		case nil:
			return buf[:got], true, nil
		case io.EOF, io.ErrUnexpectedEOF:
			return nil, false, nil // r holds less
		}
		return nil, false, err
	}
	for _, want := range p.prints {
		got, ok, err := read(p.chunk)
		if !ok || err != nil {
			return false, err
		}
		if printOf(got) != want {
			return false, nil
		}
	}
	got, ok, err := read(len(p.tail))
	if !ok || err != nil || !bytes.Equal(got, p.tail) {
		return false, err
	}
	_, more, err := read(1)
	return !more && err == nil, err
}
