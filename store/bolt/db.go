package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/store"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultTimeout is how long Open waits for another process's lock when
// Options.Timeout is zero.
const DefaultTimeout = time.Second

// Options tunes Open. The zero value (or a nil *Options) is what the daemon
// uses.
type Options struct {
	// Timeout is how long Open waits for the file lock another process holds
	// before returning ErrLocked. Zero means DefaultTimeout (1s); a negative
	// value fails at the first busy attempt. Waiting costs nothing but time.
	Timeout time.Duration
	// NoSync skips fsync of the database and of blob files and directories.
	// UNSAFE: a power cut may lose or corrupt committed data. Tests and
	// benchmarks only.
	NoSync bool
}

// Bucket names. Version 1 of the schema creates all of them; version 2 adds
// the audit trail's (audit.go).
var (
	bucketMeta            = []byte("meta")             // "schema_version" → uint64
	bucketKeys            = []byte("keys")             // key id → keyRecord JSON
	bucketKeyHash         = []byte("key_hash")         // sha256(secret) → key id
	bucketCallbackSecrets = []byte("callback_secrets") // account → 32 bytes
	bucketJobs            = []byte("jobs")             // job id → Job JSON
	bucketJobIndex        = []byte("job_index")        // account, kind, created, id → status
	bucketJobStatus       = []byte("job_status")       // kind, status, created, id → empty
	bucketJobCounts       = []byte("job_counts")       // kind, status → uint64
	bucketQueue           = []byte("queue")            // kind, created, id → empty
	bucketUploads         = []byte("uploads")          // upload id → Upload JSON
	bucketDeliveries      = []byte("deliveries")       // delivery id → Delivery JSON
	bucketDeliveryDue     = []byte("delivery_due")     // next attempt, id → empty
	bucketDeliveryJob     = []byte("delivery_job")     // job id, delivery id → empty
)

var keySchemaVersion = []byte("schema_version")

// DB is an open earshot data directory. Create it with Open and release it
// with Close. All methods are safe for concurrent use.
type DB struct {
	bolt    *bolt.DB
	dir     string // absolute
	blobDir string // absolute, dir/blobs
	noSync  bool

	mu     sync.Mutex
	closed bool                 // guarded by mu
	leases map[string]time.Time // guarded by mu: delivery id → end of its ClaimDeliveries lease
}

// migration moves the schema from version i to i+1, where i is its index in
// the slice migrations returns. Migrations run in order inside one
// transaction in Open, so a failure leaves the file as it was.
type migration struct {
	name string
	up   func(tx *bolt.Tx) error
}

// migrations lists every schema change ever made, oldest first. Append only:
// never edit or reorder a released entry.
func migrations() []migration {
	return []migration{
		{name: "create buckets", up: createBuckets},
		{name: "audit trail", up: createAuditBuckets},
	}
}

func createBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{
		bucketKeys, bucketKeyHash, bucketCallbackSecrets,
		bucketJobs, bucketJobIndex, bucketJobStatus, bucketJobCounts, bucketQueue,
		bucketUploads,
		bucketDeliveries, bucketDeliveryDue, bucketDeliveryJob,
	} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// Open opens (creating if needed) the data directory dir: dir itself (0700),
// dir/earshot.db (0600) and dir/blobs/. It runs pending schema migrations and
// removes temporary blob files left by a crash. A nil o means defaults.
// Another process holding the database makes Open return ErrLocked after
// o.Timeout.
func Open(dir string, o *Options) (*DB, error) {
	return open(dir, o, migrations())
}

func open(dir string, o *Options, migs []migration) (*DB, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if dir == "" {
		return nil, fmt.Errorf("store: open: empty directory: %w", store.ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	blobDir := filepath.Join(abs, "blobs")
	if err := os.MkdirAll(blobDir, 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	path := filepath.Join(abs, "earshot.db")
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      opts.Timeout,
		NoSync:       opts.NoSync,
		FreelistType: bolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("store: open %s: waited %s: %w", path, opts.Timeout, store.ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := &DB{bolt: bdb, dir: abs, blobDir: blobDir, noSync: opts.NoSync}
	if err := db.migrate(migs); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	if err := db.removeTempBlobs(); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	return db, nil
}

// migrate brings the schema to len(migs) in one transaction.
func (db *DB) migrate(migs []migration) error {
	return db.update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		var version uint64
		if v := meta.Get(keySchemaVersion); v != nil {
			if len(v) != 8 {
				return fmt.Errorf("store: migrate: schema version is %d bytes: %w", len(v), store.ErrCorrupt)
			}
			version = binary.BigEndian.Uint64(v)
		}
		if version > uint64(len(migs)) {
			return fmt.Errorf("store: file schema %d > supported %d: %w", version, len(migs), store.ErrSchemaTooNew)
		}
		for i := version; i < uint64(len(migs)); i++ {
			if err := migs[i].up(tx); err != nil {
				return fmt.Errorf("store: migration %d (%s): %w", i+1, migs[i].name, err)
			}
		}
		return meta.Put(keySchemaVersion, binary.BigEndian.AppendUint64(nil, uint64(len(migs))))
	})
}

// SchemaVersion returns the schema version recorded in the file.
func (db *DB) SchemaVersion() (int, error) {
	var version int
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keySchemaVersion)
		if len(v) != 8 {
			return fmt.Errorf("store: schema version: %w", store.ErrCorrupt)
		}
		version = int(binary.BigEndian.Uint64(v))
		return nil
	})
	return version, err
}

// update runs fn in a read-write transaction, committed before it returns,
// and marks a full disk with ErrNoSpace (NoSpace). fn's own error is
// returned as it is.
func (db *DB) update(fn func(tx *bolt.Tx) error) error {
	var fnErr error
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		fnErr = fn(tx)
		return fnErr
	})
	if err == nil || fnErr != nil {
		return err
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("store: commit: %w", store.ErrClosed)
	}
	if full := store.NoSpace(err); errors.Is(full, store.ErrNoSpace) {
		return fmt.Errorf("store: commit: %w", full)
	}
	if refused := db.growthRefused(); refused != nil {
		return fmt.Errorf("store: commit: %w: %w: %w", store.ErrNoSpace, err, refused)
	}
	return err
}

// Close releases the database file and its lock. It is idempotent and safe
// to call concurrently with other methods, which then fail.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Dir returns the absolute path of the data directory.
func (db *DB) Dir() string { return db.dir }

// maxCheckProblems bounds how many inconsistencies Check reports.
const maxCheckProblems = 50

// Check verifies the file and the schema's cross-references: bbolt's own
// page check, every job's list index, status index, counter and queue
// entry (and every such entry's job), every delivery's indexes and every
// key's hash entry. Each problem is joined with ErrCorrupt. It reads the
// whole database, so it is for tests, startup diagnostics and the CLI, not
// for request paths. After Close it returns ErrClosed.
func (db *DB) Check() error {
	db.mu.Lock()
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return store.ErrClosed
	}
	var problems []error
	report := func(format string, args ...any) {
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Errorf("%w: "+format, append([]any{store.ErrCorrupt}, args...)...))
		}
	}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			report("bbolt: %v", err)
		}
		for _, name := range [][]byte{bucketMeta, bucketKeys, bucketKeyHash, bucketCallbackSecrets,
			bucketJobs, bucketJobIndex, bucketJobStatus, bucketJobCounts, bucketQueue, bucketUploads,
			bucketDeliveries, bucketDeliveryDue, bucketDeliveryJob} {
			if tx.Bucket(name) == nil {
				report("bucket %s missing", name)
			}
		}
		if len(problems) > 0 {
			return nil
		}
		checkKeys(tx, report)
		checkJobs(tx, report)
		checkDeliveries(tx, report)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: check: %w", err)
	}
	return errors.Join(problems...)
}

// removeTempBlobs deletes partial blob files a crash left behind. Only this
// process can be writing blobs: it holds the database lock.
func (db *DB) removeTempBlobs() error {
	entries, err := os.ReadDir(db.blobDir)
	if err != nil {
		return fmt.Errorf("store: open: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), store.TempBlobPrefix) {
			if err := os.Remove(filepath.Join(db.blobDir, e.Name())); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("store: open: remove partial blob: %w", err)
			}
		}
	}
	return nil
}

var _ store.Store = (*DB)(nil)

// Cluster returns nil: one process holds a bbolt store.
func (db *DB) Cluster() store.Cluster { return nil }

// Sealer returns nil: this store keeps content as it is given (store/sealed
// seals it).
func (db *DB) Sealer() store.Sealer { return nil }
