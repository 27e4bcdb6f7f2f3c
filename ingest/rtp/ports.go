package rtp

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
)

// ReadBuffer is the receive queue asked of the kernel for each RTP socket
// (SO_RCVBUF; the kernel caps it at net.core.rmem_max and doubles it for
// its own bookkeeping). Debian's default, 208 KiB, holds a few seconds of
// one G.711 stream in real time (the kernel counts each datagram's buffers,
// over a kilobyte) but only about 150 ms of one sent 25 times faster
// (TestSIPLongCall), or of a stream whose reader a loaded host does not
// schedule for that long: the kernel drops what does not fit, silently,
// and the call's record loses those words (CI, 2026-12-02: 24 packets of
// 40 minutes). The memory is taken only while datagrams wait. The WHIP
// door's ICE sockets ask the same (ingest/webrtc udpNet), and the SIP
// door's signalling UDP socket (ingest/sip Listen).
const ReadBuffer = 1 << 20

// Ports hands out RTP/RTCP port pairs (RTP on an even port, RTCP on the
// next, RFC 3550 section 11) from a fixed range on one local address. It
// is safe for concurrent use.
type Ports struct {
	ip     netip.Addr
	lo, hi int // even lo, inclusive hi

	mu   sync.Mutex
	used map[int]bool // guarded by mu: RTP ports handed out
	next int          // guarded by mu: where the next search starts
}

// NewPorts returns an allocator for [lo, hi] on ip (unspecified for every
// interface). lo is rounded up to even; a pair needs hi >= lo+1.
func NewPorts(ip netip.Addr, lo, hi int) (*Ports, error) {
	if lo%2 == 1 {
		lo++
	}
	if lo < 1024 || hi > 65535 || hi < lo+1 {
		return nil, fmt.Errorf("rtp: port range %d-%d holds no pair", lo, hi)
	}
	return &Ports{ip: ip, lo: lo, hi: hi, used: map[int]bool{}, next: lo}, nil
}

// Pairs is how many pairs the range holds.
func (p *Ports) Pairs() int { return (p.hi - p.lo + 1) / 2 }

// Pair is one bound RTP/RTCP socket pair. Close releases it to its Ports.
type Pair struct {
	// RTP receives media (and RTCP too with rtcp-mux, RFC 5761).
	RTP *net.UDPConn
	// RTCP is bound on Port+1.
	RTCP *net.UDPConn
	// Port is the RTP port for the SDP answer.
	Port int

	ports *Ports
	once  sync.Once
}

// Listen binds the next free pair, skipping ports other programs hold.
func (p *Ports) Listen() (*Pair, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.Pairs()
	for range n {
		port := p.next
		p.next += 2
		if p.next+1 > p.hi {
			p.next = p.lo
		}
		if p.used[port] {
			continue
		}
		rtpConn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.ip, uint16(port))))
		if err != nil {
			continue
		}
		rtcpConn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.ip, uint16(port+1))))
		if err != nil {
			rtpConn.Close()
			continue
		}
		// A queue the kernel refuses to grow leaves its default: the
		// call still works, as it did before this was asked.
		_ = rtpConn.SetReadBuffer(ReadBuffer)
		p.used[port] = true
		return &Pair{RTP: rtpConn, RTCP: rtcpConn, Port: port, ports: p}, nil
	}
	return nil, fmt.Errorf("%w in %d-%d", ErrNoPorts, p.lo, p.hi)
}

// InUse is how many pairs are handed out.
func (p *Ports) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.used)
}

// Close closes both sockets and returns the pair; it is idempotent.
func (pr *Pair) Close() error {
	var err error
	pr.once.Do(func() {
		err = pr.RTP.Close()
		pr.RTCP.Close()
		pr.ports.mu.Lock()
		delete(pr.ports.used, pr.Port)
		pr.ports.mu.Unlock()
	})
	return err
}

// GrantedReadBuffer is the receive queue the kernel grants a UDP socket
// that asks for ReadBuffer: at most net.core.rmem_max, so below
// ReadBuffer the host caps the call sockets' queues (the .deb raises the
// cap; other installs may not). SO_RCVBUF reads back twice the grant (the
// kernel's bookkeeping); this is the grant.
func GrantedReadBuffer() (int, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.SetReadBuffer(ReadBuffer); err != nil {
		return 0, err
	}
	n, err := ReadQueue(c)
	return n / 2, err
}

// ReadQueue is c's kernel receive queue in bytes (SO_RCVBUF as read back).
func ReadQueue(c syscall.Conn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var serr error
	if err := raw.Control(func(fd uintptr) { n, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil {
		return 0, err
	}
	return n, serr
}
