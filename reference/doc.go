// Package reference is the reference runtime adapter of runtime-adapter-v1:
// a callback runtime whose canonical history is an append-only JSONL file,
// and whose completions go through a transport the runtime injects.
//
// # File format
//
// A history file is UTF-8 text made of lines, each ending in "\n". The
// first line is the header:
//
//	{"type":"ds4-runtime-session-v1","runtimeId":"…","sessionId":"…","projectRoot":"…"}
//
// where projectRoot is the canonical (absolute, symlink-free) project root.
// Every further line is one message record:
//
//	{"type":"message","message":{…canonical message…}}
//
// Messages are written with contract.AppendMessageJSON: contract fields in
// contract order, unknown fields kept, strings escaped exactly as
// JavaScript's JSON.stringify escapes them (no HTML or U+2028 escaping), so
// files written here and by the TypeScript kit are byte-identical.
// CreateHistory writes a new file (a synced temporary file linked to the
// final name, which must not exist; mode 0600, parent folders 0700). A
// History (OpenHistory, CreateAndOpenHistory) is the file's one writer:
// it holds the file's writer lock, reads the file once, and appends each
// message as one synced line in constant time; AppendMessage is the
// one-shot form (through a History the process holds, when there is one).
// Writers lock the file itself, so one writer holds it whatever name or
// link it was opened through; readers take no lock and never hold up a
// writer. Nothing in this package rewrites a history file: an append that
// fails takes back its own unacknowledged bytes, and RecoverHistory
// truncates a torn last record, after moving it aside (or, with no room
// for that, when it is the start of one of this package's records).
// Errors name what the operating system said (ErrWriteFailed,
// ErrReadOnly). See docs/reference-history.md.
//
// # Reading and bounds
//
// A file is read whole or not at all. It must be a regular file, non-empty,
// at most MaxBytes long (default 64 MiB), end in "\n", be valid UTF-8, start
// with a valid header whose projectRoot resolves, hold at most MaxMessages
// records (default 100,000), and every record line must be a valid message
// record (a blank line is not; a trailing "\r" is tolerated as JSON
// whitespace). Any failure rejects the file with an error wrapping one of
// the sentinels (ErrHistoryMissing, ErrHistoryCorrupt, ErrHistoryTooLarge,
// …); error texts name the file, the line and a fixed reason, never file
// content.
//
// A snapshot then checks the header against the adapter (runtime id, and
// header root resolving to the trusted root: ErrIdentityMismatch) and
// validates the history as a snapshot (a *ValidationError wrapping
// ErrHistoryInvalid). Each failure also records its diagnostic. The
// revision of a snapshot is the SHA-256 (lowercase hex) of the file's bytes.
//
// # Cache
//
// The adapter caches the last valid history, with the file's bytes it was
// read from and the SHA-256 state after them; the cached messages' strings
// are parts of those bytes, so the bytes are in memory once, and each
// message is held in a third of a contract.Message. Every snapshot still reads
// the whole file and compares it with those bytes — an unchanged file is
// proven unchanged byte for byte, never by its size or modification time —
// and hashes only the bytes that follow them, so the revision is always the
// SHA-256 of the file as read now. The cache saves that hashing and all
// JSON decoding and validation: an unchanged file is served from the
// cache, a file that grew with its old bytes intact (an append) has only its
// new lines decoded, and a file changed anywhere else is parsed again from
// scratch. New lines are validated against an index of known message and
// tool call ids (only the tool atomic groups they touch are derived again),
// and a cold read validates the same way, as an append to an empty history;
// any issue falls back to contract.ValidateHistorySnapshot on the whole
// history, so errors list exactly the issues the full validator reports.
// The header identity is checked on every snapshot, cached or not (a project
// root reached through a symlink is resolved again each time). Callers
// always get a deep copy they may modify freely.
//
// # Local KV reuse
//
// A host whose local inference runtime keeps reusable prefix (KV) state sets
// Options.LocalKV with a localkv.RuntimePort. The adapter then declares
// local-kv-reuse supported with the capability version (default
// local-kv-runtime-port-v1), whether or not the path is enabled. Only when
// LocalKVOptions.Enabled is set and the sanitised destination is local does
// a completion take the path: Prepare reads the prefix, options and token
// counts from a copy of the sanitised payload, and a localkv.Controller
// derives the eligibility key (with the adapter's runtime id, the request's
// provider and model, the configured revisions and the privacy policy
// version), tries reuse and fully replays every non-hit. A completion served
// this way carries LocalKV metadata (mode, token counts, latency).
//
// Nothing found by Prepare, and an ineligible request, go through the
// ordinary transport without a diagnostic. Any failure of the path — a
// failed or malformed full replay, a panic in Prepare or the port — records
// local-kv-replay-failed (a warning about capability local-kv-reuse) and sends the
// full sanitised payload through the transport, whose own failure then
// falls back as usual. Shutdown calls the port's shutdown once, recording
// local-kv-shutdown-failed before adapter-closed if it fails.
//
// The path never reads or writes the history file, and nothing it reports
// (diagnostics, metadata, errors, LocalKVDiagnostics) contains the prefix,
// the payload, the key or a handle: the port is given the key and the
// payload, and returns only outputs and counts.
//
// # Deviations from the TypeScript kit
//
//   - A file that is not valid UTF-8 is rejected as corrupt; the TypeScript
//     kit replaces invalid bytes and hashes the replaced text.
//   - AppendMessage refuses an append that would take the file past either
//     bound; the TypeScript kit appends and lets the next read fail.
//   - Writers lock the file (one writer at a time, readers never see a
//     record half written) and fail with ErrConcurrentWrite when the file
//     was changed by anything else.
//   - Snapshots are cached as described above; the TypeScript kit decodes
//     and validates the whole file on every snapshot.
//   - Tool atomic groups are ordered by byte comparison of their first
//     message id (see package contract), not by the host locale.
package reference
