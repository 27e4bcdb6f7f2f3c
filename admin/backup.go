package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/store"
)

// fileStore is a store kept in one local directory (the embedded bbolt
// store): the only kind OpBackup copies.
type fileStore interface {
	Dir() string
	BackupFile(path string) (int64, error)
}

// backup carries out OpBackup: it writes a consistent copy of the store to
// path (bolt.DB.BackupFile: atomic, 0600). The daemon runs sandboxed
// (ProtectSystem=strict), where only its data directory is writable, so
// path must name a file directly in db.Dir() called backup-*.db; the CLI
// then moves it where the operator asked. This also keeps the op from ever
// replacing earshot.db or a blob.
func backup(st store.Store, path string) error {
	db, ok := st.(fileStore)
	if !ok {
		return errors.New("backup: this store lives in PostgreSQL: back it up with PostgreSQL's own tools (pg_dump, base backups)")
	}
	name := filepath.Base(path)
	if !filepath.IsAbs(path) || filepath.Dir(path) != db.Dir() ||
		!strings.HasPrefix(name, "backup-") || !strings.HasSuffix(name, ".db") || !store.ValidName(name) {
		return fmt.Errorf("backup: path %q must be %s/backup-*.db", path, db.Dir())
	}
	_, err := db.BackupFile(path)
	return err
}

// CallBackup asks the daemon running on dataDir, through its admin socket,
// to write a backup of its store to path (see backup for what path may
// be). It waits as long as the backup takes, bounded only by ctx.
func CallBackup(ctx context.Context, dataDir, path string) error {
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", filepath.Join(dataDir, Socket))
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := json.NewEncoder(c).Encode(Request{Op: OpBackup, Path: path}); err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	var resp Response
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("admin socket: %w", err)
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}
