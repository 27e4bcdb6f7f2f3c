package webrtc

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/earshot-dev/earshot/ingest/rtp/rtptest"
)

// TestICESocketsReadBuffer: the UDP sockets a peer's ICE agent binds in the
// door's port range have a larger receive queue than a UDP socket gets
// without asking, as the SIP door's RTP sockets do. It reads them among
// the test process's own descriptors.
func TestICESocketsReadBuffer(t *testing.T) {
	def := rtptest.DefaultReadQueue(t)
	const lo, hi = 42500, 42599
	s := newRecSession("s1", ulaw8k)
	cfg := Config{UDPPorts: strconv.Itoa(lo) + "-" + strconv.Itoa(hi), IncludeLoopback: true}
	cfg.SetDefaults()
	d, err := New(cfg, &sessions{m: map[string]*recSession{"s1": s}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, offer := newOfferer(t, pcmuParams)
	if _, _, err := d.Offer(t.Context(), "s1", "s1.1.good", "127.0.0.1:1", offer); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	found := 0
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if typ, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE); err != nil || typ != syscall.SOCK_DGRAM {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			continue
		}
		var port int
		switch a := sa.(type) {
		case *syscall.SockaddrInet4:
			port = a.Port
		case *syscall.SockaddrInet6:
			port = a.Port
		}
		if port < lo || port > hi {
			continue
		}
		found++
		got, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		if err != nil {
			t.Fatal(err)
		}
		if got <= def {
			t.Errorf("ICE socket on port %d: receive queue %d bytes, not more than a plain UDP socket's %d", port, got, def)
		}
	}
	if found == 0 {
		t.Fatalf("no UDP socket of the peer in %d-%d among the process's descriptors", lo, hi)
	}
	t.Logf("%d ICE sockets checked", found)
}
