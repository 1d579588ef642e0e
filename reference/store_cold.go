package reference

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
)

// coldFile is what coldRead found in a file.
type coldFile struct {
	header Header
	root   string
	x      heldContext
	msgs   []heldMessage
	size   int64
	held   heldBytes
	digest hash.Hash
}

// coldRead reads the file open as f (status fi) from its start and parses
// it under the reading rules, the way parseHistory does, with the same
// errors in the same order of precedence, but in blocks of whole lines of
// about readChunk bytes: each block is hashed and checked on one goroutine
// while its records are decoded on the others. Each block is read into a
// buffer of its own that nothing writes to again, and kept (coldFile.held):
// the decoded messages' strings are parts of it, so the file's bytes are
// in memory once. A last line without '\n' goes through settle.
func (s *store) coldRead(ctx context.Context, f *os.File, fi fs.FileInfo) (*coldFile, error) {
	const op = readOp
	var (
		out     coldFile
		digest  = sha256.New()
		lines   int // complete lines so far
		headErr error
		utfErr  error
		countOK = true
		recErr  error
		scratch []contract.Message // a block's messages before they are held
	)
	block := func(b []byte) error { // whole lines, ending in '\n'
		out.held = out.held.extended(keep(b))
		checked := make(chan bool, 1)
		go func() {
			digest.Write(b)
			checked <- utf8.Valid(b)
		}()
		n := bytes.Count(b, []byte{'\n'})
		body, first := b, lines+1
		if lines == 0 {
			nl := bytes.IndexByte(b, '\n')
			body, first = b[nl+1:], 2
			h, err := decodeHeader(b[:nl])
			if err != nil {
				headErr = parseError(op, s.path, 1, ErrHistoryCorrupt, err.Error(), nil)
			} else if contract.IsBlank(h.ProjectRoot) {
				headErr = parseError(op, s.path, 1, ErrHistoryCorrupt, "header project root does not resolve", nil)
			} else if root, rerr := resolveRoot(h.ProjectRoot); rerr != nil {
				headErr = rootError(op, s.path, rerr)
			} else {
				out.header, out.root, out.x = h, root, newHeldContext(&h)
			}
		}
		lines += n
		if lines-1 > s.limits.maxMessages {
			countOK = false
		}
		var err error
		if headErr == nil && utfErr == nil && countOK && recErr == nil {
			if out.msgs == nil {
				// Room for the messages the whole file holds, guessed
				// from this block's density.
				guess := float64(n) * float64(fi.Size()) / float64(len(b)) * 1.02
				out.msgs = make([]heldMessage, 0, min(int(guess)+16, s.limits.maxMessages+1))
			}
			if scratch, err = decodeRecords(ctx, op, s.path, body, first, scratch[:0], true); err == nil {
				for i := range scratch {
					out.msgs = append(out.msgs, out.x.hold(&scratch[i]))
				}
			}
		}
		if !<-checked && utfErr == nil {
			utfErr = parseError(op, s.path, 0, ErrHistoryCorrupt, "file is not valid UTF-8", nil)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			recErr = err
		}
		return nil
	}

	blockSize := int64(readChunk)
	if s.block > 0 {
		blockSize = int64(s.block)
	}
	buf := make([]byte, 0, min(fi.Size()+1, blockSize))
	var off int64 // the file offset of buf[0]
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) { // a line longer than the buffer
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if off+int64(len(buf)) > s.limits.maxBytes {
			return nil, parseError(op, s.path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
		}
		if i := bytes.LastIndexByte(buf[len(buf)-n:], '\n'); i >= 0 {
			end := len(buf) - n + i + 1
			if berr := block(buf[:end]); berr != nil {
				return nil, berr
			}
			// buf[:end] is kept; the rest of the line begins a new
			// buffer, as large as what the file still holds, up to a
			// block.
			off += int64(end)
			rest := buf[end:]
			room := max(0, fi.Size()-off-int64(len(rest)))
			buf = append(make([]byte, 0, int64(len(rest))+min(room, blockSize)+1), rest...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, parseError(op, s.path, 0, ErrHistoryCorrupt, "file cannot be read", err)
		}
	}
	if len(buf) > 0 {
		tail, err := s.settle(ctx, f, off, buf)
		if err != nil {
			return nil, err
		}
		if off+int64(len(tail)) > s.limits.maxBytes {
			return nil, parseError(op, s.path, 0, ErrHistoryTooLarge, "file exceeds the byte bound", nil)
		}
		if len(tail) > 0 && tail[len(tail)-1] == '\n' {
			if err := block(tail); err != nil {
				return nil, err
			}
			off += int64(len(tail))
			buf = nil
		} else {
			buf = tail
		}
	}
	out.size = off + int64(len(buf))
	switch {
	case out.size == 0:
		return nil, parseError(op, s.path, 0, ErrHistoryCorrupt, "file is empty", nil)
	case len(buf) > 0:
		return nil, parseError(op, s.path, 0, ErrHistoryCorrupt, "unterminated final record", nil)
	case utfErr != nil:
		return nil, utfErr
	case headErr != nil:
		return nil, headErr
	case !countOK:
		return nil, parseError(op, s.path, 0, ErrHistoryTooLarge, "file exceeds the message bound", nil)
	case recErr != nil:
		return nil, recErr
	}
	out.digest = digest
	return &out, nil
}
