package main

import (
	"path/filepath"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/store/sealed"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/admin"
	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/store"
)

const keysUsage = `usage:
  (every subcommand also takes --config FILE and --set key=value, as run does, and
   EARSHOT_* variables: with store.backend postgres it opens the shared store)
  earshotd keys create --data-dir DIR --account NAME [--scopes S,S...] [--expires-at T]
                                                       prints only the new key
                                                       (keys of account "admin" are admin keys:
                                                       they may also manage keys over HTTP, /admin/keys);
                                                       --scopes: jobs:read, jobs:write, audio:read, live,
                                                       admin (admin keys only); default every scope;
                                                       --expires-at: RFC 3339 time, or a duration from
                                                       now (720h); default never
  earshotd keys list   --data-dir DIR
  earshotd keys revoke --data-dir DIR --id ID
  earshotd keys secret --data-dir DIR --account NAME   prints the account's callback signing secret (hex)
  earshotd keys generate-data-key FILE                 writes a new data key-encryption key (32 random
                                                       bytes, mode 0600) for store.encryption_key_file
  earshotd keys rotate-data-key --data-dir DIR --new-key-file FILE
                                                       re-wraps every data key under FILE's key while the
                                                       daemon runs (it reads FILE: owner-only, readable by
                                                       the daemon); then set store.encryption_key_file to FILE
  earshotd keys seal-existing --data-dir DIR           with the daemon (every node) stopped and a data key
                                                       configured: seals what the store held before
                                                       encryption at rest was turned on (audio, jobs,
                                                       uploads), zeroes the clear files and compacts the
                                                       database
`

func cmdKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return errors.New("keys: missing subcommand")
	}
	if args[0] == "generate-data-key" {
		if len(args) != 2 {
			return errors.New("usage: earshotd keys generate-data-key FILE")
		}
		id, err := sealed.GenerateKeyFile(args[1])
		if err != nil {
			return fmt.Errorf("keys generate-data-key: %w", err)
		}
		fmt.Fprintf(stderr, "wrote key %s to %s\n", id, args[1])
		return nil
	}
	if args[0] == "seal-existing" {
		return cmdSealExisting(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := storeConfigFlags(fs)
	acct := fs.String("account", "", "account name (create)")
	id := fs.String("id", "", "key id (revoke)")
	scopes := fs.String("scopes", "", "comma-separated scopes of the new key (create; default every scope)")
	expires := fs.String("expires-at", "", "when the new key expires: RFC 3339, or a duration from now such as 720h (create; default never)")
	newKey := fs.String("new-key-file", "", "the new key-encryption key (rotate-data-key)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := load()
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	req := admin.Request{Op: "keys." + args[0], Account: *acct, ID: *id}
	if args[0] == "create" {
		if req.Scopes, req.ExpiresAt, err = parseGrant(*scopes, *expires, time.Now()); err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
	}
	switch args[0] {
	case "create", "secret":
		if *acct == "" {
			return fmt.Errorf("keys %s: --account is required", args[0])
		}
	case "revoke":
		if *id == "" {
			return errors.New("keys revoke: --id is required")
		}
	case "list":
	case "rotate-data-key":
		if *newKey == "" {
			return errors.New("keys rotate-data-key: --new-key-file is required")
		}
		abs, err := filepath.Abs(*newKey)
		if err != nil {
			return err
		}
		req = admin.Request{Op: admin.OpRotateDataKey, Path: abs}
	default:
		fmt.Fprint(stderr, keysUsage)
		return fmt.Errorf("keys: unknown subcommand %q", args[0])
	}
	resp, err := adminRequest(ctx, cfg.Config, req)
	if err != nil {
		return err
	}
	switch args[0] {
	case "create", "secret":
		fmt.Fprintln(stdout, resp.Secret)
	case "list":
		for _, k := range resp.Keys {
			state := "active"
			if !k.RevokedAt.IsZero() {
				state = "revoked " + k.RevokedAt.Format(time.RFC3339)
			}
			if !k.ExpiresAt.IsZero() && k.Active() {
				state = "expires " + k.ExpiresAt.Format(time.RFC3339)
				if k.Expired(time.Now()) {
					state = "expired " + k.ExpiresAt.Format(time.RFC3339)
				}
			}
			scopes := "all"
			if k.Scopes != nil {
				scopes = joinScopes(k.Scopes)
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s...\t%s\t%s\t%s\n", k.ID, k.Account, k.Prefix, k.CreatedAt.Format(time.RFC3339), scopes, state)
		}
	case "revoke":
		fmt.Fprintln(stderr, "revoked", *id)
	case "rotate-data-key":
		fmt.Fprintf(stderr, "re-wrapped %d data keys; set store.encryption_key_file to %s\n", resp.Rewrapped, *newKey)
	}
	return nil
}

// adminRequest runs an admin request on the store directly (admin.Do), or
// through the running daemon's admin socket (admin.Call) when the daemon
// holds the embedded store. A shared store (postgres) is opened directly,
// running daemons or not.
func adminRequest(ctx context.Context, cfg daemon.Config, req admin.Request) (admin.Response, error) {
	db, err := app.OpenStore(ctx, cfg, &bolt.Options{Timeout: 300 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return admin.Call(ctx, cfg.DataDir, req)
	}
	if err != nil {
		return admin.Response{}, err
	}
	defer db.Close()
	resp := admin.Do(db, req)
	if resp.Warning != "" {
		fmt.Fprintln(os.Stderr, "earshotd: warning:", resp.Warning)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// parseGrant reads keys create's --scopes (comma-separated; "" every
// scope) and --expires-at (RFC 3339, or a positive duration from now; ""
// never). The names are checked by admin.CreateKey, as over HTTP.
func parseGrant(scopes, expires string, now time.Time) ([]store.Scope, time.Time, error) {
	var out []store.Scope
	if scopes != "" {
		for s := range strings.SplitSeq(scopes, ",") {
			out = append(out, store.Scope(strings.TrimSpace(s)))
		}
	}
	if expires == "" {
		return out, time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, expires); err == nil {
		return out, t, nil
	}
	d, err := time.ParseDuration(expires)
	if err != nil || d <= 0 {
		return nil, time.Time{}, fmt.Errorf("--expires-at %q: want an RFC 3339 time or a positive duration such as 720h", expires)
	}
	return out, now.Add(d), nil
}

func joinScopes(scopes []store.Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
}

// storeConfigFlags adds the flags of a command that opens the store the
// configuration names (keys, audit): --config, --data-dir and --set. The
// function it returns loads that configuration once fs is parsed.
func storeConfigFlags(fs *flag.FlagSet) func() (app.Config, error) {
	cfgPath := fs.String("config", "", "YAML config file (the store it names: store.backend, store.dsn, data_dir)")
	dataDir := fs.String("data-dir", "", "data directory (default /var/lib/earshot)")
	var sets setFlags
	fs.Var(&sets, "set", "`key.path=value`: set any config key, as for run (repeatable)")
	return func() (app.Config, error) {
		return loadConfig(*cfgPath, os.Environ(), func(c *app.Config) error {
			if *dataDir != "" {
				c.DataDir = *dataDir
			}
			return sets.apply(c)
		})
	}
}
