package postgres

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
)

// Keyring is encryption at rest's keyring (sealed.Keyring) in the shared
// database, so that every node of a cluster opens what any node sealed:
// the table data_keys (migrations/0006_data_keys.sql), one row per data
// key, wrapped by the key-encryption key the row names, and the rotation
// in progress in data_key_rotation. It caches nothing: a key another node
// made, re-wrapped or destroyed is seen at once (Get is one indexed
// SELECT).
//
// Deletion is a DELETE of the row; PostgreSQL keeps what it deleted for a
// while (the dead row until VACUUM, the bytes of the page's free space
// until reused, the WAL until recycled, base backups and archived WAL for
// as long as they are kept). Delete runs VACUUM on the table after every
// VacuumEvery deletions or a minute after the last one, which shortens the
// first of those only; docs/deployment.md says what an operator does to
// make a deletion final (a rotation, then the old key destroyed).
type Keyring struct {
	db *DB

	mu          sync.Mutex
	deleted     int             // deletions since the last VACUUM, guarded by mu
	lastVacuum  time.Time       // guarded by mu
	unread      map[string]bool // ids whose last Get failed on the database, guarded by mu
	vacuumEvery int
}

// VacuumEvery is how many deletions Keyring.Delete lets pass before it
// vacuums data_keys (also done when a deletion comes a minute or more
// after the last VACUUM).
const VacuumEvery = 64

// Keyring returns the keyring in db's database. Its Close does not close
// db.
func (db *DB) Keyring() *Keyring {
	return &Keyring{db: db, lastVacuum: time.Now(), unread: map[string]bool{}, vacuumEvery: VacuumEvery}
}

var _ sealed.Keyring = (*Keyring)(nil)

// HasKeys reports whether the database holds any data key: its store was
// sealed, so a node without the key-encryption key must not start.
func (k *Keyring) HasKeys() (bool, error) {
	ctx, cancel := k.db.ctx()
	defer cancel()
	var any bool
	if err := k.db.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM data_keys) OR EXISTS (SELECT 1 FROM data_key_rotation)").Scan(&any); err != nil {
		return false, fmt.Errorf("store: keyring: %w", wrap(err))
	}
	return any, nil
}

// Get returns id's entry. A database that does not answer is no entry
// (the caller's open then fails as a missing key); Put then refuses to
// replace an entry of that id (a creation after a failed read must not
// replace a key sealed data already uses).
func (k *Keyring) Get(id string) (sealed.Entry, bool) {
	ctx, cancel := k.db.ctx()
	defer cancel()
	var e sealed.Entry
	err := k.db.pool.QueryRow(ctx, "SELECT kek, wrapped FROM data_keys WHERE id = $1", id).Scan(&e.KEK, &e.Wrapped)
	if err != nil {
		if !errors.Is(err, pgx.ErrNoRows) {
			k.mu.Lock()
			if len(k.unread) >= maxUnread {
				clear(k.unread) // then a few replacements go unguarded rather than memory unbounded
			}
			k.unread[id] = true
			k.mu.Unlock()
		}
		return sealed.Entry{}, false
	}
	return e, true
}

// maxUnread bounds Keyring.unread.
const maxUnread = 1024

// Put stores e as id's entry, replacing any (a rotation's re-wrap, a
// blob linked over another); but after a Get of id that failed on the
// database, only when id has no entry: else store.ErrExists and nothing
// changes.
func (k *Keyring) Put(id string, e sealed.Entry) error {
	k.mu.Lock()
	guarded := k.unread[id]
	delete(k.unread, id)
	k.mu.Unlock()
	if guarded {
		return k.insert("put", id, e, "its data key exists (a read of it had failed)")
	}
	ctx, cancel := k.db.ctx()
	defer cancel()
	_, err := k.db.pool.Exec(ctx, `INSERT INTO data_keys (id, kek, wrapped) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET kek = EXCLUDED.kek, wrapped = EXCLUDED.wrapped`, id, e.KEK, e.Wrapped)
	if err != nil {
		return fmt.Errorf("store: keyring: put %s: %w", id, wrap(err))
	}
	return nil
}

// Add stores e as id's entry when id has none, else store.ErrExists: of
// two nodes adding one id at once, the first insert wins.
func (k *Keyring) Add(id string, e sealed.Entry) error { return k.insert("add", id, e, "it exists") }

// insert stores e as id's entry only when id has none (the first insert
// wins), else store.ErrExists saying why; op names the caller in errors.
func (k *Keyring) insert(op, id string, e sealed.Entry, why string) error {
	ctx, cancel := k.db.ctx()
	defer cancel()
	tag, err := k.db.pool.Exec(ctx, "INSERT INTO data_keys (id, kek, wrapped) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
		id, e.KEK, e.Wrapped)
	if err != nil {
		return fmt.Errorf("store: keyring: %s %s: %w", op, id, wrap(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: keyring: %s %s: %s: %w", op, id, why, store.ErrExists)
	}
	return nil
}

// Delete deletes id's row (an unknown id is not an error), then vacuums
// the table when VacuumEvery deletions have passed or a minute has since
// the last VACUUM.
func (k *Keyring) Delete(id string) error {
	ctx, cancel := k.db.ctx()
	defer cancel()
	tag, err := k.db.pool.Exec(ctx, "DELETE FROM data_keys WHERE id = $1", id)
	if err != nil {
		return fmt.Errorf("store: keyring: destroy %s: %w", id, wrap(err))
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	k.mu.Lock()
	k.deleted++
	due := k.deleted >= k.vacuumEvery || time.Since(k.lastVacuum) >= time.Minute
	if due {
		k.deleted, k.lastVacuum = 0, time.Now()
	}
	k.mu.Unlock()
	if due {
		return k.Vacuum()
	}
	return nil
}

// Vacuum runs VACUUM on data_keys: the dead rows of destroyed keys are
// removed from the table's pages (their bytes may stay in the pages' free
// space until reused).
func (k *Keyring) Vacuum() error {
	ctx, cancel := k.db.ctx()
	defer cancel()
	// No arguments: pgx sends it in the simple protocol, outside any
	// transaction block, as VACUUM requires.
	if _, err := k.db.pool.Exec(ctx, "VACUUM data_keys"); err != nil {
		return fmt.Errorf("store: keyring: vacuum: %w", wrap(err))
	}
	return nil
}

// IDs returns every entry's id, sorted; nil when the database does not
// answer.
func (k *Keyring) IDs() []string { return k.column("SELECT id FROM data_keys ORDER BY id") }

// SweepableIDs returns, sorted, the ids of the entries older than the
// store's Options.SweepAfter by the database's clock (every entry when it
// is negative): the keys a sweep of keys whose record or blob is gone may
// destroy (sealed.Store: at start and after a retention expiry). A
// younger key may be another node's blob write in progress, named only
// when the write commits (migrations/0007_data_key_age.sql).
func (k *Keyring) SweepableIDs() []string {
	if k.db.opts.SweepAfter < 0 {
		return k.IDs()
	}
	return k.column(`SELECT id FROM data_keys
		WHERE created_ns < (extract(epoch from clock_timestamp()) * 1000000000)::bigint - $1 ORDER BY id`,
		k.db.opts.SweepAfter.Nanoseconds())
}

// KEKs is sealed.Keyring.KEKs: one query (nil when the database does not
// answer, as IDs).
func (k *Keyring) KEKs() []string {
	return k.column("SELECT DISTINCT kek FROM data_keys ORDER BY kek")
}

// column returns the strings query q selects with args, nil when the
// database does not answer.
func (k *Keyring) column(q string, args ...any) []string {
	ctx, cancel := k.db.ctx()
	defer cancel()
	rows, err := k.db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil
	}
	return out
}

// Rotation returns the cluster's rotation in progress, nil if none (or
// when the database does not answer).
func (k *Keyring) Rotation() *sealed.Rotation {
	ctx, cancel := k.db.ctx()
	defer cancel()
	var r sealed.Rotation
	err := k.db.pool.QueryRow(ctx, "SELECT from_kek, from_file, to_kek, to_file FROM data_key_rotation WHERE id = 1").
		Scan(&r.From, &r.FromFile, &r.To, &r.ToFile)
	if err != nil {
		return nil
	}
	return &r
}

// ErrRotating is returned by Keyring.SetRotation when another rotation
// (to another key) is in progress in the cluster: one at a time.
var ErrRotating = errors.New("store: keyring: another key rotation is in progress")

// SetRotation records r as the cluster's rotation (nil: finished). A
// rotation to another key than the one in progress is ErrRotating; the
// same rotation again (a node resuming it) is no change.
func (k *Keyring) SetRotation(r *sealed.Rotation) error {
	ctx, cancel := k.db.ctx()
	defer cancel()
	if r == nil {
		if _, err := k.db.pool.Exec(ctx, "DELETE FROM data_key_rotation"); err != nil {
			return fmt.Errorf("store: keyring: end rotation: %w", wrap(err))
		}
		return nil
	}
	var from, to string
	err := k.db.pool.QueryRow(ctx, `INSERT INTO data_key_rotation (id, from_kek, from_file, to_kek, to_file) VALUES (1, $1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET id = 1 RETURNING from_kek, to_kek`, r.From, r.FromFile, r.To, r.ToFile).Scan(&from, &to)
	if err != nil {
		return fmt.Errorf("store: keyring: start rotation: %w", wrap(err))
	}
	if to != r.To {
		return fmt.Errorf("rotation from key %s to key %s: %w", from, to, ErrRotating)
	}
	return nil
}

// Close releases nothing: the database is the store's, closed with it.
func (k *Keyring) Close() error { return nil }
