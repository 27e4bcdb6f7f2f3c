package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Node is one node's last heartbeat: who it is, where it is reached and
// its load then.
type Node struct {
	ID           string
	AdvertiseURL string
	LastSeen     time.Time // on the database's clock
	Age          time.Duration
	LiveCapacity int // live sessions it takes
	LiveFree     int // live sessions it could still open
	RunningJobs  int // pre-recorded jobs and batch passes it was running
}

// Heartbeat records this node's state (n.ID is ignored: the node is
// Options.NodeID) with the database's clock as its last sight.
func (db *DB) Heartbeat(n Node) error {
	ctx, cancel := db.ctx()
	defer cancel()
	_, err := db.pool.Exec(ctx, `INSERT INTO nodes (id, advertise_url, last_seen_ns, live_capacity, live_free, running_jobs)
		VALUES ($1, $2, `+dbNowNS+`, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET advertise_url = EXCLUDED.advertise_url, last_seen_ns = EXCLUDED.last_seen_ns,
			live_capacity = EXCLUDED.live_capacity, live_free = EXCLUDED.live_free, running_jobs = EXCLUDED.running_jobs`,
		db.opts.NodeID, n.AdvertiseURL, n.LiveCapacity, n.LiveFree, n.RunningJobs)
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", wrap(err))
	}
	return nil
}

// Nodes returns every node that ever sent a heartbeat, by id, with the age
// of its last one on the database's clock.
func (db *DB) Nodes() ([]Node, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT id, advertise_url, last_seen_ns, "+dbNowNS+" - last_seen_ns, live_capacity, live_free, running_jobs "+
		"FROM nodes ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("store: nodes: %w", wrap(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Node, error) {
		var n Node
		var seen, age int64
		err := r.Scan(&n.ID, &n.AdvertiseURL, &seen, &age, &n.LiveCapacity, &n.LiveFree, &n.RunningJobs)
		n.LastSeen, n.Age = time.Unix(0, seen).UTC(), time.Duration(max(age, 0))
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: nodes: %w", wrap(err))
	}
	return out, nil
}
