package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/earshot-dev/earshot/admin"
	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
)

const auditUsage = `usage:
  earshotd audit verify [--config FILE] [--data-dir DIR] [--set key=value]
      check the audit trail's hash chain from its anchor (the last entry its retention
      removed) to its head; prints what it checked, or names the first broken entry and
      exits 1. Works while the daemon runs (through its admin socket) and on a cluster's
      shared store (store.backend postgres).
`

func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(stderr, auditUsage)
		return errors.New("audit: missing or unknown subcommand")
	}
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := storeConfigFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := load()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	req := admin.Request{Op: admin.OpAuditVerify}
	var resp admin.Response
	db, err := app.OpenStore(ctx, cfg.Config, &bolt.Options{Timeout: 300 * time.Millisecond})
	switch {
	case errors.Is(err, store.ErrLocked):
		resp, err = admin.Call(ctx, cfg.DataDir, req)
		if err != nil {
			return fmt.Errorf("audit verify: %w", err)
		}
	case err != nil:
		return fmt.Errorf("audit verify: %w", err)
	default:
		resp = admin.Do(db, req)
		db.Close()
	}
	if r := resp.Report; r != nil {
		fmt.Fprintf(stdout, "anchor: entry %d\nchecked: %d entries\nhead: entry %d %s\n", r.AnchorSeq, r.Entries, r.HeadSeq, r.HeadHash)
	}
	if resp.Error != "" {
		return fmt.Errorf("audit verify: %s", resp.Error)
	}
	fmt.Fprintln(stdout, "audit chain ok")
	return nil
}
