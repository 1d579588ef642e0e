// Package idtable is a compact hash index of strings held elsewhere: the
// ids of a history's messages or tool calls, each mapped to the index of
// its first occurrence in the caller's own list, in 4 to 8 bytes per id.
package idtable

import (
	"hash/maphash"
	"math/bits"
)

// Table is an open-addressing hash set of strings held elsewhere (message
// ids, tool call ids), mapping each to the index of its first occurrence.
// A slot is one 32-bit word: index+1 in the low bits (as many as the table
// needs) and the top bits of the string's hash above them, so a table for
// 100,000 ids is 1 MiB, probing rarely leaves the cache, and the string
// itself is read only when the hash bits agree.
type Table struct {
	slots     []uint32
	mask      uint64
	indexBits uint // low bits of a slot holding index+1
	count     int
	seed      maphash.Seed
}

// New returns a table sized for n ids (it grows as needed).
func New(n int) *Table {
	size := 16
	if n > 4 {
		size = 1 << bits.Len(uint(n)*2-1) // at most half full
	}
	t := &Table{seed: maphash.MakeSeed()}
	t.resize(size)
	return t
}

func (t *Table) resize(size int) {
	t.slots = make([]uint32, size)
	t.mask = uint64(size - 1)
	// index+1 ≤ count ≤ size/2, so log2(size) bits hold it.
	t.indexBits = uint(bits.Len(uint(size))) - 1
}

// split returns a string's home slot and its tag: the hash bits a slot
// keeps above the index.
func (t *Table) split(id string) (home uint64, tag uint32) {
	h := maphash.String(t.seed, id)
	return h & t.mask, uint32(h>>32) >> t.indexBits << t.indexBits
}

func (t *Table) tagMask() uint32 { return ^uint32(0) >> t.indexBits << t.indexBits }

// Find returns the index stored for id, or -1. str maps a stored index to
// its string.
func (t *Table) Find(id string, str func(int32) string) int32 {
	i, tag := t.split(id)
	tm := t.tagMask()
	for ; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s&tm == tag {
			if x := int32(s&^tm) - 1; str(x) == id {
				return x
			}
		}
	}
}

// Insert stores index x for id unless id is present, and returns the index
// stored for id (x when it was inserted) and whether it was present. The
// table doubles when it gets half full.
func (t *Table) Insert(id string, x int32, str func(int32) string) (int32, bool) {
	if 2*(t.count+1) > len(t.slots) {
		t.grow(str)
	}
	i, tag := t.split(id)
	tm := t.tagMask()
	for ; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = tag | uint32(x+1)
			t.count++
			return x, false
		}
		if s&tm == tag {
			if y := int32(s&^tm) - 1; str(y) == id {
				return y, true
			}
		}
	}
}

func (t *Table) grow(str func(int32) string) {
	old, oldMask := t.slots, t.tagMask()
	t.resize(2 * len(old))
	for _, s := range old {
		if s == 0 {
			continue
		}
		x := int32(s&^oldMask) - 1
		i, tag := t.split(str(x))
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = tag | uint32(x+1)
	}
}
