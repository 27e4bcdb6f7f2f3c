package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// AppendBlob adds parts to the end of the blob name, each part one chunk,
// in one transaction (creating the blob when there is none), when the blob
// holds at bytes (0 for none), and returns the blob's size after. Another
// size is store.ErrExists and nothing is added: a retry of an append that
// committed unseen cannot add its parts twice. A live recording reaches the shared store this
// way while the session runs, so what was appended outlives its node. Empty
// parts are skipped; a part over ChunkSize is store.ErrTooLarge.
func (db *DB) AppendBlob(name string, at int64, parts ...[]byte) (int64, error) {
	if !store.ValidName(name) {
		return 0, fmt.Errorf("store: append blob %q: %w", name, store.ErrInvalidName)
	}
	var size int64
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var content int64
		err := tx.QueryRow(ctx, "SELECT c.id, c.size FROM blobs b JOIN blob_contents c ON c.id = b.content_id "+
			"WHERE b.name = $1 FOR UPDATE OF c", name).Scan(&content, &size)
		if errors.Is(err, pgx.ErrNoRows) {
			size = 0
			err = tx.QueryRow(ctx, "INSERT INTO blob_contents (size, created_ns) VALUES (0, $1) RETURNING id", ns(time.Now())).Scan(&content)
			if err == nil {
				err = nameBlob(ctx, tx, name, content)
			}
		}
		if err != nil {
			return err
		}
		if size != at {
			return fmt.Errorf("blob holds %d bytes, not %d: %w", size, at, store.ErrExists)
		}
		var seq int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(seq) + 1, 0) FROM blob_chunks WHERE content_id = $1", content).Scan(&seq); err != nil {
			return err
		}
		for _, p := range parts {
			if len(p) == 0 {
				continue
			}
			if len(p) > ChunkSize {
				return fmt.Errorf("part of %d bytes > chunk size %d: %w", len(p), ChunkSize, store.ErrTooLarge)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO blob_chunks (content_id, seq, data) VALUES ($1, $2, $3)", content, seq, p); err != nil {
				return err
			}
			seq++
			size += int64(len(p))
		}
		_, err = tx.Exec(ctx, "UPDATE blob_contents SET size = $2 WHERE id = $1", content, size)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: append blob %s: %w", name, err)
	}
	return size, nil
}

// PatchBlobHead replaces the first chunk of the blob name with head, which
// must be as long as that chunk (a WAV header written with an unknown
// length, given its real sizes once the length is known). A first chunk of
// another length is store.ErrInvalid; no blob is store.ErrNotFound.
func (db *DB) PatchBlobHead(name string, head []byte) error {
	if !store.ValidName(name) {
		return fmt.Errorf("store: patch blob %q: %w", name, store.ErrInvalidName)
	}
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var content int64
		err := tx.QueryRow(ctx, "SELECT content_id FROM blobs WHERE name = $1", name).Scan(&content)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("blob %s: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "UPDATE blob_chunks SET data = $2 WHERE content_id = $1 AND seq = 0 AND length(data) = $3",
			content, head, len(head))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("blob %s: first chunk is not %d bytes: %w", name, len(head), store.ErrInvalid)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: patch blob %s: %w", name, err)
	}
	return nil
}
