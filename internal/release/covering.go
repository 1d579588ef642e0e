package release

import (
	"go/types"
	"runtime"
	"slices"
	"strconv"
)

// CoveringPlatforms returns the platforms of ps a quick look at the
// boundary loads: the host's (when in ps) and as few more as cover every
// GOOS and every pointer size of ps, in the order of ps. A file some
// platform's build leaves out is one a chosen platform's build leaves out
// too (each GOOS is chosen); each platform costs a type-check of the
// standard library the boundary packages import.
func CoveringPlatforms(ps []Platform) []Platform {
	word := func(p Platform) string {
		if sizes := types.SizesFor("gc", p.GOARCH); sizes != nil {
			return strconv.FormatInt(sizes.Sizeof(types.Typ[types.Uintptr]), 10)
		}
		return p.GOARCH
	}
	goos, words := map[string]bool{}, map[string]bool{}
	chosen := map[Platform]bool{}
	take := func(p Platform) {
		chosen[p], goos[p.GOOS], words[word(p)] = true, true, true
	}
	if host := (Platform{runtime.GOOS, runtime.GOARCH}); slices.Contains(ps, host) {
		take(host)
	}
	for {
		best, gain := Platform{}, 0
		for _, p := range ps {
			g := 0
			if !goos[p.GOOS] {
				g++
			}
			if !words[word(p)] {
				g++
			}
			if g > gain {
				best, gain = p, g
			}
		}
		if gain == 0 {
			break
		}
		take(best)
	}
	return slices.DeleteFunc(slices.Clone(ps), func(p Platform) bool { return !chosen[p] })
}
