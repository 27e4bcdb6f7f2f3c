package daemon

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// AdminSocket is the name of the owner-only unix socket in the data dir
// through which `earshotd keys ...` works while the daemon holds the store.
const AdminSocket = "admin.sock"

// AdminRequest is one line sent on the admin socket.
type AdminRequest struct {
	Op      string `json:"op"` // keys.create, keys.list, keys.revoke, keys.secret
	Account string `json:"account,omitempty"`
	ID      string `json:"id,omitempty"`
	Path    string `json:"path,omitempty"` // store.backup: where to write
}

// AdminResponse answers an AdminRequest.
type AdminResponse struct {
	Error  string      `json:"error,omitempty"`
	Secret string      `json:"secret,omitempty"`
	Key    *store.Key  `json:"key,omitempty"`
	Keys   []store.Key `json:"keys,omitempty"`
}

// AdminAccount is the account whose keys are admin keys: besides the /v2
// API they may manage keys over HTTP (/admin/keys). `earshotd keys create
// --account admin` makes one; the .deb's postinst makes the first.
const AdminAccount = "admin"

// IsAdmin reports whether k is an admin key (a key of AdminAccount).
func IsAdmin(k store.Key) bool { return k.Account == AdminAccount }

// Admin carries out an admin request on an open store; the admin socket and
// the CLI (when no daemon runs) share it, and its key operations are the
// ones the HTTP admin endpoints use (createKey, listKeys, revokeKey).
func Admin(db store.Store, req AdminRequest) AdminResponse {
	var resp AdminResponse
	var err error
	switch req.Op {
	case "keys.create":
		var k store.Key
		resp.Secret, k, err = createKey(db, req.Account)
		resp.Key = &k
	case "keys.list":
		resp.Keys, err = listKeys(db)
	case "keys.revoke":
		err = revokeKey(db, req.ID)
	case AdminOpBackup:
		err = adminBackup(db, req.Path)
	case "keys.secret":
		var b []byte
		b, err = db.CallbackSecret(req.Account)
		resp.Secret = hex.EncodeToString(b)
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err != nil {
		resp = AdminResponse{Error: err.Error()}
	}
	return resp
}

// createKey makes a key for account; a malformed account is a
// *ValidationError naming the field.
func createKey(db store.Store, account string) (string, store.Key, error) {
	secret, k, err := db.CreateKey(account)
	if errors.Is(err, store.ErrInvalid) {
		return "", k, &ValidationError{Problems: []string{
			fmt.Sprintf("account %q must be 1 to 64 of A-Z a-z 0-9 . _ -", account)}}
	}
	return secret, k, err
}

// listKeys lists every key, revoked ones included, oldest first.
func listKeys(db store.Store) ([]store.Key, error) { return db.Keys() }

// revokeKey revokes a key at once; an unknown id is ErrNotFound.
func revokeKey(db store.Store, id string) error { return db.RevokeKey(id) }

// AuthenticateKey returns the active key whose secret this is;
// ErrUnauthorized for a missing, unknown or revoked one.
func (d *Daemon) AuthenticateKey(secret string) (store.Key, error) {
	if secret == "" {
		return store.Key{}, fmt.Errorf("%w: missing key", ErrUnauthorized)
	}
	return d.db.Authenticate(secret)
}

// CreateKey makes a key for account and returns its secret, shown only
// here (the store keeps its hash). A malformed account is a
// *ValidationError.
func (d *Daemon) CreateKey(ctx context.Context, account string) (string, store.Key, error) {
	return createKey(d.db, account)
}

// Keys lists every key, revoked ones included, oldest first; no secrets.
func (d *Daemon) Keys(ctx context.Context) ([]store.Key, error) { return listKeys(d.db) }

// RevokeKey revokes the key with this id; its secret stops authenticating
// at once and the live sessions it created end (close 4401). An unknown id
// is ErrNotFound.
func (d *Daemon) RevokeKey(ctx context.Context, id string) error {
	if err := revokeKey(d.db, id); err != nil {
		return err
	}
	d.live.EndKey(id)
	return nil
}

func (d *Daemon) listenAdmin() (net.Listener, error) {
	p := filepath.Join(d.cfg.DataDir, AdminSocket)
	// A socket left by a killed daemon: we hold the store lock, so no
	// other daemon serves it.
	os.Remove(p)
	ln, err := net.Listen("unix", p)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	return ln, nil
}

// serveAdmin answers admin requests, one JSON line each, until ctx ends.
func (d *Daemon) serveAdmin(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("admin socket: %w", err)
		}
		wg.Go(func() {
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			var req AdminRequest
			if err := json.NewDecoder(bufio.NewReader(io.LimitReader(c, 4096))).Decode(&req); err != nil {
				json.NewEncoder(c).Encode(AdminResponse{Error: "bad request"})
				return
			}
			c.SetReadDeadline(time.Time{})
			if req.Op != AdminOpBackup {
				c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			}
			resp := Admin(d.db, req)
			if req.Op == "keys.revoke" && resp.Error == "" {
				d.live.EndKey(req.ID)
			}
			if req.Op != "keys.list" {
				d.log.Info("admin request", "op", req.Op, "account_id", req.Account, "error", resp.Error)
			}
			json.NewEncoder(c).Encode(resp)
		})
	}
}

// CallAdmin sends one request to the admin socket of a running daemon.
func CallAdmin(ctx context.Context, dataDir string, req AdminRequest) (AdminResponse, error) {
	var resp AdminResponse
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", filepath.Join(dataDir, AdminSocket))
	if err != nil {
		return resp, fmt.Errorf("admin socket: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return resp, err
	}
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		return resp, fmt.Errorf("admin socket: %w", err)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
