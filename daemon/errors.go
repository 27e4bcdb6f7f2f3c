package daemon

import (
	"fmt"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// The contract-facing errors of the job service: the kinds of package
// errcode (which holds their statuses and client messages, once), or the
// lower packages' sentinels derived from them. The names are kept here so
// the service's callers read daemon.ErrNotFound.
var (
	// ErrNotFound is returned when a job or file does not exist or was deleted.
	ErrNotFound = store.ErrNotFound
	// ErrNotOwner is returned when a job or file belongs to another account.
	ErrNotOwner = errcode.ErrNotOwner
	// ErrUnauthorized is returned for a missing, unknown or revoked API key.
	ErrUnauthorized = store.ErrUnauthorized
	// ErrCannotServe is returned for a well-formed request the appliance
	// cannot serve (a language no engine has, model-3 on live...).
	ErrCannotServe = params.ErrCannotServe
	// ErrAtCapacity is returned when a bounded queue or pool is full.
	ErrAtCapacity = ingest.ErrAtCapacity
	// ErrTooLarge is returned when a body, file or frame exceeds its limit.
	ErrTooLarge = errcode.ErrTooLarge
	// ErrInvalidID is returned for an id that cannot be one of ours.
	ErrInvalidID = errcode.ErrInvalidID
	// ErrBadAudio is returned when audio cannot be read (corrupt, unsupported).
	ErrBadAudio = errcode.ErrBadAudio
	// ErrFetch is returned when an audio_url cannot be fetched.
	ErrFetch = errcode.ErrFetch
	// ErrNoSpace is returned when the data directory is full.
	ErrNoSpace = store.ErrNoSpace
	// ErrLiveQuota is returned when an account already has the live
	// sessions live.max_sessions_per_account allows (429); the SIP door
	// refuses it as for a full node (503 with Retry-After).
	ErrLiveQuota = errcode.ErrLiveQuota
	// ErrQuota is returned when an upload or a fetched audio_url would take
	// an account past limits.max_account_bytes (507, message shown).
	ErrQuota = errcode.ErrQuota
)

// ValidationError is the contract's 400 with validation_errors.
type ValidationError = errcode.ValidationError

// Status maps an error of the job service to the contract's HTTP status
// (errcode.Status).
func Status(err error) int { return errcode.Status(err) }

// Message is the client-facing message of err (errcode.Message).
func Message(err error) string { return errcode.Message(err) }

// Error is a job-service error whose message is written for the client and
// names the field it is about (errcode.Error).
type Error = errcode.Error

func newError(kind, cause error, format string, a ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...), Cause: cause}
}

// The client-facing reasons of unusable audio (uploaded or fetched).
const (
	reasonNotAudio = pipeline.ReasonNotAudio
	reasonQuota    = "storage quota of this account exceeded (limit %d bytes): delete files or jobs to free space"
)
