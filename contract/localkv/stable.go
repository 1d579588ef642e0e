package localkv

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// StableJSON writes v as stable JSON: JSON.stringify's output with every
// object's members sorted by their names' UTF-16 code units. v must be a plain
// JSON value (see the package documentation); otherwise the error is
// ErrNotPlainJSON. A nil v is JSON null here: absence only exists for the
// options of EligibilityInput.
func StableJSON(v any) ([]byte, error) {
	if v == nil {
		v = JSONNull{}
	}
	val, err := plainJSON(v)
	if err != nil {
		return nil, err
	}
	return jsonw.AppendSorted(nil, val)
}

// StableHash returns the lowercase hex SHA-256 of StableJSON(v), the H(S(v))
// the eligibility key is built from.
func StableHash(v any) (string, error) {
	b, err := StableJSON(v)
	if err != nil {
		return "", err
	}
	return hexDigest(sha256.Sum256(b)), nil
}

// object builds a JSON object of string members from name, value pairs.
func object(pairs ...string) jsonw.Value {
	ms := make([]jsonw.Member, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		ms = append(ms, jsonw.Member{Name: pairs[i], Value: jsonw.Value{Kind: jsonw.String, Str: pairs[i+1]}})
	}
	return jsonw.Value{Kind: jsonw.Object, Members: ms}
}

// hasher computes H(S(v)) for several values, reusing one buffer.
type hasher struct {
	buf []byte
}

// hash returns H(S(v)) for a value known to be writable: values built by
// object and by plainJSON hold only finite numbers and valid kinds.
func (h *hasher) hash(v jsonw.Value) string {
	b, err := jsonw.AppendSorted(h.buf[:0], v)
	if err != nil {
		// Unreachable: plainJSON produces only finite numbers and known
		// kinds, and object only strings.
		panic("localkv: stable JSON of a checked value failed: " + err.Error())
	}
	h.buf = b
	return hexDigest(sha256.Sum256(b))
}

func hexDigest(sum [sha256.Size]byte) string {
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}
