package jsonw

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// ErrNonFinite is returned when a NaN or infinite number is written: JSON has
// no representation for it.
var ErrNonFinite = errors.New("jsonw: non-finite number")

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal exactly as JavaScript's
// JSON.stringify writes it: '"' and '\\' escaped, the control characters
// U+0000–U+001F escaped (\b \t \n \f \r in short form, others as \u00xx), and
// everything else — including '<', '>', '&', U+2028 and U+2029 — written
// verbatim. A lone surrogate held as WTF-8 (as the scanner reads "\ud800") is
// written as its \u escape, as JSON.stringify writes a lone surrogate; other
// bytes that are not valid UTF-8 are written as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i += plainLen(s[i:])
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if u := surrogateAt(s, i); u != 0 {
				dst = append(dst, '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
				i += 3
			} else {
				dst = append(dst, "\ufffd"...)
				i++
			}
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendNumber appends f as JavaScript's Number.prototype.toString writes it:
// the shortest representation that round-trips, plain decimal notation for
// magnitudes in [1e-6, 1e21), exponent notation otherwise ("1e+21", "1e-7"),
// and negative zero as "0". NaN and infinities are rejected with ErrNonFinite.
func AppendNumber(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrNonFinite
	}
	if f == 0 {
		return append(dst, '0'), nil
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Go writes e-07 / e+21; JavaScript writes e-7 / e+21.
		n := len(dst)
		if n-start >= 4 && dst[n-4] == 'e' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}
