package errcode

import (
	"errors"
	"strings"
)

// Error is an error of a Kind whose message is written for the client and
// names the field it is about. Cause, when set, is the lower error: kept for
// errors.Is and the log, never shown to the client.
type Error struct {
	// Kind is normally one of this package's kinds (or one derived with
	// Sub); any error is accepted, and one that is no *Kind counts as
	// ErrInternal.
	Kind  error
	Msg   string
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Msg + ": " + e.Cause.Error()
	}
	return e.Msg
}

// Unwrap lets errors.Is find both the kind and the cause; the kind comes
// first, so errors.As finds it before any kind the cause carries.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// ValidationError is the contract's 400 with validation_errors. Problems
// has one entry per offending field, each starting with the field's JSON
// path ("sample_rate must be one of 8000, 16000, 32000, 44100, 48000").
// Cause, when set, is a sentinel of the package that found the problem
// (webrtc.ErrBadOffer), for errors.Is.
type ValidationError struct {
	Problems []string
	Cause    error
}

func (e *ValidationError) Error() string {
	return "invalid request: " + strings.Join(e.Problems, "; ")
}

// Unwrap returns Cause.
func (e *ValidationError) Unwrap() error { return e.Cause }

// Status maps err to the contract's HTTP status: 200 for nil, 400 for a
// *ValidationError, the status of the outermost Kind err wraps, else 500.
func Status(err error) int {
	if err == nil {
		return 200
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return 400
	}
	var k *Kind
	if errors.As(err, &k) {
		return k.Status()
	}
	return 500
}

// Message is the client-facing message of err: the Msg of the outermost
// *Error when its kind is Shown (what went wrong, with which field, never
// the cause: causes carry paths, addresses and remote answers, and go to the
// log); otherwise the message of the kind err wraps; "internal error" for
// an error of no kind.
func Message(err error) string {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ErrInvalid.message
	}
	var e *Error
	if errors.As(err, &e) {
		var k *Kind
		if errors.As(e.Kind, &k) && k.Shown() {
			return e.Msg
		}
	}
	var k *Kind
	if errors.As(err, &k) {
		return k.clientMessage()
	}
	return ErrInternal.message
}
