// Package rtptest holds test helpers for the doors' UDP sockets: the
// receive queue the kernel gave a socket, and the one it gives a socket
// that asks for none, to compare with.
package rtptest

import (
	"net"
	"syscall"
	"testing"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// ReadQueue is c's kernel receive queue in bytes (rtp.ReadQueue).
func ReadQueue(t testing.TB, c syscall.Conn) int {
	t.Helper()
	n, err := rtp.ReadQueue(c)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// DefaultReadQueue is the receive queue of a UDP socket that asks for
// none: the kernel's default (net.core.rmem_default).
func DefaultReadQueue(t testing.TB) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return ReadQueue(t, c)
}
