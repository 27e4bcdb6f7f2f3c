package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/sealed"
)

// existingSealer is the sealing layer's SealExisting (store/sealed).
type existingSealer interface {
	SealExisting(ctx context.Context) (sealed.SealReport, error)
}

// nodeQuiet is how long every node of a shared store must have been
// silent for keys seal-existing to run on it: beyond a node's heartbeat
// period (2 s) and the time others take it for stopped (6 s).
const nodeQuiet = 15 * time.Second

// cmdSealExisting is `earshotd keys seal-existing`: with the daemon (every
// node of a cluster) stopped, seal in place what the store held before
// encryption at rest was turned on (sealed.Store.SealExisting), then
// compact the database so its files no longer hold the clear copies
// (bolt.Compact, postgres.DB.Compact).
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
	if app.DataKeyFile(cfg.Config) == "" {
		return errors.New("keys seal-existing: encryption at rest is not configured: set store.encryption_key_file (earshotd keys generate-data-key) or the systemd credential " + app.CredentialName)
	}
	// A shared store: every node stopped, checked before the sealing layer
	// opens it (which moves the callback secrets into the keyring).
	var pg *postgres.DB
	if cfg.Store.Backend == daemon.BackendPostgres {
		if pg, err = postgres.Open(ctx, string(cfg.Store.DSN), &postgres.Options{NodeID: cfg.Cluster.NodeID}); err != nil {
			return fmt.Errorf("keys seal-existing: %w", err)
		}
		defer pg.Close()
		if err := checkNodesStopped(pg.Cluster()); err != nil {
			return fmt.Errorf("keys seal-existing: %w", err)
		}
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
	fmt.Fprintf(stdout, "sealed %d audio files (%d clear files overwritten with zeros), %d jobs, %d uploads, %d pending callback bodies\n",
		rep.Blobs, rep.Scrubbed, rep.Jobs, rep.Uploads, rep.Deliveries)
	if rep.KeyGone > 0 {
		fmt.Fprintf(stdout, "%d audio files were sealed already and their data keys are gone (a keyring restored from before them?): left as they are, unreadable\n", rep.KeyGone)
	}
	if err != nil {
		return fmt.Errorf("keys seal-existing: %w (run it again before the daemon starts)", err)
	}
	if pg != nil {
		if err := pg.Compact(ctx); err != nil {
			return fmt.Errorf("keys seal-existing: %w", err)
		}
		fmt.Fprintln(stdout, "rewrote the content tables (VACUUM FULL); the write-ahead log and base backups keep their copies until recycled or dropped")
		return nil
	}
	before, after, err := bolt.Compact(cfg.DataDir, &bolt.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("keys seal-existing: %w", err)
	}
	fmt.Fprintf(stdout, "compacted the database: %d -> %d bytes, the old file overwritten with zeros\n", before, after)
	return nil
}

// checkNodesStopped refuses while a node of the shared store c was heard
// from within nodeQuiet, naming them.
func checkNodesStopped(c store.Cluster) error {
	if c == nil {
		return nil
	}
	nodes, err := c.Nodes()
	if err != nil {
		return err
	}
	var alive []string
	for _, n := range nodes {
		if n.Age < nodeQuiet {
			alive = append(alive, fmt.Sprintf("%s (heard %s ago)", n.ID, n.Age.Round(time.Second)))
		}
	}
	if len(alive) > 0 {
		return fmt.Errorf("nodes of the shared store are running: %s: stop every node first", strings.Join(alive, ", "))
	}
	return nil
}
