package admin

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/storetest"
)

// revoked records the keys the server reported revoked.
type revoked struct {
	mu  sync.Mutex
	ids []string // guarded by mu
}

func (r *revoked) EndKey(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
}

// TestServer: over a real unix socket, keys are created, listed and
// revoked (the revoker told), a malformed account is refused naming it, a
// line that is no request and an unknown op are answered with an error, the
// socket is owner-only, and Run returns nil once its context ends.
func TestServer(t *testing.T) {
	db := storetest.Open(t)
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, Socket)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v, %v; want 0600", fi, err)
	}
	var rev revoked
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- NewServer(db, &rev, nil).Run(ctx, ln) }()

	created, err := Call(ctx, dir, Request{Op: OpCreateKey, Account: "acme"})
	if err != nil || created.Secret == "" || created.Key == nil || created.Key.Account != "acme" {
		t.Fatalf("create: %+v, %v", created, err)
	}
	if k, err := db.Authenticate(created.Secret); err != nil || k.ID != created.Key.ID {
		t.Errorf("the secret returned does not authenticate: %+v, %v", k, err)
	}
	if _, err := Call(ctx, dir, Request{Op: OpCreateKey, Account: "no spaces"}); err == nil {
		t.Error("a malformed account was accepted")
	}
	list, err := Call(ctx, dir, Request{Op: OpListKeys})
	if err != nil || len(list.Keys) != 1 || list.Keys[0].ID != created.Key.ID {
		t.Errorf("list: %+v, %v", list, err)
	}
	if _, err := Call(ctx, dir, Request{Op: OpRevokeKey, ID: created.Key.ID}); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if _, err := db.Authenticate(created.Secret); err == nil {
		t.Error("a revoked key still authenticates")
	}
	rev.mu.Lock()
	if !slices.Equal(rev.ids, []string{created.Key.ID}) {
		t.Errorf("revoker told %v, want [%s]", rev.ids, created.Key.ID)
	}
	rev.mu.Unlock()
	if _, err := Call(ctx, dir, Request{Op: "keys.steal"}); err == nil {
		t.Error("an unknown op succeeded")
	}

	c, err := net.Dial("unix", filepath.Join(dir, Socket))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("not json\n"))
	var resp Response
	if err := json.NewDecoder(c).Decode(&resp); err != nil || resp.Error != "bad request" {
		t.Errorf("a line that is no request: %+v, %v", resp, err)
	}
	c.Close()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestDoWithoutDaemon: Do on an open store is what the CLI runs when no
// daemon holds it; a failure is the answer's Error.
func TestDoWithoutDaemon(t *testing.T) {
	db := storetest.Open(t)
	resp := Do(db, Request{Op: OpCreateKey, Account: "admin"})
	if resp.Error != "" || resp.Key == nil || resp.Key.Account != "admin" {
		t.Fatalf("create: %+v", resp)
	}
	if resp := Do(db, Request{Op: OpKeySecret, Account: "admin"}); resp.Error != "" || len(resp.Secret) != 64 {
		t.Errorf("callback secret: %+v", resp)
	}
	if resp := Do(db, Request{Op: OpRevokeKey, ID: "nope"}); resp.Error == "" {
		t.Error("revoking an unknown key succeeded")
	}
}
