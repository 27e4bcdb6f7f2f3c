package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// QueueChannel is the LISTEN/NOTIFY channel on which a transaction that
// queues a pre-recorded job notifies (at its commit) every listening node.
const QueueChannel = "earshot_queue"

func notifyQueued(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", QueueChannel)
	return err
}

// ClaimNext takes the oldest queued job of kind, sets it processing,
// increments Attempts and records this node and a lease of
// Options.JobLease (on the database's clock, so nodes' clocks need not
// agree), in one transaction; KeepLeases renews it while the node lives. Rows another node is claiming are
// skipped (FOR UPDATE SKIP LOCKED), so no job is claimed twice. When
// nothing is queued it returns store.ErrEmpty.
func (db *DB) ClaimNext(kind store.Kind) (*store.Job, error) {
	return db.claim(kind, "SELECT "+jobColumns+" FROM jobs WHERE queued AND kind = $1 "+
		"ORDER BY created_ns, id LIMIT 1 FOR UPDATE SKIP LOCKED", string(kind))
}

// ClaimNextAfter is ClaimNext taking turns between accounts (see
// bolt.DB.ClaimNextAfter): the oldest job of the first account after
// `after` in byte order that has a queued job, wrapping around.
func (db *DB) ClaimNextAfter(kind store.Kind, after string) (*store.Job, error) {
	return db.claim(kind, "SELECT "+jobColumns+" FROM jobs WHERE queued AND kind = $1 "+
		"ORDER BY account <= $2, account, created_ns, id LIMIT 1 FOR UPDATE SKIP LOCKED", string(kind), after)
}

func (db *DB) claim(kind store.Kind, query string, args ...any) (*store.Job, error) {
	if !kind.Valid() {
		return nil, fmt.Errorf("store: claim: kind %q: %w", kind, store.ErrInvalid)
	}
	if kind == store.KindLive {
		// Live jobs in the queue are batch passes (ClaimBatchPass).
		return nil, fmt.Errorf("store: claim %s: %w", kind, store.ErrEmpty)
	}
	out, err := db.claimRow(func(j *store.Job) { j.Status = store.StatusProcessing }, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: claim %s: %w", kind, err)
	}
	return out, nil
}

// claimRow runs query (one job row, FOR UPDATE SKIP LOCKED) and, in the same
// transaction, marks the job with mark, counts the attempt and leases it to
// this node for Options.JobLease. No row is store.ErrEmpty.
func (db *DB) claimRow(mark func(*store.Job), query string, args ...any) (*store.Job, error) {
	for {
		out, quarantined, err := db.claimOne(mark, query, args...)
		if err != nil || !quarantined {
			return out, err
		}
		// The row was a quarantined job, now written back ended: claim the next.
	}
}

func (db *DB) claimOne(mark func(*store.Job), query string, args ...any) (out *store.Job, quarantined bool, err error) {
	err = db.update(func(ctx context.Context, tx pgx.Tx) error {
		out, quarantined = nil, false
		old, err := scanJob(tx.QueryRow(ctx, query, args...))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrEmpty
		}
		if err != nil {
			return err
		}
		if old.WasQuarantined() {
			quarantined = true
			return writeJob(ctx, tx, old, "", 0)
		}
		j := old.Clone()
		mark(j)
		j.Attempts++
		if err := writeJob(ctx, tx, j, db.opts.NodeID, 0); err != nil {
			return err
		}
		out = j
		_, err = tx.Exec(ctx, "UPDATE jobs SET lease_ns = "+dbNowNS+" + $2 WHERE id = $1", j.ID, db.opts.JobLease.Nanoseconds())
		return err
	})
	return out, quarantined, err
}

// AwaitingAudio returns the queued pre-recorded jobs whose audio_url is
// still to be fetched, oldest first.
func (db *DB) AwaitingAudio() ([]*store.Job, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT "+jobColumns+" FROM jobs WHERE kind = $1 AND status = $2 AND awaiting "+
		"ORDER BY created_ns, id", string(store.KindPreRecorded), string(store.StatusQueued))
	if err != nil {
		return nil, fmt.Errorf("store: jobs awaiting audio: %w", wrap(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Job, error) { return scanJob(r) })
	if err != nil {
		return nil, fmt.Errorf("store: jobs awaiting audio: %w", wrap(err))
	}
	return out, nil
}

// Recover runs once as this node starts (see bolt.DB.Recover), over what
// this node owns: the pre-recorded jobs it had claimed go back to the queue
// (or, after a crash, are reported as suspects), and the live jobs it ran
// that are still queued or processing are reported for it to finalise.
// The batch passes it was running go back to the queue (also after a
// crash: Attempts bounds a pass that crashes every run). Other nodes' work
// is theirs.
func (db *DB) Recover(o store.RecoverOptions) (store.RecoverReport, error) {
	var rep store.RecoverReport
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		rep = store.RecoverReport{}
		rows, err := tx.Query(ctx, "SELECT "+jobColumns+" FROM jobs WHERE kind = $1 AND status = $2 AND node = $3 "+
			"ORDER BY created_ns, id FOR UPDATE", string(store.KindPreRecorded), string(store.StatusProcessing), db.opts.NodeID)
		if err != nil {
			return err
		}
		claimed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Job, error) { return scanJob(r) })
		if err != nil {
			return err
		}
		for _, j := range claimed {
			if j.WasQuarantined() {
				if err := writeJob(ctx, tx, j, "", 0); err != nil {
					return err
				}
				rep.Quarantined = append(rep.Quarantined, j.ID)
				continue
			}
			if o.Crashed {
				rep.Suspects = append(rep.Suspects, j.ID)
				continue
			}
			j.Status = store.StatusQueued
			if err := writeJob(ctx, tx, j, "", 0); err != nil {
				return err
			}
			rep.Requeued = append(rep.Requeued, j.ID)
		}
		type entry struct {
			id string
			t  int64
		}
		rows, err = tx.Query(ctx, "SELECT id, created_ns FROM jobs WHERE kind = $1 AND status = ANY($2) AND node = $3",
			string(store.KindLive), []string{string(store.StatusQueued), string(store.StatusProcessing)}, db.opts.NodeID)
		if err != nil {
			return err
		}
		live, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
			var e entry
			return e, r.Scan(&e.id, &e.t)
		})
		if err != nil {
			return err
		}
		slices.SortFunc(live, func(a, b entry) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.id, b.id)) })
		for _, e := range live {
			rep.Live = append(rep.Live, e.id)
		}
		rep.BatchPasses, err = requeueBatchPasses(ctx, tx, "node = $3", db.opts.NodeID)
		return err
	})
	if err != nil {
		return store.RecoverReport{}, fmt.Errorf("store: recover: %w", err)
	}
	return rep, nil
}
