package postgres

import (
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/jackc/pgx/v5"
)

// Heartbeat records this node's state (n.ID is ignored: the node is
// Options.NodeID) with the database's clock as its last sight.
func (db *DB) Heartbeat(n store.Node) error {
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
func (db *DB) Nodes() ([]store.Node, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT id, advertise_url, last_seen_ns, "+dbNowNS+" - last_seen_ns, live_capacity, live_free, running_jobs "+
		"FROM nodes ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("store: nodes: %w", wrap(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Node, error) {
		var n store.Node
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
