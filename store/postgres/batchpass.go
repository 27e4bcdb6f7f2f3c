package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// ClaimBatchPass takes the oldest live job whose batch pass is queued, sets
// the pass running, increments Attempts and records this node and a lease
// of Options.JobLease, in one transaction, as ClaimNext does for
// pre-recorded jobs (see bolt.DB.ClaimBatchPass): rows another node is
// claiming are skipped (FOR UPDATE SKIP LOCKED), KeepLeases renews the
// lease while this node lives, and another node requeues the pass when it
// runs out. When no pass is queued it returns store.ErrEmpty.
func (db *DB) ClaimBatchPass() (*store.Job, error) {
	out, err := db.claimRow(func(j *store.Job) { j.BatchPass = store.BatchPassRunning },
		"SELECT "+jobColumns+" FROM jobs WHERE queued AND kind = $1 AND batch_pass = $2 "+
			"ORDER BY created_ns, id LIMIT 1 FOR UPDATE SKIP LOCKED", string(store.KindLive), string(store.BatchPassQueued))
	if err != nil {
		return nil, fmt.Errorf("store: claim batch pass: %w", err)
	}
	return out, nil
}

// PendingBatchPasses counts the live jobs whose batch pass is queued or
// running, on every node.
func (db *DB) PendingBatchPasses() (int, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var n int
	if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE queued AND kind = $1", string(store.KindLive)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count batch passes: %w", wrap(err))
	}
	return n, nil
}

// requeueBatchPasses puts the running batch passes that match where (a
// condition on the jobs table, with $3 and on as its parameters) back to
// queued and returns their job ids, oldest first. Rows another transaction
// holds are skipped.
func requeueBatchPasses(ctx context.Context, tx pgx.Tx, where string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, "SELECT "+jobColumns+" FROM jobs WHERE kind = $1 AND batch_pass = $2 AND "+where+
		" ORDER BY created_ns, id FOR UPDATE SKIP LOCKED", append([]any{string(store.KindLive), string(store.BatchPassRunning)}, args...)...)
	if err != nil {
		return nil, err
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Job, error) { return scanJob(r) })
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, j := range jobs {
		if !j.WasQuarantined() { // else written back ended, no pass
			j.BatchPass = store.BatchPassQueued
		}
		if err := writeJob(ctx, tx, j, "", 0); err != nil {
			return nil, err
		}
		ids = append(ids, j.ID)
	}
	return ids, nil
}
