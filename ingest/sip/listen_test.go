package sip

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/earshot-dev/earshot/ingest/rtp/rtptest"
)

// TestListenRetriesTakenTCPPort: with an ephemeral port, a TCP port
// another socket holds makes Listen take a new UDP port and try again
// (e2e TestMetricsSIPDoor failed once in CI on "bind: address already in
// use"); with a fixed port it is an error.
func TestListenRetriesTakenTCPPort(t *testing.T) {
	taken := 0
	tcp := func(network, addr string) (net.Listener, error) {
		if taken < 2 {
			taken++
			return nil, &net.OpError{Op: "listen", Net: network, Err: os.NewSyscallError("bind", syscall.EADDRINUSE)}
		}
		return net.Listen(network, addr)
	}
	pc, ln, err := listenPair("127.0.0.1:0", net.ListenPacket, tcp)
	if err != nil {
		t.Fatalf("ephemeral port: %v", err)
	}
	if pc.LocalAddr().String() != ln.Addr().String() {
		t.Errorf("udp %s, tcp %s: not one port", pc.LocalAddr(), ln.Addr())
	}
	pc.Close()
	ln.Close()

	// A fixed port whose TCP side is held.
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	_, _, err = Listen(hold.Addr().String())
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("fixed port held over tcp: %v, want EADDRINUSE", err)
	}
}

// TestListenReadBuffer: the signalling UDP socket's receive queue is larger
// than a UDP socket gets without asking, as the RTP sockets' are.
func TestListenReadBuffer(t *testing.T) {
	def := rtptest.DefaultReadQueue(t)
	pc, ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	defer pc.Close()
	if got := rtptest.ReadQueue(t, pc.(*net.UDPConn)); got <= def {
		t.Errorf("SIP UDP socket's receive queue is %d bytes, not more than a plain UDP socket's %d", got, def)
	}
}
