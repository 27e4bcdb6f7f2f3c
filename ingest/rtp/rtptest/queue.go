// Package rtptest holds test helpers for the doors' UDP sockets: the
// receive queue the kernel gave a socket, and the one it gives a socket
// that asks for none, to compare with.
package rtptest

import (
	"net"
	"syscall"
	"testing"
)

// ReadQueue is c's kernel receive queue in bytes (SO_RCVBUF).
func ReadQueue(t testing.TB, c syscall.Conn) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	if err := raw.Control(func(fd uintptr) { n, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil || serr != nil {
		t.Fatal(err, serr)
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
