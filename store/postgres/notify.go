package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// watchRetry is how long WatchQueue waits before reconnecting after its
// connection failed.
const watchRetry = time.Second

// WatchQueue calls notify whenever any node queues a pre-recorded job
// (CreateJob or UpdateJob committing a job into the queue: NOTIFY on
// QueueChannel), so idle workers on every node wake to claim it. It holds
// one connection of its own, LISTENing; when that fails it reconnects every
// watchRetry and calls notify once connected again (a job may have been
// queued meanwhile). notify must not block. WatchQueue blocks until ctx
// ends and then returns nil.
func (db *DB) WatchQueue(ctx context.Context, notify func()) error {
	for {
		_ = db.listen(ctx, notify)
		t := time.NewTimer(watchRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// listen connects, LISTENs and calls notify per notification until the
// connection fails or ctx ends.
func (db *DB) listen(ctx context.Context, notify func()) error {
	connectCtx, cancel := context.WithTimeout(ctx, db.opts.Timeout)
	conn, err := pgx.ConnectConfig(connectCtx, db.pool.Config().ConnConfig.Copy())
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+QueueChannel); err != nil {
		return err
	}
	notify()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		notify()
	}
}
