package webrtc

import (
	"net"

	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"

	earshotrtp "github.com/earshot-dev/earshot/ingest/rtp"
)

// udpNet is the network a peer's ICE agent opens its UDP sockets through:
// the standard one, each socket's kernel receive queue asked at
// earshotrtp.ReadBuffer as the SIP door's RTP sockets are, so a burst, or a
// reader a loaded host did not schedule for a while, is not dropped from
// the kernel's 208 KiB default before the peer reads it.
type udpNet struct{ *stdnet.Net }

func newUDPNet() (udpNet, error) {
	n, err := stdnet.NewNet()
	return udpNet{n}, err
}

// ListenUDP opens the socket as the standard network does and asks for the
// larger queue; one the kernel refuses to grow keeps its default.
func (n udpNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := n.Net.ListenUDP(network, laddr)
	if err == nil {
		_ = c.SetReadBuffer(earshotrtp.ReadBuffer)
	}
	return c, err
}
