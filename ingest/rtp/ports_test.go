package rtp

import (
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestPortsReadBuffer: an RTP socket's receive queue is larger than the
// kernel's default, so a burst (or a reader the host did not schedule for a
// while) is not dropped before the receiver reads it.
func TestPortsReadBuffer(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_default")
	if err != nil {
		t.Skipf("no rmem_default to compare with: %v", err)
	}
	def, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPorts(netip.MustParseAddr("127.0.0.1"), 42400, 42419)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := p.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	raw, err := pair.RTP.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		got, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if got <= def {
		t.Errorf("RTP socket's receive queue is %d bytes, not more than the kernel's default %d", got, def)
	}
	t.Logf("receive queue %d bytes (default %d)", got, def)
}
