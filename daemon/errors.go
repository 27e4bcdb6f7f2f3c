package daemon

import (
	"errors"
	"fmt"
	"strings"

	"github.com/earshot-dev/earshot/daemon/params"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/store"
)

// The contract-facing errors of the job service. Every door maps them to
// its own replies through Status (HTTP) or its own one mapping function.
var (
	// ErrNotFound is returned when a job or file does not exist or was deleted.
	ErrNotFound = store.ErrNotFound
	// ErrNotOwner is returned when a job or file belongs to another account.
	ErrNotOwner = errors.New("daemon: not the owner")
	// ErrUnauthorized is returned for a missing, unknown or revoked API key.
	ErrUnauthorized = store.ErrUnauthorized
	// ErrCannotServe is returned for a well-formed request the appliance
	// cannot serve (a language no engine has, model-3 on live...).
	ErrCannotServe = params.ErrCannotServe
	// ErrAtCapacity is returned when a bounded queue or pool is full.
	ErrAtCapacity = ingest.ErrAtCapacity
	// ErrTooLarge is returned when a body, file or frame exceeds its limit.
	ErrTooLarge = errors.New("daemon: too large")
	// ErrInvalidID is returned for an id that cannot be one of ours.
	ErrInvalidID = errors.New("daemon: invalid id")
	// ErrBadAudio is returned when audio cannot be read (corrupt, unsupported).
	ErrBadAudio = errors.New("daemon: unreadable audio")
	// ErrFetch is returned when an audio_url cannot be fetched.
	ErrFetch = errors.New("daemon: audio_url fetch failed")
	// ErrNoSpace is returned when the data directory is full.
	ErrNoSpace = store.ErrNoSpace
	// ErrLiveQuota is returned when an account already has the live
	// sessions live.max_sessions_per_account allows (429). It wraps
	// ErrAtCapacity, so a door without a mapping of its own (SIP) refuses
	// as for a full appliance.
	ErrLiveQuota = fmt.Errorf("daemon: account live session quota reached: %w", ErrAtCapacity)
	// ErrQuota is returned when an upload or a fetched audio_url would take
	// an account past limits.max_account_bytes. Like a full disk it is
	// 507 Insufficient Storage (RFC 4918 11.5; RFC 4331 section 6 uses it
	// for a quota), but its message, unlike a full disk's, is shown.
	ErrQuota = errors.New("daemon: account storage quota exceeded")
)

// ValidationError is the contract's 400 with validation_errors.
type ValidationError = params.ValidationError

// Status maps an error of the job service to the contract's HTTP status.
func Status(err error) int {
	var ve *ValidationError
	switch {
	case err == nil:
		return 200
	case errors.As(err, &ve):
		return 400
	case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrNotOwner):
		return 401
	case errors.Is(err, ErrInvalidID):
		return 403
	case errors.Is(err, ErrNotFound):
		return 404
	case errors.Is(err, ErrTooLarge):
		return 413
	case errors.Is(err, ErrCannotServe), errors.Is(err, ErrBadAudio), errors.Is(err, ErrFetch):
		return 422
	case errors.Is(err, ErrLiveQuota):
		return 429
	case errors.Is(err, ErrQuota): // before ErrAtCapacity, which a live refusal also wraps
		return 507
	case errors.Is(err, ErrAtCapacity), errors.Is(err, recognizer.ErrAtCapacity), errors.Is(err, ErrEngineUnavailable):
		return 503
	case errors.Is(err, ErrNoSpace):
		return 507
	}
	return 500
}

// Error is a job-service error whose message is written for the client and
// names the field it is about. Kind is one of the sentinels above; Cause,
// when set, is the lower error (kept for errors.Is and the log, never shown
// to the client).
type Error struct {
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

// Unwrap lets errors.Is find both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

func newError(kind, cause error, format string, a ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...), Cause: cause}
}

// The client-facing reasons of unusable audio (uploaded or fetched).
const (
	reasonNotAudio = "audio: not a readable audio file"
	reasonTooLong  = "audio: longer than the limit of %s"
	reasonQuota    = "storage quota of this account exceeded (limit %d bytes): delete files or jobs to free space"
)

// Message is the client-facing message of err: for 4xx errors of this
// package, its Msg (what went wrong, with which field, never the cause:
// causes carry paths, addresses and remote answers, and go to the log);
// otherwise a generic text for the status.
func Message(err error) string {
	status := Status(err)
	if m, ok := engineMessage(err); ok {
		return m
	}
	if errors.Is(err, errPoisonJob) {
		return "the service stopped while processing this job; it is not retried"
	}
	var e *Error
	if (status < 500 || errors.Is(err, ErrQuota)) && errors.As(err, &e) {
		return e.Msg
	}
	if status == 422 {
		// params wraps ErrCannotServe as "cannot serve: <field message>".
		return strings.TrimPrefix(err.Error(), ErrCannotServe.Error()+": ")
	}
	switch status {
	case 400:
		return "invalid request"
	case 401:
		if errors.Is(err, ErrNotOwner) {
			return "no permission to this resource"
		}
		return "missing or invalid API key (x-service-key)"
	case 403:
		return "invalid id"
	case 404:
		return "not found"
	case 413:
		return "request too large"
	case 429:
		return "too many live sessions open for this account"
	case 503:
		return "service at capacity, try again later"
	case 507:
		return "insufficient storage on the appliance"
	}
	return "internal error"
}
