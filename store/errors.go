package store

import (
	"errors"

	"github.com/earshot-dev/earshot/errcode"
)

// Lookups.
var (
	// ErrNotFound is returned when a job, key, upload, delivery or blob with
	// the given id or name does not exist.
	ErrNotFound = errcode.ErrNotFound.Sub("store: not found", "")
	// ErrUnauthorized is returned by Authenticate when the secret is unknown
	// or its key has been revoked.
	ErrUnauthorized = errcode.ErrUnauthorized.Sub("store: unauthorized", "")
)

// Writes.
var (
	// ErrExists is returned by CreateJob when a job with the same id exists.
	ErrExists = errors.New("store: already exists")
	// ErrInvalid is returned when an argument breaks the record's rules: an
	// empty id, account, kind or status, a zero CreatedAt, an account name
	// outside [A-Za-z0-9._-]{1,64}, or an UpdateJob callback that changes an
	// immutable field.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrEmpty is returned by ClaimNext when no job of the kind is queued.
	ErrEmpty = errors.New("store: queue empty")
	// ErrHeld is returned by DeleteJob when the job is under a legal hold
	// (Job.Held): nothing is deleted. Doors answer 409.
	ErrHeld = errcode.ErrConflict.Sub("store: job under legal hold", "job is under legal hold")
)

// The audit trail.
var (
	// ErrAuditBroken is returned (wrapped, naming the entry's Seq) by
	// VerifyAuditLink when an entry does not follow the one before it: an
	// entry edited, removed or reordered.
	ErrAuditBroken = errors.New("store: audit chain broken")
)

// Blobs.
var (
	// ErrInvalidName is returned when a blob name does not satisfy ValidName.
	ErrInvalidName = errors.New("store: invalid blob name")
	// ErrTooLarge is returned by WriteBlob when the reader holds more than
	// the limit; nothing is kept.
	ErrTooLarge = errors.New("store: too large")
	// ErrNoSpace is returned (wrapping the system error) when the disk is
	// full while writing a blob or committing a transaction.
	ErrNoSpace = errcode.ErrNoSpace.Sub("store: no space left on device", "")
)

// Sealed data (encryption at rest, package store/sealed).
var (
	// ErrIntegrity is returned when a sealed record field or blob does not
	// authenticate (tampered, truncated, reordered) or its data key is
	// gone: the caller gets this error, never the bytes.
	ErrIntegrity = errcode.ErrIntegrity.Sub("store: integrity check failed", "")
	// ErrKeyMissing is returned by the sealing layer's Open when the store
	// is sealed and no configured key-encryption key opens its data keys,
	// naming the key ids it needs (never key bytes).
	ErrKeyMissing = errors.New("store: data key missing")
)

// Opening and checking.
var (
	// ErrLocked is returned by Open when another process holds the database
	// for longer than Options.Timeout.
	ErrLocked = errors.New("store: database locked by another process")
	// ErrSchemaTooNew is returned by Open when the file was written by a
	// newer earshot whose schema version this build does not know.
	ErrSchemaTooNew = errors.New("store: schema version too new")
	// ErrCorrupt is returned by Check, joined with each inconsistency found.
	ErrCorrupt = errors.New("store: inconsistent")
	// ErrClosed is returned by Check after Close.
	ErrClosed = errors.New("store: closed")
)

// Shared backends.
var (
	// ErrUnavailable is returned (wrapping the driver's error) when a
	// shared backend (PostgreSQL) cannot be reached or does not answer
	// within its timeout; the operation may be retried. Doors answer 503.
	ErrUnavailable = errcode.ErrUnavailable.Sub("store: backend unavailable", "")
)
