// Package privacy is the privacy engine of runtime-adapter-v1: it sanitises
// a provider payload immediately before transport, following the contract's
// privacy rules, and fails closed when it cannot inspect everything.
//
// # Policy
//
// A Config names local providers (which receive every class, with no secret
// redaction) and the classes remote providers may receive. Provider names
// are compared trimmed (as JavaScript's String.prototype.trim trims) and
// lower-cased as toLowerCase lower-cases (U+0130 becomes "i" + U+0307 and
// a capital sigma ending a word becomes final sigma, unlike Go's
// strings.ToLower; nothing is case-folded as strings.EqualFold folds).
// The four classes are ordered normal < internal < sensitive < local-only.
//
// # Markers
//
// Text is classified with markers: [ds4:CLASS] opens and [/ds4:CLASS]
// closes (case-insensitive). A marker preceded by a backslash is escaped
// and stays literal text, whatever precedes the backslash. Each closed pair
// of the same class (shortest match) is a segment of the higher of its class
// and the default class; text around pairs has the default class; the
// marker tags are removed. Without a closed pair, an opening marker that is
// preceded only by whitespace classifies the rest of the text, and the
// whitespace around it is dropped. Other markers stay verbatim. A segment
// whose class the destination does not allow becomes
// "[DS4 <class> content excluded by privacy policy]" and counts one blocked
// block; empty text around pairs produces nothing, while an empty pair (or
// a leading marker with nothing after it) still produces a placeholder.
//
// Before a payload is walked, the marker structure of all its string values
// (in walk order) is checked, with the open markers on a stack. An opening
// marker while others are open (nesting) raises a floor to every open class
// and its own; a closing marker pops the top entry and, when nothing was
// open, the classes differ or the pair is split across two strings, raises
// the floor to both classes, the markers below staying open; every marker
// left open at the end raises it to its class. A member name, anywhere in
// the payload, raises the floor to the class of each opening marker in it
// that does not begin a closed pair of that name. The default class of the
// whole payload becomes at least the floor.
//
// # Secrets
//
// For a remote destination with RedactSecrets on, secrets are then
// redacted, pattern after pattern over the already-redacted text: PEM
// private-key blocks, sk-/sk-ant-/gh?_/AKIA credentials (word-bounded at
// both ends), Bearer tokens (the "Bearer " prefix is kept) and
// api_key/access_token/auth_token/client_secret/password assignments (name,
// separator and quotes kept; the closing quote must match the opening one).
// Each replacement counts one redaction.
//
// # Payload walk
//
// Object keys are compared lower-cased. Structural keys (api, id, model,
// name, role, stopReason, toolCallId, type and their snake-case forms) and
// content keys (content, messages, system, tools, text, metadata and the
// other names of the contract) steer the walk: below a content key the walk
// is in content context. A string is sanitised when it contains a marker,
// or when it is in content context and its own key (an array item's is its
// array's) is not structural. In content context a key that is neither
// structural nor content is sanitised too, and a key containing a marker
// always is; a key that collides with an earlier one after sanitising gets
// "_<index>" appended (its 0-based position in the object) until it is
// unique. A disabled Config returns the payload unchanged with zero counts,
// the destination, and the default class.
//
// # Go payloads
//
// SanitizePayload takes any value. A payload that is itself a byte slice
// (json.RawMessage, []byte, or a pointer to one) is parsed as one JSON
// document (strict RFC 8259, valid UTF-8): a Go program's byte payload is an
// encoded request body, and reading it as binary data would pass it through
// uninspected. Any other value is converted the
// way encoding/json encodes it (Marshaler and TextMarshaler, struct tags,
// omitempty and omitzero, ",string", embedded structs, map keys), by the
// engine's own reflection walk so that nothing escapes inspection. Objects
// are then walked in JavaScript property order: array-index names ("0",
// "17") first in ascending order, then the other names in document order.
// The result is written as JavaScript's JSON.stringify writes it; integers
// and floats that come from Go values keep their exact encoding/json
// literal.
//
// Fail closed: anything that cannot be fully inspected is an error wrapping
// ErrUninspectable and nothing is returned — a Marshaler that fails, panics
// or writes invalid JSON, a func, a channel, a complex number, NaN or an
// infinity, an unsupported map key type, a reference cycle through
// pointers, maps or slices, or nesting beyond the JSON layer's limit. Error
// messages name types, never payload text.
//
// # Differences from the TypeScript kit
//
//   - Walk order of Go maps: encoding/json sorts map keys, so a Go map is
//     walked in sorted-key order (then JavaScript property order), which is
//     deterministic; the floor and collision suffixes follow that order. A
//     json.RawMessage keeps its document order and behaves exactly like the
//     TypeScript kit.
//   - Keys named like Object.prototype members (toString, constructor, …)
//     are kept unchanged; the TypeScript kit renames them (toString_0) by
//     accident of JavaScript objects.
//   - Binary data: a Go []byte inside a payload value is binary data, not
//     text (a payload that is itself a byte slice is JSON, see above). In
//     content context, when the
//     effective default class is not allowed, it is replaced by empty data
//     and counts one blocked block; otherwise it is kept. It is written as
//     base64, as encoding/json writes []byte. A json.RawMessage is never
//     binary data: it is JSON. Binary data inside the output of a
//     json.Marshaler cannot be recognised and is treated as the JSON it is.
//   - Member names: the TypeScript kit's floor counts string values only,
//     so a member name holding an unclosed marker reaches a remote
//     provider verbatim. Here a member name anywhere in the payload, in
//     content context or not, raises the floor to the class of every
//     opening marker in it that does not begin a closed pair of the name
//     (unclosed, leading, or nested inside another pair), and the name is
//     sanitised. Payloads without such names sanitise exactly as in the
//     TypeScript kit.
//   - Stricter typing: classifications must be exactly one of the four
//     lower-case names, a provider name that is blank after trimming is an
//     error, and invalid JSON or invalid UTF-8 in a json.RawMessage is an
//     error rather than a best-effort parse.
package privacy
