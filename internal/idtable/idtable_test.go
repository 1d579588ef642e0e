package idtable

import (
	"strconv"
	"testing"
)

func TestIDTableFindsAndDeduplicatesAcrossGrowth(t *testing.T) {
	var ids []string
	str := func(i int32) string { return ids[i] }
	tab := New(2)
	for i := 0; i < 5000; i++ {
		id := "id-" + strconv.Itoa(i%3000) // the last 2000 repeat earlier ids
		x, found := tab.Insert(id, int32(len(ids)), str)
		if want := i >= 3000; found != want {
			t.Fatalf("insert %q: found = %v, want %v", id, found, want)
		}
		if !found {
			ids = append(ids, id)
		} else if ids[x] != id {
			t.Fatalf("insert %q returned index of %q", id, ids[x])
		}
	}
	for i, id := range ids {
		if got := tab.Find(id, str); got != int32(i) {
			t.Fatalf("find(%q) = %d, want %d", id, got, i)
		}
	}
	if tab.Find("absent", str) != -1 || tab.Find("", str) != -1 {
		t.Fatal("find of an absent id must return -1")
	}
}
