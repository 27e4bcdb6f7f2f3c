package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// ChunkSize is the size of every stored chunk of a blob but its last: what
// WriteBlob buffers and a BlobReader holds at a time.
const ChunkSize = 256 << 10

// WriteBlob stores at most limit bytes from r as the blob name (replacing
// one of that name) and returns how many it read: chunk by chunk into one
// transaction, so the blob is absent, the previous one, or complete, and
// never more than one chunk is in memory. More than limit bytes is
// store.ErrTooLarge and nothing is kept; limit <= 0 means no limit. Each
// chunk's statement runs under Options.Timeout; the reader may take as long
// as it takes between chunks.
func (db *DB) WriteBlob(name string, r io.Reader, limit int64) (int64, error) {
	if !store.ValidName(name) {
		return 0, fmt.Errorf("store: write blob %q: %w", name, store.ErrInvalidName)
	}
	var n int64
	err := db.streamTx(func(op func(func(ctx context.Context) error) error, tx pgx.Tx) error {
		var content int64
		err := op(func(ctx context.Context) error {
			return tx.QueryRow(ctx, "INSERT INTO blob_contents (size, created_ns) VALUES (0, $1) RETURNING id",
				ns(time.Now())).Scan(&content)
		})
		if err != nil {
			return err
		}
		buf := make([]byte, ChunkSize)
		for seq := 0; ; seq++ {
			m, rerr := io.ReadFull(r, buf)
			n += int64(m)
			if limit > 0 && n > limit {
				return fmt.Errorf("more than %d bytes: %w", limit, store.ErrTooLarge)
			}
			if m > 0 {
				err := op(func(ctx context.Context) error {
					_, err := tx.Exec(ctx, "INSERT INTO blob_chunks (content_id, seq, data) VALUES ($1, $2, $3)", content, seq, buf[:m])
					return err
				})
				if err != nil {
					return err
				}
			}
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
				break
			}
			if rerr != nil {
				return rerr
			}
		}
		return op(func(ctx context.Context) error {
			if _, err := tx.Exec(ctx, "UPDATE blob_contents SET size = $2 WHERE id = $1", content, n); err != nil {
				return err
			}
			return nameBlob(ctx, tx, name, content)
		})
	})
	if err != nil {
		return n, fmt.Errorf("store: write blob %s: %w", name, err)
	}
	return n, nil
}

// streamTx runs fn in a transaction whose statements each get their own
// Options.Timeout (op), for work paced by a reader rather than the
// database.
func (db *DB) streamTx(fn func(op func(func(ctx context.Context) error) error, tx pgx.Tx) error) error {
	op := func(f func(ctx context.Context) error) error {
		ctx, cancel := db.ctx()
		defer cancel()
		return f(ctx)
	}
	var tx pgx.Tx
	err := op(func(ctx context.Context) (err error) {
		tx, err = db.pool.Begin(ctx)
		return err
	})
	if err != nil {
		return wrap(err)
	}
	defer func() {
		ctx, cancel := db.ctx()
		defer cancel()
		tx.Rollback(ctx)
	}()
	if err := fn(op, tx); err != nil {
		return wrap(err)
	}
	return wrap(op(func(ctx context.Context) error { return tx.Commit(ctx) }))
}

// nameBlob points name at content, dropping the content name pointed at
// before if no other name shares it.
func nameBlob(ctx context.Context, tx pgx.Tx, name string, content int64) error {
	var old int64
	err := tx.QueryRow(ctx, "SELECT content_id FROM blobs WHERE name = $1 FOR UPDATE", name).Scan(&old)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = tx.Exec(ctx, "INSERT INTO blobs (name, content_id, created_ns) VALUES ($1, $2, $3)", name, content, ns(time.Now()))
		return err
	case err != nil:
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE blobs SET content_id = $2, created_ns = $3 WHERE name = $1", name, content, ns(time.Now())); err != nil {
		return err
	}
	return dropOrphan(ctx, tx, old)
}

// dropOrphan deletes content (and its chunks) when no name points at it.
func dropOrphan(ctx context.Context, tx pgx.Tx, content int64) error {
	_, err := tx.Exec(ctx, `DELETE FROM blob_contents c WHERE c.id = $1
		AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.content_id = c.id)`, content)
	return err
}

// LinkBlob makes dst a second name for the blob src, sharing its bytes (no
// copy). An existing dst is replaced. A missing src is ErrNotFound.
func (db *DB) LinkBlob(src, dst string) error {
	if !store.ValidName(src) || !store.ValidName(dst) {
		return fmt.Errorf("store: link blob %q to %q: %w", src, dst, store.ErrInvalidName)
	}
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var content int64
		err := tx.QueryRow(ctx, "SELECT content_id FROM blobs WHERE name = $1 FOR SHARE", src).Scan(&content)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("blob %s: %w", src, store.ErrNotFound)
		}
		if err != nil || src == dst {
			return err
		}
		return nameBlob(ctx, tx, dst, content)
	})
	if err != nil {
		return fmt.Errorf("store: link blob %s to %s: %w", src, dst, err)
	}
	return nil
}

// RemoveBlob deletes the blob name (its bytes with their last name); a
// missing blob is not an error.
func (db *DB) RemoveBlob(name string) error {
	if !store.ValidName(name) {
		return fmt.Errorf("store: remove blob %q: %w", name, store.ErrInvalidName)
	}
	err := db.update(func(ctx context.Context, tx pgx.Tx) error { return removeBlob(ctx, tx, name) })
	if err != nil {
		return fmt.Errorf("store: remove blob %s: %w", name, err)
	}
	return nil
}

func removeBlob(ctx context.Context, tx pgx.Tx, name string) error {
	var content int64
	err := tx.QueryRow(ctx, "DELETE FROM blobs WHERE name = $1 RETURNING content_id", name).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return dropOrphan(ctx, tx, content)
}

// OpenBlob opens the blob name for reading: the reader fetches one chunk
// per round trip as it is read. A missing blob is ErrNotFound; a blob
// removed while it is read ends the read with ErrNotFound.
func (db *DB) OpenBlob(name string) (store.BlobReader, error) {
	if !store.ValidName(name) {
		return nil, fmt.Errorf("store: open blob %q: %w", name, store.ErrInvalidName)
	}
	ctx, cancel := db.ctx()
	defer cancel()
	br := &blobReader{db: db, name: name}
	var created int64
	err := db.pool.QueryRow(ctx, `SELECT c.id, c.size, b.created_ns FROM blobs b JOIN blob_contents c ON c.id = b.content_id
		WHERE b.name = $1`, name).Scan(&br.content, &br.size, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: blob %s: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open blob %s: %w", name, wrap(err))
	}
	br.mod = fromNS(created)
	return br, nil
}

// blobReader streams one blob content chunk by chunk. Not safe for
// concurrent use (as an *os.File's Read position is not).
type blobReader struct {
	db      *DB
	name    string
	content int64
	size    int64
	mod     time.Time
	seq     int    // next chunk to fetch
	read    int64  // bytes returned so far
	buf     []byte // rest of the current chunk
	closed  bool
}

func (r *blobReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, fs.ErrClosed
	}
	if len(r.buf) == 0 {
		if r.read >= r.size {
			return 0, io.EOF
		}
		ctx, cancel := r.db.ctx()
		err := r.db.pool.QueryRow(ctx, "SELECT data FROM blob_chunks WHERE content_id = $1 AND seq = $2",
			r.content, r.seq).Scan(&r.buf)
		cancel()
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("store: blob %s removed while read: %w", r.name, store.ErrNotFound)
		}
		if err != nil {
			return 0, fmt.Errorf("store: read blob %s: %w", r.name, wrap(err))
		}
		r.seq++
		if len(r.buf) == 0 {
			return 0, fmt.Errorf("store: blob %s chunk %d empty: %w", r.name, r.seq-1, store.ErrCorrupt)
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.read += int64(n)
	return n, nil
}

func (r *blobReader) Close() error {
	r.closed = true
	r.buf = nil
	return nil
}

// Stat describes the blob: its name, size and when it was named.
func (r *blobReader) Stat() (fs.FileInfo, error) { return blobInfo{r}, nil }

type blobInfo struct{ r *blobReader }

func (i blobInfo) Name() string       { return i.r.name }
func (i blobInfo) Size() int64        { return i.r.size }
func (i blobInfo) Mode() fs.FileMode  { return 0o600 }
func (i blobInfo) ModTime() time.Time { return i.r.mod }
func (i blobInfo) IsDir() bool        { return false }
func (i blobInfo) Sys() any           { return nil }

// SweepBlobs removes every blob that no job and no upload names and that
// is older than Options.SweepAfter (younger ones may be about to be named
// by a record another node is writing), and returns their names.
func (db *DB) SweepBlobs() ([]string, error) {
	var removed []string
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		cut := int64(1<<63 - 1)
		if db.opts.SweepAfter > 0 {
			cut = ns(time.Now().Add(-db.opts.SweepAfter))
		}
		rows, err := tx.Query(ctx, `DELETE FROM blobs b WHERE b.created_ns < $1
				AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.blob = b.name)
				AND NOT EXISTS (SELECT 1 FROM uploads u WHERE u.blob = b.name)
			RETURNING b.name`, cut)
		if err != nil {
			return err
		}
		if removed, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM blob_contents c WHERE c.created_ns < $1
			AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.content_id = c.id)`, cut)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: sweep blobs: %w", err)
	}
	return removed, nil
}

// AccountBytes returns the bytes of every blob the account's jobs and
// uploads name, counting a content shared by several names once.
func (db *DB) AccountBytes(account string) (int64, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT coalesce(sum(c.size), 0) FROM blob_contents c WHERE c.id IN (
			SELECT b.content_id FROM blobs b WHERE b.name IN (
				SELECT blob FROM jobs WHERE account = $1 AND blob <> ''
				UNION SELECT blob FROM uploads WHERE account = $1 AND blob <> ''))`, account).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: account bytes: %w", wrap(err))
	}
	return n, nil
}
