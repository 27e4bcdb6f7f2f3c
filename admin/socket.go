package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/internal/acceptloop"
	"github.com/earshot-dev/earshot/store"
)

// Socket is the name of the owner-only unix socket in the data dir through
// which `earshotd keys ...` works while the daemon holds the store.
const Socket = "admin.sock"

// Bounds of one connection: the request is one line of at most
// maxRequest bytes, read within ioTimeout; the answer is written within
// ioTimeout, except a backup's, which takes as long as the copy.
const (
	maxRequest = 4096
	ioTimeout  = 10 * time.Second
)

// Listen binds the admin socket in dataDir, owner-only. A socket left by a
// killed daemon is replaced: the caller holds the store's lock, so no other
// daemon serves it.
func Listen(dataDir string) (net.Listener, error) {
	p := filepath.Join(dataDir, Socket)
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

// Revoker is told of every key the socket revoked, so what the key opened
// ends at once (the daemon's live sessions, closed with 4401).
type Revoker interface {
	EndKey(keyID string)
}

// Server answers requests on the admin socket with Do on its store.
type Server struct {
	db      store.Store
	revoker Revoker
	log     *slog.Logger
}

// NewServer returns a server over db; r is told of revoked keys. It binds
// nothing: Run takes the listener Listen bound.
func NewServer(db store.Store, r Revoker, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{db: db, revoker: r, log: log}
}

// Run answers requests on ln, one JSON line each, until ctx ends; it then
// closes ln and returns nil once every connection's request is answered.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	accept := acceptloop.New(ln, "admin socket", s.log) // EMFILE waits, never ends the daemon
	for {
		c, err := accept.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("admin socket: %w", err)
		}
		wg.Go(func() { s.answer(c) })
	}
}

// answer reads one request from c, carries it out and writes the answer.
func (s *Server) answer(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(ioTimeout))
	var req Request
	if err := json.NewDecoder(bufio.NewReader(io.LimitReader(c, maxRequest))).Decode(&req); err != nil {
		json.NewEncoder(c).Encode(Response{Error: "bad request"})
		return
	}
	c.SetReadDeadline(time.Time{})
	if req.Op != OpBackup {
		c.SetWriteDeadline(time.Now().Add(ioTimeout))
	}
	resp := Do(s.db, req)
	if req.Op == OpRevokeKey && resp.Error == "" && s.revoker != nil {
		s.revoker.EndKey(req.ID)
	}
	if req.Op != OpListKeys {
		s.log.Info("admin request", "op", req.Op, "account_id", req.Account, "error", resp.Error)
	}
	if resp.Warning != "" {
		s.log.Error("admin request: audit entry not stored", "op", req.Op, "error", resp.Warning)
	}
	json.NewEncoder(c).Encode(resp)
}

// Call sends one request to the admin socket of the daemon running on
// dataDir; an answer with Error set is returned as an error too.
func Call(ctx context.Context, dataDir string, req Request) (Response, error) {
	var resp Response
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", filepath.Join(dataDir, Socket))
	if err != nil {
		return resp, fmt.Errorf("admin socket: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(ioTimeout))
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
