package api

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/internal/acceptloop"
)

// connGuard admits the connections of one listener so that clients without
// a key cannot lock out those with one (slowloris):
//
//   - at most maxPerIP connections from one source address (an IPv6 client
//     is its /64), beyond which a new one is closed at once;
//   - at most maxConns in all;
//   - at most maxPending that have not yet authenticated: a connection is
//     pending from accept until a request on it carries a valid API key
//     (or it becomes a live WebSocket with a valid token). When pending
//     connections fill their share, the oldest one that is not inside a
//     handler (it is still sending a header, or idles between requests) is
//     closed to admit the new one. The maxConns-maxPending others are the
//     reserve of authenticated traffic.
//
// A client that sends its request promptly (a probe of /healthz, a first
// authenticated call) is therefore served even while thousands of pending
// connections trickle header bytes; each of those is also cut by the
// server's header timeout (Config.HeaderTimeout).
type connGuard struct {
	maxConns, maxPending, maxPerIP int
	refused                        *prometheus.CounterVec // by reason

	mu      sync.Mutex
	total   int                  // guarded by mu: open connections
	pending list.List            // guarded by mu: *guardedConn not yet trusted, oldest first
	perIP   map[netip.Prefix]int // guarded by mu: open connections by source; an entry per source with one
}

func newConnGuard(maxConns, maxPending, maxPerIP int, refused *prometheus.CounterVec) *connGuard {
	return &connGuard{maxConns: maxConns, maxPending: maxPending, maxPerIP: maxPerIP, refused: refused,
		perIP: map[netip.Prefix]int{}}
}

// listener admits ln's connections through g (acceptloop.Admitting):
// refused ones are closed there and never reach the server.
func (g *connGuard) listener(ln net.Listener) net.Listener {
	return acceptloop.Admitting(ln, func(c net.Conn) net.Conn {
		if gc := g.admit(c); gc != nil {
			return gc
		}
		return nil // not a nil *guardedConn in an interface
	})
}

// guardedConn is an admitted connection. Its element, busy and trusted are
// guarded by the guard's mu.
type guardedConn struct {
	net.Conn
	g       *connGuard
	src     netip.Prefix
	elem    *list.Element // in g.pending while not trusted; nil once trusted or closed
	busy    bool          // a handler is running on it
	held    bool          // hijacked (a WebSocket being attached): never evicted
	closed  bool          // forgotten by the guard
	closeMu sync.Once     // closes Conn once
}

// sourceOf is the bucket a remote address counts in: the IPv4 address, or
// the /64 of an IPv6 one (one host commonly holds a whole /64).
func sourceOf(a net.Addr) netip.Prefix {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Prefix{}
	}
	ip := ap.Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// admit registers c or closes it; nil means refused.
func (g *connGuard) admit(c net.Conn) *guardedConn {
	src := sourceOf(c.RemoteAddr())
	var evict *guardedConn
	reason := ""
	g.mu.Lock()
	switch {
	case g.perIP[src] >= g.maxPerIP:
		reason = "per_ip"
	case g.pending.Len() >= g.maxPending || g.total >= g.maxConns:
		if evict = g.oldestIdleLocked(); evict == nil {
			reason = "full"
		} else {
			g.forgetLocked(evict)
		}
	}
	if reason != "" {
		g.mu.Unlock()
		g.refused.WithLabelValues(reason).Inc()
		c.Close()
		return nil
	}
	gc := &guardedConn{Conn: c, g: g, src: src}
	gc.elem = g.pending.PushBack(gc)
	g.total++
	g.perIP[src]++
	g.mu.Unlock()
	if evict != nil {
		g.refused.WithLabelValues("pending_evicted").Inc()
		evict.closeConn()
	}
	return gc
}

// oldestIdleLocked is the oldest pending connection outside a handler.
func (g *connGuard) oldestIdleLocked() *guardedConn {
	for e := g.pending.Front(); e != nil; e = e.Next() {
		if gc := e.Value.(*guardedConn); !gc.busy && !gc.held {
			return gc
		}
	}
	return nil
}

// forgetLocked drops gc from the counts, once.
func (g *connGuard) forgetLocked(gc *guardedConn) {
	if gc.closed {
		return
	}
	gc.closed = true
	if gc.elem != nil {
		g.pending.Remove(gc.elem)
		gc.elem = nil
	}
	g.total--
	if g.perIP[gc.src]--; g.perIP[gc.src] <= 0 {
		delete(g.perIP, gc.src)
	}
}

// Close closes the connection and frees its place.
func (gc *guardedConn) Close() error {
	gc.g.mu.Lock()
	gc.g.forgetLocked(gc)
	gc.g.mu.Unlock()
	return gc.closeConn()
}

// closeConn closes the underlying connection once.
func (gc *guardedConn) closeConn() error {
	var err error
	gc.closeMu.Do(func() { err = gc.Conn.Close() })
	return err
}

// trust moves the connection to the authenticated reserve: it is never
// closed to admit another.
func (gc *guardedConn) trust() {
	gc.g.mu.Lock()
	defer gc.g.mu.Unlock()
	if gc.elem != nil {
		gc.g.pending.Remove(gc.elem)
		gc.elem = nil
	}
}

// hold keeps the connection from eviction for the rest of its life: it
// is being hijacked (a WebSocket), and the hijack handler trusts it or
// closes it.
func (gc *guardedConn) hold() {
	gc.g.mu.Lock()
	gc.held = true
	gc.g.mu.Unlock()
}

func (gc *guardedConn) setBusy(busy bool) {
	gc.g.mu.Lock()
	gc.busy = busy
	gc.g.mu.Unlock()
}

// guardedOf is the guardedConn under c (through TLS), or nil.
func guardedOf(c net.Conn) *guardedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	gc, _ := c.(*guardedConn)
	return gc
}

// trustConn marks the request's connection authenticated.
func trustConn(ctx *fasthttp.RequestCtx) {
	if gc := guardedOf(ctx.Conn()); gc != nil {
		gc.trust()
	}
}
