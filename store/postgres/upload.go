package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// PutUpload stores u, replacing any upload with the same ID (see
// store.Upload.Validate for what is refused).
func (db *DB) PutUpload(u *store.Upload) error {
	if u == nil {
		return fmt.Errorf("store: put upload: nil: %w", store.ErrInvalid)
	}
	if err := u.Validate(); err != nil {
		return fmt.Errorf("store: put upload: %w", err)
	}
	rec := *u
	rec.CreatedAt = rec.CreatedAt.UTC()
	v, err := json.Marshal(&rec)
	if err != nil {
		return fmt.Errorf("store: put upload %s: %w", u.ID, err)
	}
	err = db.update(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO uploads (id, account, created_ns, blob, record) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (id) DO UPDATE SET account = EXCLUDED.account, created_ns = EXCLUDED.created_ns,
			blob = EXCLUDED.blob, record = EXCLUDED.record`,
			rec.ID, rec.Account, ns(rec.CreatedAt), rec.Blob, v)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: put upload %s: %w", u.ID, err)
	}
	return nil
}

// Upload returns the upload with the given id.
func (db *DB) Upload(id string) (*store.Upload, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var v []byte
	err := db.pool.QueryRow(ctx, "SELECT record FROM uploads WHERE id = $1", id).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: upload %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: upload %s: %w", id, wrap(err))
	}
	u := new(store.Upload)
	if err := json.Unmarshal(v, u); err != nil {
		return nil, fmt.Errorf("store: upload %s: %w: %w", id, store.ErrCorrupt, err)
	}
	return u, nil
}

// DeleteUpload removes the upload record (not its blob, which a job may
// have linked). A missing upload is not an error.
func (db *DB) DeleteUpload(id string) error {
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM uploads WHERE id = $1", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete upload %s: %w", id, err)
	}
	return nil
}
