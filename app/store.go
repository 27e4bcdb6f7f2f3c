package app

import (
	"context"
	"fmt"
	"os"

	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/postgres"
)

// OpenStore opens the store cfg names: the embedded bbolt store in
// cfg.DataDir, or the PostgreSQL store at cfg.Store.DSN as node
// cfg.Cluster.NodeID (migrating its schema; a newer schema is
// store.ErrSchemaTooNew). cfg must have passed Validate. bbolt o is passed
// to bolt.Open (nil for the daemon's defaults).
func OpenStore(ctx context.Context, cfg daemon.Config, o *bolt.Options) (store.Store, error) {
	switch cfg.Store.Backend {
	case daemon.BackendPostgres:
		// data_dir still holds the admin socket and live recordings.
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		db, err := postgres.Open(ctx, string(cfg.Store.DSN), &postgres.Options{NodeID: cfg.Cluster.NodeID, JobLease: cfg.Cluster.JobLease})
		if err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		return db, nil
	default:
		db, err := bolt.Open(cfg.DataDir, o)
		if err != nil {
			return nil, fmt.Errorf("open store in %s: %w", cfg.DataDir, err)
		}
		return db, nil
	}
}
