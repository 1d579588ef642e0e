package contract

import "github.com/ds4context/adapterkit/internal/jsstring"

// The external tests of this package check negotiation against its own
// rules, which are not part of the public surface.
var (
	ValidCapabilityVersion = validCapabilityVersion
	NormalizeReason        = normalizeReason
	TrimJS                 = jsstring.Trim
	UTF16Len               = jsstring.Len
)
