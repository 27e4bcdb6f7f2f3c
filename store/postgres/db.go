package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"github.com/earshot-dev/earshot/store"
)

// Defaults for the zero fields of Options.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultJobLease   = store.DefaultJobLease
	DefaultSweepAfter = time.Hour
	DefaultMaxConns   = 16
)

// Options tunes Open. A nil *Options means the defaults.
type Options struct {
	// NodeID names this node in claims and live sessions; Recover and
	// SweepBlobs touch only what it owns. Empty is a valid name (one node).
	NodeID string
	// Timeout bounds each statement (each chunk of a blob). Zero means
	// DefaultTimeout (10s). A database that does not answer within it
	// yields store.ErrUnavailable.
	Timeout time.Duration
	// JobLease is how long a claimed pre-recorded job stays its node's
	// without a renewal (KeepLeases renews every third of it): after a
	// node dies, its jobs go back to the queue within about this long.
	// Zero means DefaultJobLease (30s).
	JobLease time.Duration
	// SweepAfter keeps blobs younger than this from SweepBlobs (another
	// node may be about to write the record naming one), and data keys
	// younger than this from encryption at rest's sweeps of keys whose
	// record or blob is gone (Keyring.SweepableIDs: another node may be
	// writing the blob). Zero means DefaultSweepAfter (1h); negative
	// sweeps every unnamed blob and such key.
	SweepAfter time.Duration
	// MaxConns bounds the connection pool. Zero means DefaultMaxConns
	// (16), unless the DSN sets pool_max_conns.
	MaxConns int32
}

func (o *Options) setDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.JobLease <= 0 {
		o.JobLease = DefaultJobLease
	}
	if o.SweepAfter == 0 {
		o.SweepAfter = DefaultSweepAfter
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
}

// DB is an open PostgreSQL store. Create it with Open and release it with
// Close. All methods are safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	opts Options

	mu     sync.Mutex
	closed bool // guarded by mu
}

var _ store.Store = (*DB)(nil)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema step: the SQL of migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order; their
// numbers must run 1, 2, 3... with no gap.
func migrations() ([]migration, error) {
	entries, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		base := strings.TrimPrefix(e, "migrations/")
		num, name, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %s: want NNNN_name.sql", base)
		}
		b, err := migrationFiles.ReadFile(e)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %d (%s) where %d was expected", m.version, m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this build writes: the number of
// embedded migrations.
func SchemaVersion() int {
	m, _ := migrations()
	return len(m)
}

// migrateLock is the advisory lock key nodes take while migrating.
const migrateLock = 0x6561727368 // "earsh"

// Open connects to the database named by dsn (a libpq URL or key=value
// string), applies pending schema migrations and returns the store. A
// database whose schema is newer than this build's is ErrSchemaTooNew; a
// database that cannot be reached within o.Timeout is ErrUnavailable.
func Open(ctx context.Context, dsn string, o *Options) (*DB, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.setDefaults()
	if dsn == "" {
		return nil, fmt.Errorf("postgres: open: empty dsn: %w", store.ErrInvalid)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: dsn: %v: %w", redactErr(err), store.ErrInvalid)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = opts.MaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > opts.Timeout {
		cfg.ConnConfig.ConnectTimeout = opts.Timeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", wrap(err))
	}
	db := &DB{pool: pool, opts: opts}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// redactErr keeps a DSN parse error from echoing the password.
func redactErr(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return "cannot parse the connection string"
	}
	return err.Error()
}

// migrate brings the schema to the embedded version in one transaction.
func (db *DB) migrate(ctx context.Context) error {
	migs, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	return db.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)"); err != nil {
			return err
		}
		var version int
		err := tx.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, "INSERT INTO schema_version (version) VALUES (0)")
		}
		if err != nil {
			return err
		}
		if version > len(migs) {
			return fmt.Errorf("postgres: database schema %d > supported %d: %w", version, len(migs), store.ErrSchemaTooNew)
		}
		for _, m := range migs[version:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("postgres: migration %d (%s): %w", m.version, m.name, err)
			}
		}
		_, err = tx.Exec(ctx, "UPDATE schema_version SET version = $1", len(migs))
		return err
	})
}

// SchemaVersion returns the schema version recorded in the database.
func (db *DB) SchemaVersion() (int, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var v int
	if err := db.pool.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", wrap(err))
	}
	return v, nil
}

// NodeID returns the node name this store claims work as.
func (db *DB) NodeID() string { return db.opts.NodeID }

// Close closes the pool; idempotent. Methods called after it fail.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if !db.closed {
		db.closed = true
		db.pool.Close()
	}
	return nil
}

func (db *DB) isClosed() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.closed
}

// ctx returns a context bounding one operation by Options.Timeout.
func (db *DB) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), db.opts.Timeout)
}

// tx runs fn in a transaction, committed when fn returns nil and rolled
// back otherwise (also on panic: pgx rolls back an unfinished transaction
// when its connection is released).
func (db *DB) tx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(ctx, tx); err != nil {
		return wrap(err)
	}
	return wrap(tx.Commit(ctx))
}

// update runs fn in a transaction bounded by Options.Timeout.
func (db *DB) update(fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, cancel := db.ctx()
	defer cancel()
	return db.tx(ctx, fn)
}

// wrap marks errors the caller branches on with the store's sentinels:
// a full disk ErrNoSpace, an unreachable or timed-out database
// ErrUnavailable, a closed pool ErrClosed. Others pass unchanged.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{store.ErrNotFound, store.ErrInvalid, store.ErrExists, store.ErrNoSpace,
		store.ErrUnavailable, store.ErrClosed, store.ErrTooLarge, store.ErrEmpty, store.ErrSchemaTooNew} {
		if errors.Is(err, s) {
			return err
		}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "53100": // disk_full
			return fmt.Errorf("%w: %w", store.ErrNoSpace, err)
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutting down, starting
			pgErr.Code == "53300": // too many connections
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		pgconn.SafeToRetry(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	if errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	}
	return err
}

// ns encodes t as Unix nanoseconds for the time columns: the zero time is
// the minimum int64 (it sorts first, as the embedded store's encoding does),
// times outside 1678–2262 are clamped.
func ns(t time.Time) int64 {
	switch {
	case t.IsZero() || t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// fromNS decodes ns: the minimum int64 is the zero time.
func fromNS(v int64) time.Time {
	if v == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

var (
	minTime = time.Unix(0, math.MinInt64+1).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// Cluster returns db: a PostgreSQL store is shared by the nodes of a
// cluster.
func (db *DB) Cluster() store.Cluster { return db }

// ChunkSize bounds one part of AppendBlob (the package's ChunkSize).
func (db *DB) ChunkSize() int { return ChunkSize }

// LocalBlobPath reports false: blobs live in the database.
func (db *DB) LocalBlobPath(string) (string, bool) { return "", false }

// Sealer returns nil: this store keeps content as it is given (store/sealed
// seals it).
func (db *DB) Sealer() store.Sealer { return nil }
