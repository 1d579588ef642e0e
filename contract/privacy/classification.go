package privacy

import (
	"github.com/ds4context/adapterkit/contract"
)

// Classification is a privacy class. The four classes are ordered from
// lowest to highest: Normal < Internal < Sensitive < LocalOnly.
type Classification string

// The four privacy classes, lowest first.
const (
	Normal    Classification = "normal"
	Internal  Classification = "internal"
	Sensitive Classification = "sensitive"
	LocalOnly Classification = "local-only"
)

var classOrder = [...]Classification{Normal, Internal, Sensitive, LocalOnly}

// Classifications returns the four classes from lowest to highest. The slice
// is a fresh copy.
func Classifications() []Classification { return append([]Classification(nil), classOrder[:]...) }

// Rank returns the position of c in the order (0 for Normal up to 3 for
// LocalOnly), or -1 when c is not one of the four classes.
func (c Classification) Rank() int {
	switch c {
	case Normal:
		return 0
	case Internal:
		return 1
	case Sensitive:
		return 2
	case LocalOnly:
		return 3
	}
	return -1
}

// Valid reports whether c is one of the four classes (exact, lower-case).
func (c Classification) Valid() bool { return c.Rank() >= 0 }

// AtLeast reports whether c is as high as o or higher.
func (c Classification) AtLeast(o Classification) bool { return c.Rank() >= o.Rank() }

// Max returns the higher of two classes.
func Max(a, b Classification) Classification {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Destination says whether a provider runs on this machine or remotely. It
// is the contract's Destination type.
type Destination = contract.Destination

// The two destinations.
const (
	Local  Destination = contract.DestinationLocal
	Remote Destination = contract.DestinationRemote
)
