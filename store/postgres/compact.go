package postgres

import (
	"context"
	"fmt"
)

// compactTables are the tables that hold content (records, audio, the
// callback secrets a sealed store moved out): Compact rewrites them.
var compactTables = []string{"jobs", "uploads", "deliveries", "blobs", "blob_contents", "blob_chunks", "callback_secrets"}

// Compact rewrites the tables that hold content (VACUUM FULL), so what
// deleted or rewritten rows left in their files (a record sealed in place
// by store/sealed's SealExisting, a callback secret moved into the
// keyring) is gone from them, then asks for a CHECKPOINT (which needs
// the pg_checkpoint role or a superuser; without it, the next one the
// server makes on its own). The write-ahead log and base backups keep
// their copies until they are recycled or dropped. VACUUM FULL locks each
// table while it rewrites it: run it with the nodes stopped.
func (db *DB) Compact(ctx context.Context) error {
	for _, t := range compactTables {
		if _, err := db.pool.Exec(ctx, "VACUUM FULL "+t); err != nil {
			return fmt.Errorf("store: compact %s: %w", t, wrap(err))
		}
	}
	_, _ = db.pool.Exec(ctx, "CHECKPOINT")
	return nil
}
