package contract

import "github.com/ds4context/adapterkit/internal/jsstring"

// IsBlank reports whether s is empty once trimmed as JavaScript's
// String.prototype.trim trims: of TAB, LF, VT, FF, CR, space, NBSP, U+FEFF,
// the line and paragraph separators and the Unicode space separators (Zs),
// but not U+0085. The contract calls such an identifier missing.
func IsBlank(s string) bool { return jsstring.IsBlank(s) }
