package postgres

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// ExpireJobs deletes up to limit finished (done or error) jobs of kind
// created strictly before before, oldest first, each with its blob (through
// DeleteJob), and returns their ids; a job with a pending delivery or under
// a legal hold is kept (see bolt.DB.ExpireJobs). A job deleted meanwhile, by its owner or by
// another node expiring too, is skipped.
func (db *DB) ExpireJobs(kind store.Kind, before time.Time, limit int) ([]string, error) {
	if !kind.Valid() || limit <= 0 {
		return nil, fmt.Errorf("store: expire jobs: kind %q limit %d: %w", kind, limit, store.ErrInvalid)
	}
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, `SELECT id FROM jobs j WHERE kind = $1 AND status = ANY($2) AND created_ns < $3 AND NOT held
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.job_id = j.id)
		ORDER BY created_ns, id LIMIT $4`,
		string(kind), []string{string(store.StatusDone), string(store.StatusError)}, ns(before), limit)
	if err != nil {
		return nil, fmt.Errorf("store: expire jobs: %w", wrap(err))
	}
	cands, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: expire jobs: %w", wrap(err))
	}
	var deleted []string
	for _, id := range cands {
		err := db.DeleteJob(id)
		switch {
		case err == nil:
			deleted = append(deleted, id)
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrHeld):
		default:
			return deleted, fmt.Errorf("store: expire jobs: %w", err)
		}
	}
	return deleted, nil
}

// ExpireUploads deletes up to limit uploads created strictly before
// before, oldest first, with their blobs, and returns their ids (see
// bolt.DB.ExpireUploads). Record and blob go in one transaction.
func (db *DB) ExpireUploads(before time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: expire uploads: limit %d: %w", limit, store.ErrInvalid)
	}
	ctx, cancel := db.ctx()
	defer cancel()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: expire uploads: %w", wrap(err))
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, `DELETE FROM uploads WHERE id IN (
			SELECT id FROM uploads WHERE created_ns < $1 ORDER BY created_ns, id LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING id, blob, created_ns`, ns(before), limit)
	if err != nil {
		return nil, fmt.Errorf("store: expire uploads: %w", wrap(err))
	}
	type gone struct {
		id, blob string
		t        int64
	}
	ups, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (gone, error) {
		var g gone
		return g, r.Scan(&g.id, &g.blob, &g.t)
	})
	if err != nil {
		return nil, fmt.Errorf("store: expire uploads: %w", wrap(err))
	}
	slices.SortFunc(ups, func(a, b gone) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.id, b.id)) })
	deleted := make([]string, 0, len(ups))
	for _, u := range ups {
		if u.blob != "" && store.ValidName(u.blob) {
			if err := removeBlob(ctx, tx, u.blob); err != nil {
				return nil, fmt.Errorf("store: expire uploads: %w", wrap(err))
			}
		}
		deleted = append(deleted, u.id)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("store: expire uploads: %w", wrap(err))
	}
	return deleted, nil
}
