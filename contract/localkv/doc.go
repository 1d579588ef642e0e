// Package localkv is the local KV reuse capability of runtime-adapter-v1
// (capability local-kv-reuse): deciding whether a completion may reuse a local
// runtime's prefix (KV) state, deriving the metadata-only key that names that
// state, the handle-free port through which a runtime serves it, and the
// controller that guarantees a full replay on every non-hit.
//
// # Eligibility
//
// DeriveEligibility checks an EligibilityInput in a fixed order and reports
// the first failure as a Reason: disabled, capability-unsupported,
// non-local-destination, invalid-provider, invalid-model,
// invalid-model-revision, invalid-runtime-identity, invalid-runtime-revision,
// invalid-capability-version, invalid-privacy-policy-version,
// invalid-prompt-prefix, invalid-token-count, invalid-options.
//
// An identifier (provider, model, model revision, runtime identity, runtime
// revision, privacy policy version, capability version) is 1–256 UTF-16 code
// units long (64 for the capability version), counted as JavaScript counts
// string length, so a character above U+FFFF counts 2. It must equal itself
// trimmed as JavaScript's String.prototype.trim trims (which removes U+FEFF
// but not U+0085, unlike Go's strings.TrimSpace) and contain no control
// character U+0000–U+001F or U+007F. A string that is not valid UTF-8 is never
// a valid identifier.
//
// # Key
//
// An eligible request gets a Key of lowercase hex SHA-256 digests, H below,
// over stable JSON, S below (see StableJSON):
//
//	prefixHash        = H(prompt prefix bytes)
//	providerModelHash = H(S({provider, model, modelRevision}))
//	optionsHash       = H(S({systemOptions, toolOptions}))
//	privacyHash       = H(S({destination, privacyPolicyVersion}))
//	runtimeHash       = H(S({runtimeId, runtimeRevision, capabilityVersion}))
//	fingerprint       = H(S({version, prefixHash, providerModelHash, optionsHash, privacyHash, runtimeHash}))
//
// with version local-kv-eligibility-v1. Stable JSON is JSON.stringify's output
// with object members sorted by their names' UTF-16 code units: no
// whitespace, no escaping of '<', '>', '&', U+2028 or U+2029, numbers written
// as JavaScript writes doubles and negative zero as 0. Keys are byte-identical
// to the TypeScript implementation's.
//
// # Options
//
// SystemOptions and ToolOptions are of type any, restricted to plain JSON
// values, so that every accepted value has exactly one JSON form and no two
// different values share a hash. A nil interface means the option is absent
// and is omitted from the hashed object; JSON null is JSONNull{} or
// json.RawMessage("null"), and hashes differently. Inside arrays and objects a
// nil element is null, as encoding/json reads it. Accepted:
//
//   - nil (nested), JSONNull, bool, string (valid UTF-8);
//   - float32 and float64 that are finite;
//   - every signed and unsigned integer type whose value a double holds
//     exactly (a Go integer that JSON would round is a different value);
//   - json.Number in strict JSON number syntax and json.RawMessage holding one
//     strict JSON document, both read as JSON.parse reads text (numbers
//     rounded to the nearest double);
//   - maps with string keys, slices and arrays of accepted values, including
//     map[string]any and []any, and named types of those kinds that have no
//     JSON or text marshaling method of their own.
//
// Everything else gives ReasonInvalidOptions, never a hash: functions,
// channels, complex numbers, binary data ([]byte and byte arrays), NaN and
// infinities, cycles, structs and pointers (a struct's JSON form depends on
// tags and methods the hash cannot see), types with their own MarshalJSON or
// MarshalText, invalid UTF-8, and raw JSON that is malformed or holds a lone
// surrogate escape such as "\ud800" (a Go string cannot carry it).
//
// An options type of json.RawMessage alone was considered: it says absent and
// null just as well, but a caller holding decoded Go values would have to
// marshal them first, and encoding/json would silently turn the values the
// contract rejects (binary data, structs) into JSON that then hashes.
//
// # Token counts
//
// Token counts are int64: integers in [0, 2^53−1], the prefix no larger than
// the context. A fractional count, which a JSON document may carry, cannot be
// expressed; a caller decoding one from JSON must treat it as
// ReasonInvalidTokenCount, which is what the contract requires of it.
//
// # Runtime port and controller
//
// A RuntimePort receives a ReuseRequest (key, provider, model, complete
// sanitised payload, token counts) and never a cache handle. A Controller
// counts every request, bypasses ineligible ones without calling the port,
// tries reuse, and replays the full payload on every miss, rejection,
// unavailability, port error or malformed answer. Its Diagnostics are numbers
// only (version local-kv-diagnostics-v1) and saturate at 2^53−1. Completed
// results carry contract.LocalKVMetadata. Errors never contain the prefix, the
// payload or the key.
package localkv
