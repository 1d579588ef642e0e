package bridge

import (
	"errors"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/contract"
)

// Errors the bridge returns; test them with errors.Is. Every error that ends
// a connection also wraps ErrUnavailable.
var (
	// ErrUnavailable: the connection to the adapter is broken or closed;
	// no further call can succeed.
	ErrUnavailable = errors.New("bridge: runtime adapter is unavailable")
	// ErrTimeout: a call got no response within the call timeout; the
	// child was killed.
	ErrTimeout = errors.New("bridge: call timed out")
	// ErrProtocol: the peer wrote a line that is not a protocol message
	// (invalid JSON, a response to no pending request, a malformed result).
	ErrProtocol = errors.New("bridge: protocol violation")
	// ErrLineTooLong: a line exceeded the configured bound.
	ErrLineTooLong = errors.New("bridge: line exceeds the size bound")
	// ErrHeldTooLarge: the messages held at once would pass the bound on
	// their bytes (Options.MaxHeldBytes). An answer that would pass it
	// fails its call only; a request that would pass it breaks the
	// connection.
	ErrHeldTooLarge = errors.New("bridge: messages held at once exceed the size bound")
	// ErrExited: the adapter process exited or closed its output.
	ErrExited = errors.New("bridge: runtime adapter process exited")
	// ErrUnsupportedVersion: the peer does not speak ProtocolVersion.
	ErrUnsupportedVersion = errors.New("bridge: unsupported protocol version")
	// ErrUninspectable: a payload could not be encoded as JSON, so it was
	// never sent; enforcement failed closed.
	ErrUninspectable = errors.New("bridge: payload cannot be inspected")
)

// RemoteError is an error response from the peer: a code from the
// protocol's list and a metadata-only message.
type RemoteError struct {
	// Method is the method that failed.
	Method string
	// Code and Message are the response's error member.
	Code, Message string
	// Family is the error member's family (an unrepresentable error).
	Family string
}

// Error returns "bridge: METHOD: CODE: MESSAGE".
func (e *RemoteError) Error() string {
	s := "bridge: " + e.Method + ": " + e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes an unsupported-version response match ErrUnsupportedVersion, and
// an unknown-method response contract.ErrNotImplemented.
func (e *RemoteError) Is(target error) bool {
	return target == ErrUnsupportedVersion && e.Code == CodeUnsupportedVersion ||
		target == contract.ErrNotImplemented && e.Code == CodeUnknownMethod
}

// maxMessage bounds the length of an error message the bridge forwards.
const maxMessage = 512

// clip cuts s to maxMessage bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// brokenError is the error every call returns once a connection broke: it
// wraps ErrUnavailable and the cause.
type brokenError struct{ cause error }

func (e *brokenError) Error() string   { return ErrUnavailable.Error() + ": " + e.cause.Error() }
func (e *brokenError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }
