package privacy

import (
	"strings"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// A marker is one unescaped [ds4:CLASS] or [/ds4:CLASS] tag in a string.
type marker struct {
	start, end int // byte offsets of '[' and one past ']'
	class      Classification
	closing    bool
}

// markerAt parses a marker starting at s[i] == '['. Tags and class names
// are matched ASCII case-insensitively.
func markerAt(s string, i int) (marker, bool) {
	j := i + 1
	closing := false
	if j < len(s) && s[j] == '/' {
		closing = true
		j++
	}
	if !hasPrefixFoldASCII(s, j, "ds4:") {
		return marker{}, false
	}
	j += 4
	for _, c := range classOrder {
		name := string(c)
		if hasPrefixFoldASCII(s, j, name) && j+len(name) < len(s) && s[j+len(name)] == ']' {
			return marker{start: i, end: j + len(name) + 1, class: c, closing: closing}, true
		}
	}
	return marker{}, false
}

// findMarkers appends the unescaped markers of s to dst in order. A marker
// preceded by a backslash is escaped, whatever precedes that backslash.
func findMarkers(dst []marker, s string) []marker {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '[')
		if k < 0 {
			return dst
		}
		i += k
		if i > 0 && s[i-1] == '\\' {
			i++
			continue
		}
		if m, ok := markerAt(s, i); ok {
			dst = append(dst, m)
			i = m.end
			continue
		}
		i++
	}
}

// A pair is a closed [ds4:C]…[/ds4:C] segment: open and close are indexes
// into the string's marker list.
type pair struct{ open, close marker }

// findPairs finds the closed pairs of a string as a left-to-right search
// for "an open marker, then the nearest following close marker of the same
// class" does: the search resumes after each pair, so markers inside a pair
// are part of its content.
//
// scratch is working space the caller keeps between calls.
func findPairs(dst []pair, ms []marker, scratch *[]int32) []pair {
	if len(ms) < 2 {
		return dst
	}
	// Walk backwards, remembering for each marker the nearest close of
	// each class after it.
	need := len(ms) * len(classOrder)
	if cap(*scratch) < need {
		*scratch = make([]int32, need)
	}
	next := (*scratch)[:need]
	near := [len(classOrder)]int32{-1, -1, -1, -1}
	for i := len(ms) - 1; i >= 0; i-- {
		copy(next[i*len(classOrder):], near[:])
		if ms[i].closing {
			near[ms[i].class.Rank()] = int32(i)
		}
	}
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		if m.closing {
			continue
		}
		j := next[i*len(classOrder)+m.class.Rank()]
		if j < 0 {
			continue
		}
		dst = append(dst, pair{open: m, close: ms[j]})
		i = int(j)
	}
	return dst
}

// leadingMarker reports an opening marker preceded only by whitespace, and
// the text after it with the whitespace that follows it dropped.
func leadingMarker(s string, ms []marker) (marker, string, bool) {
	if len(ms) == 0 || ms[0].closing || jsstring.TrimLeft(s[:ms[0].start]) != "" {
		return marker{}, "", false
	}
	return ms[0], jsstring.TrimLeft(s[ms[0].end:]), true
}
