package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// jobColumns are read by scanJob, in its order.
const jobColumns = "head, params, result"

// scanJob decodes a job from its head (the JSON without Params and Result)
// and its raw Params and Result.
func scanJob(row pgx.Row) (*store.Job, error) {
	var head, params, result []byte
	if err := row.Scan(&head, &params, &result); err != nil {
		return nil, err
	}
	return decodeJob(head, params, result)
}

func decodeJob(head, params, result []byte) (*store.Job, error) {
	j := new(store.Job)
	if err := store.DecodeJobHead(head, j); err != nil {
		return nil, err
	}
	if j.Unreadable() != nil {
		// Seen as its quarantined form everywhere; written back where the
		// job would run (claimRow, Recover) or by any update.
		j = j.Quarantined(time.Now())
	}
	j.Params, j.Result = nil, nil
	if len(params) > 0 {
		j.Params = params
	}
	if len(result) > 0 {
		j.Result = result
	}
	return j, nil
}

// encodeJob returns j's head and checks that Params and Result are JSON.
func encodeJob(j *store.Job) ([]byte, error) {
	for _, raw := range []json.RawMessage{j.Params, j.Result} {
		if len(raw) > 0 && !json.Valid(raw) {
			return nil, fmt.Errorf("job %s: params or result is not valid JSON: %w", j.ID, store.ErrInvalid)
		}
	}
	h := *j
	h.Params, h.Result = nil, nil
	b, err := json.Marshal(&h)
	if err != nil {
		return nil, fmt.Errorf("job %s: encode: %v: %w", j.ID, err, store.ErrInvalid)
	}
	return b, nil
}

// nullBytes stores an empty raw message as NULL.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

// CreateJob stores a new job (see bolt.DB.CreateJob). A live job is owned
// by this node (Recover reports it only here).
func (db *DB) CreateJob(j *store.Job) error {
	rec, head, err := prepareJob(j)
	if err != nil {
		return fmt.Errorf("store: create job: %w", err)
	}
	err = db.update(func(ctx context.Context, tx pgx.Tx) error {
		return insertJob(ctx, tx, rec, head, db.opts.NodeID)
	})
	if err != nil {
		return fmt.Errorf("store: create job: %w", err)
	}
	return nil
}

// prepareJob checks a new job and returns the copy to store (times in
// UTC) and its head.
func prepareJob(j *store.Job) (*store.Job, []byte, error) {
	if j == nil {
		return nil, nil, fmt.Errorf("nil: %w", store.ErrInvalid)
	}
	rec := *j
	rec.CreatedAt = rec.CreatedAt.UTC()
	rec.CompletedAt = rec.CompletedAt.UTC()
	if err := rec.Validate(); err != nil {
		return nil, nil, err
	}
	head, err := encodeJob(&rec)
	if err != nil {
		return nil, nil, err
	}
	return &rec, head, nil
}

// insertJob inserts a prepared job owned by node and notifies the queue's
// listeners when it is queued.
func insertJob(ctx context.Context, tx pgx.Tx, rec *store.Job, head []byte, node string) error {
	tag, err := tx.Exec(ctx, `INSERT INTO jobs (id, account, kind, status, created_ns, queued, awaiting, blob, node, head, params, result, batch_pass, held)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.Account, string(rec.Kind), string(rec.Status), ns(rec.CreatedAt), rec.InQueue(), rec.AwaitingAudio,
		rec.Blob, node, head, nullBytes(rec.Params), nullBytes(rec.Result), string(rec.BatchPass), rec.Held())
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("job %s: %w", rec.ID, store.ErrExists)
	}
	if rec.InQueue() {
		return notifyQueued(ctx, tx)
	}
	return nil
}

// Job returns the job with the given id (one indexed read).
func (db *DB) Job(id string) (*store.Job, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	j, err := scanJob(db.pool.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", wrap(err))
	}
	return j, nil
}

// lockJob reads a job for update inside tx.
func lockJob(ctx context.Context, tx pgx.Tx, id string) (*store.Job, error) {
	j, err := scanJob(tx.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1 FOR UPDATE", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return j, err
}

// writeJob rewrites an existing job's columns from j. node and leaseNS are
// the claim: a pre-recorded job that is not processing keeps neither; a
// live job keeps its node (the one that ran the session, then the one that
// claimed its batch pass).
func writeJob(ctx context.Context, tx pgx.Tx, j *store.Job, node string, leaseNS int64) error {
	head, err := encodeJob(j)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE jobs SET status = $2, queued = $3, awaiting = $4, blob = $5, node = $6, lease_ns = $7,
			head = $8, params = $9, result = $10, batch_pass = $11, held = $12 WHERE id = $1`,
		j.ID, string(j.Status), j.InQueue(), j.AwaitingAudio, j.Blob, node, leaseNS, head, nullBytes(j.Params), nullBytes(j.Result),
		string(j.BatchPass), j.Held())
	if err != nil {
		return err
	}
	if j.InQueue() {
		return notifyQueued(ctx, tx)
	}
	return nil
}

// UpdateJob reads the job, calls fn on it and writes it back, with the
// deliveries fn returns, in one transaction holding the job's row lock
// (see bolt.DB.UpdateJob for the rules). fn must not call the store.
func (db *DB) UpdateJob(id string, fn store.UpdateFunc) (*store.Job, error) {
	var out *store.Job
	var fnErr error
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		old, err := lockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		var node string
		var lease int64
		if err := tx.QueryRow(ctx, "SELECT node, lease_ns FROM jobs WHERE id = $1", id).Scan(&node, &lease); err != nil {
			return err
		}
		j, ds, ferr, err := store.ApplyUpdate(old, fn)
		if ferr != nil {
			fnErr = ferr
			return ferr
		}
		if err != nil {
			return err
		}
		if j.Kind == store.KindPreRecorded && j.Status != store.StatusProcessing {
			node, lease = "", 0
		}
		if err := writeJob(ctx, tx, j, node, lease); err != nil {
			return err
		}
		for _, d := range ds {
			if err := insertDelivery(ctx, tx, d); err != nil {
				return err
			}
		}
		out = j
		return nil
	})
	if fnErr != nil && errors.Is(err, fnErr) {
		return nil, fnErr
	}
	if err != nil {
		return nil, fmt.Errorf("store: update job: %w", err)
	}
	return out, nil
}

// DeleteJob removes the job, its pending deliveries and its blob in one
// transaction; a held job is ErrHeld and stays.
func (db *DB) DeleteJob(id string) error {
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var blob string
		err := tx.QueryRow(ctx, "DELETE FROM jobs WHERE id = $1 AND NOT held RETURNING blob", id).Scan(&blob)
		if errors.Is(err, pgx.ErrNoRows) {
			var held bool
			if tx.QueryRow(ctx, "SELECT held FROM jobs WHERE id = $1", id).Scan(&held) == nil && held {
				return fmt.Errorf("job %s: %w", id, store.ErrHeld)
			}
			return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM deliveries WHERE job_id = $1", id); err != nil {
			return err
		}
		if blob != "" && store.ValidName(blob) {
			return removeBlob(ctx, tx, blob)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: delete job: %w", err)
	}
	return nil
}
