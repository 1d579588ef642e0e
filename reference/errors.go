package reference

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/ds4context/adapterkit/contract"
)

// Sentinel errors. Every error this package returns for a history file wraps
// exactly one of them (test with errors.Is). Error texts name the operation,
// the file and the line, never message text or payloads.
var (
	// ErrHistoryMissing: the history file does not exist.
	ErrHistoryMissing = errors.New("reference: history file is missing")
	// ErrHistoryCorrupt: the file is not a regular file, is empty, is not
	// valid UTF-8, is unterminated, or has a malformed header or record.
	ErrHistoryCorrupt = errors.New("reference: history file is corrupt")
	// ErrHistoryTooLarge: the file, or the file after an append, exceeds the
	// byte bound or the message bound.
	ErrHistoryTooLarge = errors.New("reference: history exceeds its bounds")
	// ErrIdentityMismatch: the header's runtime id or project root is not
	// the adapter's, or an appended message belongs to another session or
	// runtime.
	ErrIdentityMismatch = errors.New("reference: history identity does not match")
	// ErrHistoryInvalid: the history parses but does not validate as a
	// snapshot; the error is a *ValidationError.
	ErrHistoryInvalid = errors.New("reference: history is invalid")
	// ErrExists: CreateHistory or CreateAndOpenHistory was asked to create
	// a file that already exists.
	ErrExists = errors.New("reference: history file already exists")
	// ErrInvalidMessage: a message given to CreateHistory or AppendMessage is
	// not structurally valid or cannot be encoded.
	ErrInvalidMessage = errors.New("reference: message is not structurally valid")
	// ErrInvalidHeader: CreateHistory was given a blank session id or a
	// project root that does not resolve.
	ErrInvalidHeader = errors.New("reference: history header is invalid")
	// ErrConcurrentWrite: the file was changed by something other than
	// the History appending to it — truncated, written, rewritten,
	// removed, renamed or replaced, before or while the record was
	// written (or replaced while a writer waited for its lock). The record
	// was not acknowledged, and was taken back, unless the error says it
	// stays; RecoverHistory says what an outside truncation took.
	ErrConcurrentWrite = errors.New("reference: history changed during append")
	// ErrInvalidOptions: New, or a history function, was given options it
	// cannot use (a negative bound, for example).
	ErrInvalidOptions = errors.New("reference: invalid adapter options")
	// ErrClosed: the adapter has been shut down, or the History closed.
	ErrClosed = errors.New("reference: adapter is closed")
	// ErrReadOnly: the history cannot be used as asked because its file
	// system is read-only (EROFS), or the permissions of the file, of a
	// folder on its path or of a folder on its header's project root do
	// not let this process write it or, for a reader, read it (EACCES,
	// EPERM). Nothing was written; a History whose append fails with it
	// appends again once the permissions are back.
	ErrReadOnly = errors.New("reference: history cannot be written")
	// ErrWriteFailed: writing, syncing or truncating the file failed for
	// another reason the error names (ENOSPC, EDQUOT, EFBIG, EIO, …). An
	// append that fails takes its own bytes back before it reports, so the
	// file is as it was, unless the error says the bytes could not be
	// taken back (then RecoverHistory repairs the file).
	ErrWriteFailed = errors.New("reference: history write failed")
)

// HistoryError describes a failure to read, create or append to a history
// file. It unwraps to one of the package's sentinels and, when there is
// one, to the underlying cause (an *os.PathError, a *contract.DecodeError, …).
type HistoryError struct {
	Op     string // "read", "open", "create", "append" or "recover"
	Path   string // the history file
	Line   int    // 1-based line of the offending record, 0 when not about a line
	Reason string // a fixed description, never file content
	Kind   error  // the sentinel
	Cause  error  // optional underlying error
}

// Error names the operation, the file, the line and the reason.
func (e *HistoryError) Error() string {
	var b strings.Builder
	b.WriteString("reference: ")
	b.WriteString(e.Op)
	b.WriteString(" history ")
	b.WriteString(strconv.Quote(e.Path))
	if e.Line > 0 {
		b.WriteString(": line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	// Of the cause, only what the operating system said is rendered (for
	// example "no space left on device"): its text is fixed and carries no
	// file content. Other causes are not: a decode error's text may quote
	// a value or an unknown member name from the file. They stay reachable
	// through errors.As for callers that decide to look.
	var errno syscall.Errno
	if errors.As(e.Cause, &errno) {
		b.WriteString(": ")
		b.WriteString(errno.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause.
func (e *HistoryError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

// ValidationError is returned when a history, or a history plus an appended
// message, does not validate as a snapshot. Its text lists the distinct
// issue codes in first-seen order; it unwraps to ErrHistoryInvalid.
type ValidationError struct {
	Issues []contract.ValidationIssue
}

// Error is "Reference history is invalid: " and the distinct codes.
func (e *ValidationError) Error() string {
	return "Reference history is invalid: " + strings.Join(distinctCodes(e.Issues), ", ")
}

// Unwrap returns ErrHistoryInvalid.
func (e *ValidationError) Unwrap() error { return ErrHistoryInvalid }

// Codes returns the distinct issue codes in first-seen order.
func (e *ValidationError) Codes() []string { return distinctCodes(e.Issues) }

// writeError is the error of a failed write, sync, truncation or creation:
// ErrReadOnly when the operating system says the file system is read-only
// or the file may not be written, else kind (ErrWriteFailed when nil).
func writeError(op, path, reason string, cause error) error {
	return fsError(op, path, reason, ErrWriteFailed, cause)
}

func fsError(op, path, reason string, kind, cause error) error {
	if errors.Is(cause, syscall.EROFS) || errors.Is(cause, syscall.EACCES) || errors.Is(cause, syscall.EPERM) {
		kind = ErrReadOnly
	}
	return parseError(op, path, 0, kind, reason, cause)
}

// rootError is the error of a header whose project root does not resolve
// (cause): ErrReadOnly when a folder on its path may not be searched,
// else ErrHistoryCorrupt. Only what the operating system said is kept of
// the cause: its path is the header's content.
func rootError(op, path string, cause error) error {
	var errno syscall.Errno
	if errors.Is(cause, fs.ErrPermission) && errors.As(cause, &errno) {
		return parseError(op, path, 1, ErrReadOnly, "header project root may not be searched", errno)
	}
	return parseError(op, path, 1, ErrHistoryCorrupt, "header project root does not resolve", nil)
}

// noRoom reports whether err says there is no room to write: the file
// system is full (ENOSPC), a quota is used up (EDQUOT) or the file size
// limit is reached (EFBIG).
func noRoom(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

func distinctCodes(issues []contract.ValidationIssue) []string {
	var out []string
	seen := map[string]bool{}
	for _, is := range issues {
		if !seen[is.Code] {
			seen[is.Code] = true
			out = append(out, is.Code)
		}
	}
	return out
}
