// Command earshotd is the earshot appliance daemon, its administration
// tool and a client of its API: run the service, manage API keys,
// transcribe a file offline, stream or submit audio to a running daemon.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: earshotd <command> [flags]

commands:
  run                      start the daemon (--config FILE, --listen ADDR, --data-dir DIR, ...)
  keys create|list|revoke  manage API keys (--data-dir DIR; works while the daemon runs)
  transcribe [--request REQ.json] FILE
                           transcribe a file offline with the daemon's engines and add-ons
  stream [--url URL] [--key KEY] [--fast] [--json] FILE|-
                           stream a WAV file (or raw audio: --encoding E --sample-rate R) to a
                           daemon's live session at real time; print its transcripts and record
  submit [--url URL] [--key KEY] [--request REQ.json] [--json] FILE
                           upload a file to a daemon, run a pre-recorded job, print its result
                           (both: key from --key, $EARSHOT_KEY or .data/first-key; URL from
                           --url, $EARSHOT_URL or http://127.0.0.1:8080)
  config check [FILE]      check a config file: "ok" or each problem with its key and line
  service install|uninstall|start|stop|status [--root DIR]
                           install earshotd.service (hardened systemd unit) and manage it
  backup --data-dir DIR FILE   write a consistent copy of the database (works while the daemon runs)
  restore --data-dir DIR [--key-file KEY ...] FILE
                           replace the database with a backup (daemon stopped; keeps earshot.db.bak),
                           and merge a sealed backup's data keys (FILE.keys) into DIR/keyring
                           (--key-file: re-wrap them under the first KEY, for a backup from before a rotation)
  audit verify             check the audit trail's hash chain; names the first broken entry (exit 1)
  kamailio config|dispatcher   print the Kamailio config (and node list) that spreads SIP calls over a cluster
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "earshotd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("missing command")
	}
	switch args[0] {
	case "run":
		return runManaged(ctx, args[1:], stdout, stderr)
	case "keys":
		return cmdKeys(ctx, args[1:], stdout, stderr)
	case "transcribe":
		return cmdTranscribe(ctx, args[1:], stdout, stderr)
	case "stream":
		return cmdStream(ctx, args[1:], stdout, stderr)
	case "submit":
		return cmdSubmit(ctx, args[1:], stdout, stderr)
	case "config":
		return cmdConfig(ctx, args[1:], stdout, stderr)
	case "service":
		return cmdService(ctx, args[1:], stdout, stderr)
	case "backup":
		return cmdBackup(ctx, args[1:], stdout, stderr)
	case "restore":
		return cmdRestore(ctx, args[1:], stdout, stderr)
	case "audit":
		return cmdAudit(ctx, args[1:], stdout, stderr)
	case "kamailio":
		return cmdKamailio(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
