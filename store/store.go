package store

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// Store is what earshot keeps, whichever backend keeps it: the embedded
// bbolt DB of package store/bolt (one box) or the PostgreSQL store of
// package store/postgres (a cluster of boxes sharing one database). The
// daemon and the CLI hold a Store; store/storetest runs one conformance
// suite against every implementation, so each method's comment on
// bolt.DB is its contract,
// with the differences a shared backend brings stated here:
//
//   - Records written by one process are seen by every other at once.
//   - ClaimNext, ClaimNextAfter, ClaimBatchPass and ClaimDeliveries hand
//     each job, batch pass or delivery to one caller across all processes
//     sharing the backend.
//   - Recover and SweepBlobs touch only what this process (node) owns or
//     what no node can still be writing.
//
// Errors are this package's sentinels, wrapped, in both backends.
type Store interface {
	// Close releases the backend; idempotent.
	Close() error
	// Check verifies the backend's cross-references (tests, diagnostics).
	Check() error

	CreateKey(account string, g KeyGrant) (secret string, k Key, err error)
	Keys() ([]Key, error)
	Key(id string) (Key, error)
	RevokeKey(id string) error
	Authenticate(secret string) (Key, error)
	CallbackSecret(account string) ([]byte, error)
	// TakeCallbackSecrets calls move with each account's callback secret
	// the backend keeps and removes each once move returned nil; an error
	// of move stops it there. A sealed store moves them into its keyring
	// so (store/sealed, CallbackSecret); its own keeps none in the backend
	// and takes nothing.
	TakeCallbackSecrets(move func(account string, secret []byte) error) error

	CreateJob(j *Job) error
	Job(id string) (*Job, error)
	UpdateJob(id string, fn func(j *Job) ([]*Delivery, error)) (*Job, error)
	// DeleteJob removes a job, its deliveries and its blob; a held job
	// (Job.Held) is ErrHeld and stays.
	DeleteJob(id string) error
	ListJobs(q ListQuery) ([]*Job, error)
	EachJob(q ListQuery, fn func(*Job) bool) error
	CountJobs(kind Kind, status Status) (int, error)
	// ExpireJobs never takes a held job (Job.Held).
	ExpireJobs(kind Kind, cut Cutoff, limit int) ([]string, error)

	ClaimNext(kind Kind) (*Job, error)
	ClaimNextAfter(kind Kind, after string) (*Job, error)
	AwaitingAudio() ([]*Job, error)
	Recover(o RecoverOptions) (RecoverReport, error)

	ClaimBatchPass() (*Job, error)
	PendingBatchPasses() (int, error)

	PutUpload(u *Upload) error
	Upload(id string) (*Upload, error)
	DeleteUpload(id string) error
	ExpireUploads(cut Cutoff, limit int) ([]string, error)

	EnqueueDelivery(d *Delivery) error
	DueDeliveries(now time.Time, limit int) ([]*Delivery, error)
	ClaimDeliveries(now time.Time, limit int) ([]*Delivery, error)
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
	// LocalBlobPath returns the file on this machine that holds the blob
	// name, for readers that take a path (the decoders, the prober, a live
	// recording written in place), and false when the backend's blobs are
	// not local files (store/postgres): those are read with OpenBlob.
	// It does not check the name; callers validate it with ValidName first.
	LocalBlobPath(name string) (string, bool)

	// AppendAudit chains the entries, in order, after the trail's head
	// (AuditEntry.Chain: Seq, Prev and Hash set on each) and stores them in
	// one transaction; each must pass PrepareAudit (else ErrInvalid and
	// nothing is stored). Appends are serialised across every process
	// sharing the backend, so a cluster keeps one chain.
	AppendAudit(es ...*AuditEntry) error
	// ListAudit returns the entries q selects, in sequence order or newest
	// first (q.Newest), skipping q.Offset of them, at most q.Limit
	// (CheckAuditQuery).
	ListAudit(q AuditQuery) ([]*AuditEntry, error)
	// AuditAnchor returns where the kept chain starts (AuditAnchor).
	AuditAnchor() (AuditAnchor, error)
	// ExpireAudit removes up to limit of the oldest entries that are
	// older than before or beyond the newest maxEntries (0: no count
	// bound), makes the last one removed the anchor, and returns how many
	// it removed. A limit <= 0 is ErrInvalid.
	ExpireAudit(before time.Time, maxEntries, limit int) (int, error)

	// Cluster is the backend's capability as a store shared by several
	// nodes, nil on a store one process owns (store/bolt).
	Cluster() Cluster
	// Sealer is the store's capability as one that seals what it keeps
	// (store/sealed), nil on a store that keeps content in clear.
	Sealer() Sealer
}

// BlobReader reads one blob from its start, streaming (never the whole blob
// in memory). Stat reports its size; *os.File is one.
type BlobReader interface {
	io.ReadCloser
	Stat() (fs.FileInfo, error)
}

// The record rules every backend applies. Each is the one both backends
// use, so they accept and refuse the same records.

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool { return k.valid() }

// Validate checks the fields every stored job must have: an id of 1 to 256
// bytes, an account, a valid kind and status, and a CreatedAt within
// 1678–2262. A failure wraps ErrInvalid.
func (j *Job) Validate() error { return j.validate() }

// Clone copies j deeply enough that changing the copy's fields, maps or raw
// JSON leaves j as it was.
func (j *Job) Clone() *Job { return j.clone() }

// InQueue reports whether j belongs in the durable queue: a queued
// pre-recorded job whose audio is stored (not AwaitingAudio), or a live job
// with a batch pass queued or running.
func (j *Job) InQueue() bool { return j.inQueue() }

// MetadataMatches reports whether every ListQuery.Metadata entry equals the
// job's custom metadata value: strings as they are, numbers by numeric
// value, other JSON values by their JSON text.
func MetadataMatches(md map[string]any, filter map[string]string) bool {
	return metadataMatches(md, filter)
}

// NewSecret returns a new API key secret ("es_" and 32 random bytes in
// unpadded base64url) and its SHA-256, the only form a backend stores.
func NewSecret() (secret string, hash []byte) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret = SecretPrefix + base64.RawURLEncoding.EncodeToString(raw)
	return secret, hashSecret(secret)
}

// HashSecret returns the SHA-256 of a secret, as NewSecret does.
func HashSecret(secret string) []byte { return hashSecret(secret) }

// RandomID returns n random bytes as 2n hex characters (key ids are 6,
// delivery ids 16).
func RandomID(n int) string { return randomHex(n) }

// PrepareDelivery fills a new delivery's defaults (ID, CreatedAt, Method
// POST), puts its times in UTC and checks it (an id over 256 bytes, an
// empty URL or a method other than POST or PUT is ErrInvalid).
func PrepareDelivery(d *Delivery) error {
	if d.ID == "" {
		d.ID = randomHex(16)
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = time.Now()
	}
	if d.Method == "" {
		d.Method = http.MethodPost
	}
	return CheckDelivery(d)
}

// checkDelivery puts d's times in UTC and checks its fields.
func CheckDelivery(d *Delivery) error {
	d.CreatedAt = d.CreatedAt.UTC()
	d.NextAttempt = d.NextAttempt.UTC()
	switch {
	case len(d.ID) > MaxIDLen:
		return fmt.Errorf("delivery id %q: %w", d.ID, ErrInvalid)
	case d.URL == "":
		return fmt.Errorf("delivery %s: empty url: %w", d.ID, ErrInvalid)
	case d.Method != http.MethodPost && d.Method != http.MethodPut:
		return fmt.Errorf("delivery %s: method %q: %w", d.ID, d.Method, ErrInvalid)
	}
	return nil
}

// Validate checks an upload before it is stored: an id of 1 to 256 bytes,
// an account, and a Filename and Extension within MaxFilenameBytes (a
// sealed Filename, SealedPrefix, within that bound sealed). A
// failure wraps ErrInvalid.
func (u *Upload) Validate() error {
	if u.ID == "" || len(u.ID) > MaxIDLen || u.Account == "" {
		return fmt.Errorf("upload: missing id or account: %w", ErrInvalid)
	}
	limit := MaxFilenameBytes
	if strings.HasPrefix(u.Filename, SealedPrefix) {
		limit = maxSealedFilename // a sealing layer's form of a name within MaxFilenameBytes
	}
	if len(u.Filename) > limit || len(u.Extension) > MaxFilenameBytes {
		return fmt.Errorf("upload %s: filename of %d bytes > limit %d: %w", u.ID, len(u.Filename), limit, ErrInvalid)
	}
	return nil
}
