package postgres

import (
	"cmp"
	"errors"
	"fmt"
	"math"
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
func (db *DB) ExpireJobs(kind store.Kind, cut store.Cutoff, limit int) ([]string, error) {
	if !kind.Valid() || limit <= 0 {
		return nil, fmt.Errorf("store: expire jobs: kind %q limit %d: %w", kind, limit, store.ErrInvalid)
	}
	ctx, cancel := db.ctx()
	defer cancel()
	accts, cuts := cutoffArrays(cut)
	rows, err := db.pool.Query(ctx, `SELECT id FROM jobs j WHERE kind = $1 AND status = ANY($2) AND NOT held
			AND created_ns < COALESCE((SELECT c FROM unnest($5::text[], $6::bigint[]) AS o(a, c) WHERE o.a = j.account), $3)
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.job_id = j.id)
		ORDER BY created_ns, id LIMIT $4`,
		string(kind), []string{string(store.StatusDone), string(store.StatusError)}, cutNS(cut.Before), limit, accts, cuts)
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
func (db *DB) ExpireUploads(cut store.Cutoff, limit int) ([]string, error) {
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
	accts, cuts := cutoffArrays(cut)
	rows, err := tx.Query(ctx, `DELETE FROM uploads WHERE id IN (
			SELECT id FROM uploads u
			WHERE created_ns < COALESCE((SELECT c FROM unnest($3::text[], $4::bigint[]) AS o(a, c) WHERE o.a = u.account), $1)
			ORDER BY created_ns, id LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING id, blob, created_ns`, cutNS(cut.Before), limit, accts, cuts)
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

// cutNS is a cut as a created_ns bound: a zero cut (keep) is the least
// bigint, which no record is created before.
func cutNS(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return ns(t)
}

// cutoffArrays is cut.Accounts as two parallel arrays for unnest.
func cutoffArrays(cut store.Cutoff) ([]string, []int64) {
	accts := make([]string, 0, len(cut.Accounts))
	cuts := make([]int64, 0, len(cut.Accounts))
	for a, t := range cut.Accounts {
		accts = append(accts, a)
		cuts = append(cuts, cutNS(t))
	}
	return accts, cuts
}
