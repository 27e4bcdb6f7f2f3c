package rtp_test

import (
	"net/netip"
	"testing"

	"github.com/earshot-dev/earshot/ingest/rtp"
	"github.com/earshot-dev/earshot/ingest/rtp/rtptest"
)

// TestPortsReadBuffer: an RTP socket's receive queue is larger than the
// kernel's default, so a burst (or a reader the host did not schedule for a
// while) is not dropped before the receiver reads it.
func TestPortsReadBuffer(t *testing.T) {
	def := rtptest.DefaultReadQueue(t)
	p, err := rtp.NewPorts(netip.MustParseAddr("127.0.0.1"), 42400, 42419)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := p.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	got := rtptest.ReadQueue(t, pair.RTP)
	if got <= def {
		t.Errorf("RTP socket's receive queue is %d bytes, not more than a plain UDP socket's %d", got, def)
	}
	t.Logf("receive queue %d bytes (default %d)", got, def)
}

// TestGrantedReadBuffer: GrantedReadBuffer is what the kernel grants a
// socket asking ReadBuffer, as an RTP socket of Ports has (SO_RCVBUF reads
// back twice the grant).
func TestGrantedReadBuffer(t *testing.T) {
	granted, err := rtp.GrantedReadBuffer()
	if err != nil {
		t.Fatal(err)
	}
	p, err := rtp.NewPorts(netip.MustParseAddr("127.0.0.1"), 42420, 42439)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := p.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	if got := rtptest.ReadQueue(t, pair.RTP); got != 2*granted {
		t.Errorf("GrantedReadBuffer %d, an RTP socket's queue %d (twice the grant)", granted, got)
	}
}
