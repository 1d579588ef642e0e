package conformance

import (
	"bytes"
	"encoding/json"
)

// One rule compares payloads and outputs in every check and in the model:
// as JSON values, never as bytes. SPEC gives the bytes of a payload no
// meaning (the transport receives "the sanitised payload", a JSON value),
// so an adapter may re-encode it — re-indent it, reorder nothing, escape
// differently — and still keep the contract. Object members compare as
// sets of names (JSON objects are unordered), numbers as JavaScript does
// (IEEE doubles), strings by their decoded text.

// sameJSON reports whether a and b hold the same JSON value. Text that is
// not JSON equals nothing, not even itself.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		// The same text is the same value (when it is JSON at all): a
		// payload or output passed through unchanged is not decoded.
		return json.Valid(a)
	}
	ka := canonicalJSON(a)
	return ka != "" && ka == canonicalJSON(b)
}

// sameJSONText is sameJSON for a JSON text given as a string.
func sameJSONText(a []byte, b string) bool { return sameJSON(a, []byte(b)) }
