package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// dbNowNS is the database's clock in Unix nanoseconds: leases of claimed
// jobs are set and compared on it, so nodes' clocks need not agree.
const dbNowNS = "(extract(epoch from clock_timestamp()) * 1000000000)::bigint"

// RenewLeases extends the lease of every pre-recorded job this node is
// processing, and of every batch pass it is running, to Options.JobLease
// from now and returns how many it holds.
func (db *DB) RenewLeases() (int, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	tag, err := db.pool.Exec(ctx, "UPDATE jobs SET lease_ns = "+dbNowNS+" + $4 WHERE node = $3 AND "+
		"(kind = $1 AND status = $2 OR kind = $5 AND batch_pass = $6)",
		string(store.KindPreRecorded), string(store.StatusProcessing), db.opts.NodeID, db.opts.JobLease.Nanoseconds(),
		string(store.KindLive), string(store.BatchPassRunning))
	if err != nil {
		return 0, fmt.Errorf("store: renew leases: %w", wrap(err))
	}
	return int(tag.RowsAffected()), nil
}

// ReclaimExpired puts back in the queue every pre-recorded job and batch
// pass whose node's lease ran out (the node died, or lost the database for
// longer than the lease) and returns their ids, oldest first (the jobs,
// then the batch passes). The job keeps its
// Attempts, so the daemon's attempt limit still ends a job that kills
// every node that takes it. Any node may call it; the rows are locked with
// SKIP LOCKED, so concurrent callers requeue each job once.
func (db *DB) ReclaimExpired() ([]string, error) {
	var ids []string
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+jobColumns+" FROM jobs WHERE kind = $1 AND status = $2 AND lease_ns < "+dbNowNS+
			" ORDER BY created_ns, id FOR UPDATE SKIP LOCKED", string(store.KindPreRecorded), string(store.StatusProcessing))
		if err != nil {
			return err
		}
		jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Job, error) { return scanJob(r) })
		if err != nil {
			return err
		}
		for _, j := range jobs {
			j.Status = store.StatusQueued
			if err := writeJob(ctx, tx, j, "", 0); err != nil {
				return err
			}
			ids = append(ids, j.ID)
		}
		passes, err := requeueBatchPasses(ctx, tx, "lease_ns < "+dbNowNS)
		ids = append(ids, passes...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: reclaim expired leases: %w", err)
	}
	return ids, nil
}

// KeepLeases renews this node's leases and requeues other nodes' expired
// ones every third of Options.JobLease until ctx ends, then returns nil.
// report is called after each round with the jobs requeued and the round's
// error (either may be empty); it must not block long.
func (db *DB) KeepLeases(ctx context.Context, report func(requeued []string, err error)) error {
	t := time.NewTicker(db.opts.JobLease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		_, err := db.RenewLeases()
		ids, rerr := db.ReclaimExpired()
		if err == nil {
			err = rerr
		}
		report(ids, err)
	}
}
