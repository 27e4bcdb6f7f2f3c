package sip

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// listenAttempts bounds how often Listen tries again for an ephemeral
// port whose TCP side another socket holds.
const listenAttempts = 10

// Listen opens the SIP door's UDP socket and TCP listener on one address
// (SIP over both transports shares the port). With port 0 the system
// picks the UDP port, and the TCP port of the same number can be taken by
// another socket of the box (a client's ephemeral port): Listen then
// tries a new port, up to listenAttempts times. With a fixed port a
// taken TCP port is an error. The UDP socket asks the kernel for the RTP
// sockets' receive queue (rtp.ReadBuffer): a burst of requests, or a
// reader a loaded host did not schedule for a while, is not dropped from
// the 208 KiB default (about 200 INVITEs with their SDP).
func Listen(addr string) (net.PacketConn, net.Listener, error) {
	return listenPair(addr, net.ListenPacket, net.Listen)
}

func listenPair(addr string, udp func(network, addr string) (net.PacketConn, error), tcp func(network, addr string) (net.Listener, error)) (net.PacketConn, net.Listener, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	for attempt := 1; ; attempt++ {
		pc, err := udp("udp", addr)
		if err != nil {
			return nil, nil, err
		}
		if u, ok := pc.(*net.UDPConn); ok {
			// A queue the kernel refuses to grow leaves its default.
			_ = u.SetReadBuffer(rtp.ReadBuffer)
		}
		ln, err := tcp("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln, nil
		}
		pc.Close()
		if port != "0" || !errors.Is(err, syscall.EADDRINUSE) || attempt == listenAttempts {
			return nil, nil, fmt.Errorf("tcp on the udp port %s: %w", pc.LocalAddr(), err)
		}
	}
}
