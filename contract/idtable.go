package contract

import (
	"hash/maphash"
	"math/bits"
)

// idTable is an open-addressing hash set of strings held elsewhere (message
// ids, tool call ids), mapping each to the index of its first occurrence.
// A slot packs 32 bits of the string's hash with index+1 into one word, so a
// table for 100,000 ids is 2 MiB and probing rarely leaves the cache; the
// string itself is read only when the hashes agree.
type idTable struct {
	slots []uint64
	mask  uint64
	count int
	seed  maphash.Seed
}

func newIDTable(n int) *idTable {
	size := uint64(16)
	if n > 4 {
		size = 1 << bits.Len64(uint64(n)*2-1) // at most half full
	}
	return &idTable{slots: make([]uint64, size), mask: size - 1, seed: maphash.MakeSeed()}
}

// find returns the index stored for id, or -1. str maps a stored index to
// its string.
func (t *idTable) find(id string, str func(int32) string) int32 {
	h := maphash.String(t.seed, id)
	tag := h >> 32
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if s>>32 == tag {
			if x := int32(uint32(s)) - 1; str(x) == id {
				return x
			}
		}
	}
}

// insert stores index x for id unless id is present, and returns the index
// stored for id (x when it was inserted) and whether it was present. The
// table doubles when it gets half full.
func (t *idTable) insert(id string, x int32, str func(int32) string) (int32, bool) {
	if 2*(t.count+1) > len(t.slots) {
		t.grow(str)
	}
	h := maphash.String(t.seed, id)
	tag := h >> 32
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = tag<<32 | uint64(uint32(x+1))
			t.count++
			return x, false
		}
		if s>>32 == tag {
			if y := int32(uint32(s)) - 1; str(y) == id {
				return y, true
			}
		}
	}
}

func (t *idTable) grow(str func(int32) string) {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	t.mask = uint64(len(t.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		h := maphash.String(t.seed, str(int32(uint32(s))-1))
		i := h & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
}
