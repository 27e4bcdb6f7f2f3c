package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// placeLock is the advisory lock key every node takes while placing a live
// session, so two placements never both take a node's last slot.
const placeLock = 0x6561727368_02

// activeLive is the SQL condition of a live job that occupies a slot on its
// node: not yet ended.
const activeLive = "kind = 'live' AND status IN ('queued', 'processing')"

// PlaceLive stores the new live job j on a node with a free live slot and
// returns that node. self is this node as it stands now (its LiveCapacity
// the slots this node takes, 0 when it takes none); it is a candidate even
// before its first heartbeat and is preferred when it has room. With remote
// the other nodes heard from within staleAfter that advertise a URL are
// candidates too, the one with the most free slots first (ties by id). A
// node's used slots are its live jobs not yet ended, counted in the same
// transaction under a cluster-wide lock, so placements never overfill a
// node. No candidate with room is store.ErrNoLiveRoom and nothing is stored.
func (db *DB) PlaceLive(j *store.Job, self store.Node, remote bool, staleAfter time.Duration) (store.Node, error) {
	rec, head, err := prepareJob(j)
	if err != nil {
		return store.Node{}, fmt.Errorf("store: place live job: %w", err)
	}
	self.ID = db.opts.NodeID
	var chosen store.Node
	err = db.update(func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(placeLock)); err != nil {
			return err
		}
		cands := []store.Node{self}
		if remote {
			rows, err := tx.Query(ctx, "SELECT id, advertise_url, live_capacity FROM nodes WHERE id <> $1 AND advertise_url <> '' "+
				"AND "+dbNowNS+" - last_seen_ns < $2 ORDER BY id", self.ID, staleAfter.Nanoseconds())
			if err != nil {
				return err
			}
			others, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Node, error) {
				var n store.Node
				return n, r.Scan(&n.ID, &n.AdvertiseURL, &n.LiveCapacity)
			})
			if err != nil {
				return err
			}
			cands = append(cands, others...)
		}
		ids := make([]string, len(cands))
		for i, n := range cands {
			ids[i] = n.ID
		}
		used := map[string]int{}
		rows, err := tx.Query(ctx, "SELECT node, count(*) FROM jobs WHERE "+activeLive+" AND node = ANY($1) GROUP BY node", ids)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return err
			}
			used[id] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		best := -1
		for i, n := range cands {
			n.LiveFree = max(n.LiveCapacity-used[n.ID], 0)
			cands[i] = n
			if n.LiveFree == 0 {
				continue
			}
			if i == 0 { // self, with room
				best = 0
				break
			}
			if best < 0 || n.LiveFree > cands[best].LiveFree {
				best = i
			}
		}
		if best < 0 {
			return store.ErrNoLiveRoom
		}
		chosen = cands[best]
		return insertJob(ctx, tx, rec, head, chosen.ID)
	})
	if err != nil {
		return store.Node{}, fmt.Errorf("store: place live job: %w", err)
	}
	return chosen, nil
}

// JobNode returns the node that owns a job: the one running a live job (or
// its batch pass), the one that claimed a processing pre-recorded job, ""
// for none.
func (db *DB) JobNode(id string) (string, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var node string
	err := db.pool.QueryRow(ctx, "SELECT node FROM jobs WHERE id = $1", id).Scan(&node)
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: job node: %w", wrap(err))
	}
	return node, nil
}

// TakeOrphanLive moves to this node every live job not yet ended whose node
// has not sent a heartbeat for staleAfter (on the database's clock), and
// returns them for this node to end. A node that never sent one owns no
// live job (it heartbeats before it serves), so a job is taken only from a
// node known to have stopped. Rows another node is taking are skipped, so
// concurrent callers take each job once.
func (db *DB) TakeOrphanLive(staleAfter time.Duration) ([]store.Orphan, error) {
	var out []store.Orphan
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, "SELECT j.node, "+jobColumns+" FROM jobs j JOIN nodes n ON n.id = j.node "+
			"WHERE j.kind = 'live' AND j.status IN ('queued', 'processing') AND j.node <> $1 AND "+dbNowNS+" - n.last_seen_ns >= $2 "+
			"ORDER BY j.created_ns, j.id FOR UPDATE OF j SKIP LOCKED", db.opts.NodeID, staleAfter.Nanoseconds())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Orphan, error) {
			var o store.Orphan
			var head, params, result []byte
			if err := r.Scan(&o.Node, &head, &params, &result); err != nil {
				return o, err
			}
			o.Job, err = decodeJob(head, params, result)
			return o, err
		})
		if err != nil {
			return err
		}
		for _, o := range out {
			if _, err := tx.Exec(ctx, "UPDATE jobs SET node = $2 WHERE id = $1", o.Job.ID, db.opts.NodeID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: take orphan live jobs: %w", err)
	}
	return out, nil
}

// OwnLive returns the ids of this node's live jobs not yet ended, oldest
// first: those it runs and those placed on it by another node
// (PlaceLive) whose client has not connected yet.
func (db *DB) OwnLive() ([]string, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT id FROM jobs WHERE "+activeLive+" AND node = $1 ORDER BY created_ns, id", db.opts.NodeID)
	if err != nil {
		return nil, fmt.Errorf("store: own live jobs: %w", wrap(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: own live jobs: %w", wrap(err))
	}
	return ids, nil
}
