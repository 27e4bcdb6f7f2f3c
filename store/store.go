package store

import (
	"io"
	"io/fs"
	"time"
)

// Store is what earshot keeps, whichever backend keeps it: the embedded
// bbolt DB of this package (one box) or the PostgreSQL store of package
// store/postgres (a cluster of boxes sharing one database). The daemon and
// the CLI hold a Store; store/storetest runs one conformance suite against
// every implementation, so each method's comment on *DB is its contract,
// with the differences a shared backend brings stated here:
//
//   - Records written by one process are seen by every other at once.
//   - ClaimNext, ClaimNextAfter and DueDeliveries hand each job or delivery
//     to one caller across all processes sharing the backend (a lease, in
//     the shared backend, ends when the record is updated or deleted).
//   - Recover and SweepBlobs touch only what this process (node) owns or
//     what no node can still be writing.
//
// Errors are this package's sentinels, wrapped, in both backends.
type Store interface {
	// Close releases the backend; idempotent.
	Close() error
	// Check verifies the backend's cross-references (tests, diagnostics).
	Check() error

	CreateKey(account string) (secret string, k Key, err error)
	Keys() ([]Key, error)
	Key(id string) (Key, error)
	RevokeKey(id string) error
	Authenticate(secret string) (Key, error)
	CallbackSecret(account string) ([]byte, error)

	CreateJob(j *Job) error
	Job(id string) (*Job, error)
	UpdateJob(id string, fn func(j *Job) ([]*Delivery, error)) (*Job, error)
	DeleteJob(id string) error
	ListJobs(q ListQuery) ([]*Job, error)
	EachJob(q ListQuery, fn func(*Job) bool) error
	CountJobs(kind Kind, status Status) (int, error)
	ExpireJobs(kind Kind, before time.Time, limit int) ([]string, error)

	ClaimNext(kind Kind) (*Job, error)
	ClaimNextAfter(kind Kind, after string) (*Job, error)
	AwaitingAudio() ([]*Job, error)
	Recover(o RecoverOptions) (RecoverReport, error)

	PutUpload(u *Upload) error
	Upload(id string) (*Upload, error)
	DeleteUpload(id string) error
	ExpireUploads(before time.Time, limit int) ([]string, error)

	EnqueueDelivery(d *Delivery) error
	DueDeliveries(now time.Time, limit int) ([]*Delivery, error)
	NextDelivery() (time.Time, bool, error)
	RescheduleDelivery(id string, next time.Time, lastErr string) error
	DeleteDelivery(id string) error
	PendingDeliveries() (int, error)

	WriteBlob(name string, r io.Reader, limit int64) (int64, error)
	LinkBlob(src, dst string) error
	OpenBlob(name string) (BlobReader, error)
	RemoveBlob(name string) error
	SweepBlobs() ([]string, error)
	AccountBytes(account string) (int64, error)
}

// BlobReader reads one blob from its start, streaming (never the whole blob
// in memory). Stat reports its size; *os.File is one.
type BlobReader interface {
	io.ReadCloser
	Stat() (fs.FileInfo, error)
}

var _ Store = (*DB)(nil)
