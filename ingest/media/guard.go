package media

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Guard decides which destination addresses an outgoing connection may
// reach. It is checked at dial time, after DNS resolution, so a name that
// resolves to a denied address is refused too; IPv4-mapped IPv6 addresses
// are checked as IPv4. Fetch uses it for audio_url; the daemon's callback
// outbox uses the same deny list with its own Allow exceptions.
type Guard struct {
	// Deny lists refused destination prefixes.
	Deny []netip.Prefix
	// Allow lists prefixes reachable even when Deny covers them (on-prem
	// receivers inside a denied range).
	Allow []netip.Prefix
}

// Check returns an error wrapping ErrDenied when addr ("ip:port") may not
// be dialled.
func (g Guard) Check(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return fmt.Errorf("%w: dial %s: %w", ErrDenied, addr, err)
	}
	a := ap.Addr().Unmap()
	for _, p := range g.Allow {
		if p.Contains(a) {
			return nil
		}
	}
	for _, p := range g.Deny {
		if p.Contains(a) {
			return fmt.Errorf("%w: destination %s is in denied range %s", ErrDenied, a, p)
		}
	}
	return nil
}

// Dialer returns a dialer that refuses what Check refuses, before the
// connection is attempted.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			return g.Check(address)
		},
	}
}
