package e2e

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// loopCapture reads every UDP datagram on the loopback interface, as
// tcpdump -i lo would, through an AF_PACKET socket (needs CAP_NET_RAW,
// which the test run as root has), and hands the payloads of those to or
// from ports lo..hi to match. It keeps nothing itself.
type loopCapture struct {
	fd      int
	lo, hi  uint16
	match   func(payload []byte)
	seen    atomic.Int64 // datagrams of the port range
	stopped atomic.Bool
	wg      sync.WaitGroup
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func startLoopCapture(t *testing.T, lo, hi uint16, match func(payload []byte)) *loopCapture {
	t.Helper()
	ifc, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons(syscall.ETH_P_ALL)))
	if err != nil {
		t.Fatalf("packet capture needs CAP_NET_RAW (run the e2e tests as root): %v", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(syscall.ETH_P_ALL), Ifindex: ifc.Index}); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	tv := syscall.NsecToTimeval(int64(100 * time.Millisecond))
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	c := &loopCapture{fd: fd, lo: lo, hi: hi, match: match}
	c.wg.Go(c.run)
	t.Cleanup(c.stop)
	return c
}

func (c *loopCapture) run() {
	buf := make([]byte, 65536)
	for !c.stopped.Load() {
		n, _, err := syscall.Recvfrom(c.fd, buf, 0)
		if err != nil || n < 14 {
			continue
		}
		f := buf[:n]
		if binary.BigEndian.Uint16(f[12:]) != 0x0800 { // IPv4 only: the test binds 127.0.0.1
			continue
		}
		ip := f[14:]
		if len(ip) < 20 || ip[9] != syscall.IPPROTO_UDP {
			continue
		}
		ihl := int(ip[0]&0x0f) * 4
		if len(ip) < ihl+8 {
			continue
		}
		udp := ip[ihl:]
		src, dst := binary.BigEndian.Uint16(udp[0:]), binary.BigEndian.Uint16(udp[2:])
		if (src < c.lo || src > c.hi) && (dst < c.lo || dst > c.hi) {
			continue
		}
		c.seen.Add(1)
		c.match(udp[8:])
	}
}

// stop ends the capture; the counts stay readable.
func (c *loopCapture) stop() {
	if c.stopped.Swap(true) {
		return
	}
	c.wg.Wait()
	syscall.Close(c.fd)
}
