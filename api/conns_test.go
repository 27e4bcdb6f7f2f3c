package api

import (
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fakeConn is a connection from addr that records its closing.
type fakeConn struct {
	net.Conn
	addr   net.Addr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.addr }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

func from(ip string) *fakeConn {
	return &fakeConn{addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
}

// TestConnGuard: per-address bound, the oldest idle pending connection
// gives way to a new one, busy and trusted ones never do, and closing
// frees every count.
func TestConnGuard(t *testing.T) {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused"}, []string{"reason"})
	g := newConnGuard(4, 2, 3, refused)

	a1, a2 := from("10.0.0.1"), from("10.0.0.1")
	g1, g2 := g.admit(a1), g.admit(a2)
	if g1 == nil || g2 == nil {
		t.Fatal("first two connections refused")
	}
	g1.setBusy(true)
	// Pending is full (2): the new one evicts the oldest idle, g2, not the busy g1.
	g3 := g.admit(from("10.0.0.2"))
	if g3 == nil || !a2.closed || a1.closed {
		t.Fatalf("eviction: admitted %v, a1 closed %v, a2 closed %v", g3 != nil, a1.closed, a2.closed)
	}
	g3.trust()
	g1.setBusy(false)
	g1.trust()
	// Both trusted: pending is empty, total 2 of 4.
	c4, c5 := from("10.0.0.3"), from("10.0.0.3")
	if g.admit(c4) == nil || g.admit(c5) == nil {
		t.Fatal("pending connections refused with room left")
	}
	// Total full (4), two pending idle: the oldest (c4) gives way.
	c6 := from("10.0.0.3")
	if g.admit(c6) == nil || !c4.closed {
		t.Fatal("full: the oldest pending connection did not give way")
	}
	// 10.0.0.3 has c5 and c6 open; a third is within the per-address
	// bound (3) and, the total being full, takes c5's place.
	if g.admit(from("10.0.0.3")) == nil || !c5.closed {
		t.Fatal("third connection of one address")
	}
	for _, c := range []*guardedConn{g1, g3} {
		c.Close()
	}
	g.mu.Lock()
	total, pending := g.total, g.pending.Len()
	g.mu.Unlock()
	if total != 2 || pending != 2 {
		t.Errorf("after closes: total %d, pending %d; want 2 and 2", total, pending)
	}
	var m dto.Metric
	refused.WithLabelValues("pending_evicted").Write(&m)
	if n := m.GetCounter().GetValue(); n != 3 {
		t.Errorf("pending_evicted = %v, want 3", n)
	}

	// A held connection (a WebSocket being attached) is never evicted.
	g = newConnGuard(10, 1, 10, refused)
	h := from("10.0.0.8")
	g.admit(h).hold()
	if c := from("10.0.0.8"); g.admit(c) != nil || !c.closed || h.closed {
		t.Error("a held connection gave way, or the new one was admitted over max_pending_conns 1")
	}

	// Per-address bound alone.
	g = newConnGuard(100, 100, 2, refused)
	g.admit(from("10.0.0.9"))
	g.admit(from("10.0.0.9"))
	if c := from("10.0.0.9"); g.admit(c) != nil || !c.closed {
		t.Error("third connection from one address admitted over max_conns_per_ip 2")
	}
	if g.admit(from("2001:db8::1")) == nil || g.admit(from("2001:db8::2")) == nil {
		t.Fatal("IPv6 connections refused")
	}
	if c := from("2001:db8::3"); g.admit(c) != nil {
		t.Error("third connection from one IPv6 /64 admitted over max_conns_per_ip 2")
	}
}
