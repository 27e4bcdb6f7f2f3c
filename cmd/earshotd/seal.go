package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/sealed"
)

// existingSealer is the sealing layer's SealExisting (store/sealed).
type existingSealer interface {
	SealExisting(ctx context.Context) (sealed.SealReport, error)
}

// cmdSealExisting is `earshotd keys seal-existing`: with the daemon
// stopped, seal in place what the data dir held before encryption at rest
// was turned on (sealed.Store.SealExisting), then compact the database so
// its free pages no longer hold the clear copies (bolt.Compact).
func cmdSealExisting(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keys seal-existing", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := storeConfigFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := load()
	if err != nil {
		return fmt.Errorf("keys seal-existing: %w", err)
	}
	if cfg.Store.Backend == daemon.BackendPostgres {
		return errors.New("keys seal-existing: the embedded store only: on a shared store (postgres) every node would have to be stopped, and its database's old rows are not reachable from here")
	}
	if app.DataKeyFile(cfg.Config) == "" {
		return errors.New("keys seal-existing: encryption at rest is not configured: set store.encryption_key_file (earshotd keys generate-data-key) or the systemd credential " + app.CredentialName)
	}
	db, err := app.OpenStore(ctx, cfg.Config, &bolt.Options{Timeout: 300 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("keys seal-existing: the daemon holds %s: stop it first (systemctl stop earshotd)", cfg.DataDir)
	}
	if err != nil {
		return fmt.Errorf("keys seal-existing: %w", err)
	}
	s, ok := db.(existingSealer)
	if !ok {
		db.Close()
		return errors.New("keys seal-existing: the store is not sealed")
	}
	rep, err := s.SealExisting(ctx)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(stdout, "sealed %d audio files (%d clear files overwritten with zeros), %d jobs, %d uploads\n", rep.Blobs, rep.Scrubbed, rep.Jobs, rep.Uploads)
	if err != nil {
		return fmt.Errorf("keys seal-existing: %w (run it again to go on)", err)
	}
	before, after, err := bolt.Compact(cfg.DataDir, &bolt.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("keys seal-existing: %w", err)
	}
	fmt.Fprintf(stdout, "compacted the database: %d -> %d bytes, the old file overwritten with zeros\n", before, after)
	return nil
}
