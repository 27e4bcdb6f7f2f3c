package sip

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-dev/earshot/internal/acceptloop"
)

// The door's TCP connections are bounded, so that neither a refused source
// nor an allowed one can hold the daemon's file descriptors (issue 43
// finding 2: 1,300 refused addresses at 8 connections each, kept open for
// ever, exhausted the descriptors in 4 s, and the next accept ended the
// daemon):
//   - at most Config.MaxTCPConns open in all and Config.MaxTCPConnsPerSource
//     from one address, and sources outside sip.allow together at most a
//     quarter of MaxTCPConns (so a flood of them cannot lock out the PBX);
//     beyond any of these a new connection is closed at once;
//   - a refused source's connection (one of the few the filter lets through
//     for a 403) lives refusedLifetime, enough to read its request and
//     answer it, then is closed;
//   - an allowed connection that sends nothing for Config.TCPIdleTimeout is
//     closed (RFC 5626 keep-alives count as traffic); a write that blocks
//     for tcpWriteTimeout (a peer that stopped reading) ends it too.
const (
	refusedLifetime = 2 * time.Second
	tcpWriteTimeout = 10 * time.Second
	capLogEvery     = 10 * time.Second
)

// tcpGuard admits and counts the door's TCP connections.
type tcpGuard struct {
	filter       *sourceFilter
	maxConns     int
	maxPerSource int
	idle         time.Duration
	log          *slog.Logger

	mu        sync.Mutex
	total     int                // guarded by mu: open connections
	refused   int                // guarded by mu: of which from sources outside sip.allow
	perSource map[netip.Addr]int // guarded by mu: open connections by source, an entry per source with one
	lastLog   time.Time          // guarded by mu: last "connections capped" line
	capped    int                // guarded by mu: connections closed for a cap since lastLog

	closedCapped atomic.Uint64 // connections closed at accept for a cap
	closedIdle   atomic.Uint64 // connections ended by the idle timeout or a refused source's lifetime
}

func newTCPGuard(cfg Config, filter *sourceFilter, log *slog.Logger) *tcpGuard {
	return &tcpGuard{filter: filter, maxConns: cfg.MaxTCPConns, maxPerSource: cfg.MaxTCPConnsPerSource,
		idle: cfg.TCPIdleTimeout, log: log, perSource: map[netip.Addr]int{}}
}

// listener admits ln's connections through g (acceptloop.Admitting): the
// others are closed there and never reach the SIP stack.
func (g *tcpGuard) listener(ln net.Listener) net.Listener { return acceptloop.Admitting(ln, g.admit) }

// admit registers c, or closes it and returns nil.
func (g *tcpGuard) admit(c net.Conn) net.Conn {
	if !g.filter.admit(c.RemoteAddr()) {
		c.Close() // a refused source past its allowance: counted by the filter
		return nil
	}
	src := addrOf(c.RemoteAddr())
	allowed := inNets(g.filter.allow, src)
	g.mu.Lock()
	if g.total >= g.maxConns || g.perSource[src] >= g.maxPerSource || !allowed && g.refused >= max(1, g.maxConns/4) {
		g.capped++
		if time.Since(g.lastLog) >= capLogEvery {
			g.log.Warn("sip tcp connections at their limit; new ones closed", "remote_addr", src.String(),
				"open", g.total, "from_source", g.perSource[src], "max_tcp_conns", g.maxConns,
				"max_tcp_conns_per_source", g.maxPerSource, "closed", g.capped)
			g.lastLog, g.capped = time.Now(), 0
		}
		g.mu.Unlock()
		g.closedCapped.Add(1)
		c.Close()
		return nil
	}
	g.total++
	g.perSource[src]++
	if !allowed {
		g.refused++
	}
	g.mu.Unlock()
	gc := &guardedConn{Conn: c, g: g, src: src, idle: g.idle, allowed: allowed}
	if !allowed {
		gc.idle = 0 // the absolute deadline below holds
		c.SetDeadline(time.Now().Add(refusedLifetime))
	}
	return gc
}

// release forgets a closed connection from src.
func (g *tcpGuard) release(src netip.Addr, allowed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if !allowed {
		g.refused--
	}
	if g.perSource[src]--; g.perSource[src] <= 0 {
		delete(g.perSource, src)
	}
}

// Open is how many TCP connections the door holds.
func (g *tcpGuard) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}

// addrOf is the unmapped IP of a remote address (the zero Addr if it has none).
func addrOf(a net.Addr) netip.Addr {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// guardedConn is an admitted connection: each read waits at most idle (0:
// the deadline set at admission), each write tcpWriteTimeout, and Close
// releases its place once.
type guardedConn struct {
	net.Conn
	g       *tcpGuard
	src     netip.Addr
	allowed bool // src is in sip.allow
	idle    time.Duration
	once    sync.Once
}

// Read reads with the idle timeout. A timeout reads as the end of the
// stream, so the SIP stack closes the connection quietly (it logs other
// read errors at error level, one line per connection).
func (c *guardedConn) Read(b []byte) (int, error) {
	if c.idle > 0 {
		c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	}
	n, err := c.Conn.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.g.closedIdle.Add(1)
		return n, io.EOF
	}
	return n, err
}

// Write writes with tcpWriteTimeout.
func (c *guardedConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(tcpWriteTimeout))
	return c.Conn.Write(b)
}

// Close closes the connection and releases its place, once.
func (c *guardedConn) Close() error {
	c.once.Do(func() { c.g.release(c.src, c.allowed) })
	return c.Conn.Close()
}
