package sip

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Sources outside sip.allow are refused before the SIP stack sees them
// when they keep sending: each may have refusedPerWindow datagrams (or TCP
// connections) per refusalWindow answered (403, so a misconfigured PBX
// learns why), and the rest are dropped unread, with no transaction, no
// response and no log line of their own. That bounds what a scanner or a
// flood from an unauthorised address costs: no transaction state, no
// retransmitted 403s, one log line per source per window.
const (
	refusedPerWindow = 8
	refusalWindow    = time.Minute
	// maxTracked bounds the sources tracked at once; past it, datagrams of
	// untracked refused sources are dropped without an answer.
	maxTracked = 4096
)

// sourceFilter counts what refused sources send.
type sourceFilter struct {
	allow []netip.Prefix
	log   *slog.Logger
	now   func() time.Time

	mu      sync.Mutex
	tracked map[netip.Addr]*refusal // guarded by mu
	dropped uint64                  // guarded by mu: datagrams and connections dropped unread
}

type refusal struct {
	start   time.Time // window start
	seen    int       // datagrams or connections in the window
	dropped int       // of which dropped
}

func newSourceFilter(allow []netip.Prefix, log *slog.Logger) *sourceFilter {
	return &sourceFilter{allow: allow, log: log, now: time.Now, tracked: make(map[netip.Addr]*refusal)}
}

// admit reports whether a datagram or connection from addr goes on to the
// SIP stack: always for allowed sources, for a refused source only within
// its window's allowance.
func (f *sourceFilter) admit(addr net.Addr) bool {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return false
	}
	src := ap.Addr().Unmap()
	if inNets(f.allow, src) {
		return true
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.tracked[src]
	if r == nil || now.Sub(r.start) >= refusalWindow {
		if r != nil && r.dropped > 0 {
			f.log.Warn("sip source refused", "remote_addr", src.String(), "dropped", r.dropped, "window", refusalWindow.String())
		}
		if r == nil && len(f.tracked) >= maxTracked {
			f.pruneLocked(now)
			if len(f.tracked) >= maxTracked {
				f.dropped++
				return false
			}
		}
		r = &refusal{start: now}
		f.tracked[src] = r
	}
	r.seen++
	if r.seen <= refusedPerWindow {
		return true
	}
	if r.dropped == 0 {
		f.log.Warn("sip source refused; dropping what it sends for the rest of the window",
			"remote_addr", src.String(), "window", refusalWindow.String())
	}
	r.dropped++
	f.dropped++
	return false
}

// pruneLocked forgets sources whose window has passed.
func (f *sourceFilter) pruneLocked(now time.Time) {
	for a, r := range f.tracked {
		if now.Sub(r.start) >= refusalWindow {
			delete(f.tracked, a)
		}
	}
}

// Dropped is how many datagrams and connections were dropped unread.
func (f *sourceFilter) Dropped() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped
}

// filteredConn is a PacketConn whose ReadFrom skips what the filter drops.
type filteredConn struct {
	net.PacketConn
	f *sourceFilter
}

func (c filteredConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.PacketConn.ReadFrom(b)
		if err != nil || c.f.admit(addr) {
			return n, addr, err
		}
	}
}
