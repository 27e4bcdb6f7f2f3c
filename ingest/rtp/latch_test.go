package rtp

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	pionrtp "github.com/pion/rtp"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// sender is a UDP socket on a loopback address sending to one stream.
func sender(t *testing.T, from string, to *net.UDPAddr) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0)), to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// latchCall runs a one-stream PCMU receiver allowing allow, lets send
// write to its RTP port, and returns what it wrote and its stats once
// until holds for what it wrote (or 5s passed) and the call hung up.
func latchCall(t *testing.T, cfg ReceiverConfig, allow []netip.Addr, until func([]byte) bool, send func(dst *net.UDPAddr)) ([]byte, StreamStats) {
	t.Helper()
	pair := listen(t, 1)[0]
	cfg.Codec = codec.PCMU
	r, err := NewReceiver(cfg, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU}, Allow: allow,
		Remote: netip.MustParseAddrPort("192.0.2.99:4000")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := start(t, r)
	send(pair.RTP.LocalAddr().(*net.UDPAddr))
	return g.until(until), r.Stats()[0]
}

// interleave sends a's packets, each after the first preceded by one of
// pb from the others in turn: when a's last is taken, every packet of pb
// was handled before it.
func interleave(a *net.UDPConn, pa, pb [][]byte, others ...*net.UDPConn) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for i, p := range pa {
		<-tick.C
		if i > 0 && len(others) > 0 {
			others[i%len(others)].Write(pb[i-1])
		}
		a.Write(p)
	}
}

// marked sends pa from a, then one marker packet of 160 0x11 bytes from
// marker: seeing the marker's bytes come out means all of pa was handled.
func marked(t *testing.T, a, marker *net.UDPConn, pa [][]byte) {
	interleave(a, pa, nil)
	marker.Write(packets(t, bytes.Repeat([]byte{0x11}, 160), 0, 3)[0])
}

func hasMarker(b []byte) bool { return bytes.Contains(b, bytes.Repeat([]byte{0x11}, 160)) }

// TestReceiverLatches: the SDP names 192.0.2.99 and the signalling peer
// 192.0.2.98, the RTP comes from 127.0.0.1: the stream latches onto that
// source and takes its audio byte for byte; a second source (another
// port, then another address) sending valid RTP after the latch is
// dropped and counted. Before latching every packet was dropped.
func TestReceiverLatches(t *testing.T) {
	allow := []netip.Addr{netip.MustParseAddr("192.0.2.98"), netip.MustParseAddr("192.0.2.99")}
	audio := ramp(160 * 50)
	other := bytes.Repeat([]byte{0x55}, len(audio))
	var from netip.AddrPort
	got, st := latchCall(t, ReceiverConfig{Latch: true}, allow, has(len(audio)), func(dst *net.UDPAddr) {
		a := sender(t, "127.0.0.1", dst)
		from = a.LocalAddr().(*net.UDPAddr).AddrPort()
		interleave(a, packets(t, audio, 0, 9), packets(t, other, 0, 77), sender(t, "127.0.0.1", dst), sender(t, "127.0.0.2", dst))
	})
	if !bytes.Equal(got, audio) {
		t.Fatalf("got %d bytes, want the latched source's %d identical; stats %+v", len(got), len(audio), st)
	}
	if st.Latched != from {
		t.Errorf("latched %v, want %v", st.Latched, from)
	}
	if st.Packets != 50 || st.Foreign != 49 || st.Dropped != 49 || st.SSRCChanges != 0 {
		t.Errorf("stats %+v, want 50 packets taken, 49 foreign dropped", st)
	}
}

// TestReceiverLatchRefusals: a source outside the SDP and signalling
// addresses is not taken when latching is off, when it sends no valid RTP
// of the call's codecs first, after the latch window, or once the stream
// flows from an allowed address.
func TestReceiverLatchRefusals(t *testing.T) {
	audio := ramp(160 * 20)
	// The marker's source, 127.0.0.3, is the signalling peer.
	sdp := []netip.Addr{netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("192.0.2.99")}
	t.Run("off", func(t *testing.T) {
		_, st := latchCall(t, ReceiverConfig{}, sdp, hasMarker, func(dst *net.UDPAddr) {
			marked(t, sender(t, "127.0.0.1", dst), sender(t, "127.0.0.3", dst), packets(t, audio, 0, 9))
		})
		if st.Packets != 1 || st.Foreign != 20 || st.Latched.IsValid() {
			t.Errorf("latching off: stats %+v; want only the marker taken, 20 foreign", st)
		}
	})
	t.Run("invalid first", func(t *testing.T) {
		// A packet of a payload type the call did not negotiate, one
		// with an empty payload and one of RTP version 1 do not latch;
		// the valid source after them does.
		var from netip.AddrPort
		got, st := latchCall(t, ReceiverConfig{Latch: true}, sdp, has(len(audio)), func(dst *net.UDPAddr) {
			junk := sender(t, "127.0.0.2", dst)
			for _, h := range []pionrtp.Header{{Version: 2, PayloadType: 8, SSRC: 5}, {Version: 2, PayloadType: 0, SSRC: 5}, {Version: 1, PayloadType: 0, SSRC: 5}} {
				pl := []byte{1, 2, 3}
				if h.PayloadType == 0 && h.Version == 2 {
					pl = nil
				}
				b, err := (&pionrtp.Packet{Header: h, Payload: pl}).Marshal()
				if err != nil {
					t.Fatal(err)
				}
				junk.Write(b)
			}
			junk.Write(make([]byte, 1200))
			a := sender(t, "127.0.0.1", dst)
			from = a.LocalAddr().(*net.UDPAddr).AddrPort()
			interleave(a, packets(t, audio, 0, 9), nil)
		})
		if !bytes.Equal(got, audio) || st.Latched != from || st.Foreign != 4 {
			t.Errorf("got %d bytes (want %d), stats %+v; want latched to %v after 4 foreign", len(got), len(audio), st, from)
		}
	})
	t.Run("after the window", func(t *testing.T) {
		_, st := latchCall(t, ReceiverConfig{Latch: true, LatchWindow: time.Nanosecond}, sdp, hasMarker, func(dst *net.UDPAddr) {
			marked(t, sender(t, "127.0.0.1", dst), sender(t, "127.0.0.3", dst), packets(t, audio, 0, 9))
		})
		if st.Packets != 1 || st.Latched.IsValid() || st.Foreign != 20 {
			t.Errorf("stats %+v; want nothing taken after the window", st)
		}
	})
	t.Run("expected source wins", func(t *testing.T) {
		// A spoofer latches before the caller's first packet; the
		// caller's RTP from its SDP address takes the stream back, and
		// the spoofer's later packets are dropped.
		spoof := packets(t, bytes.Repeat([]byte{0x55}, 160*25), 0, 77)
		got, st := latchCall(t, ReceiverConfig{Latch: true}, sdp, func(b []byte) bool { return bytes.Contains(b, audio) }, func(dst *net.UDPAddr) {
			s := sender(t, "127.0.0.1", dst)
			interleave(s, spoof[:5], nil)
			interleave(sender(t, "127.0.0.3", dst), packets(t, audio, 0, 9), spoof[5:], s)
		})
		if !bytes.Contains(got, audio) || !st.Latched.IsValid() || st.Foreign != 19 || st.Packets != 25 || st.SSRCChanges != 1 {
			t.Errorf("got %d bytes (audio in them: %v), stats %+v; want latched, then the caller's 20 packets, 19 foreign", len(got), bytes.Contains(got, audio), st)
		}
	})
	t.Run("flowing", func(t *testing.T) {
		got, st := latchCall(t, ReceiverConfig{Latch: true}, []netip.Addr{netip.MustParseAddr("127.0.0.1")}, has(len(audio)), func(dst *net.UDPAddr) {
			interleave(sender(t, "127.0.0.1", dst), packets(t, audio, 0, 9), packets(t, audio, 0, 77), sender(t, "127.0.0.2", dst))
		})
		if !bytes.Equal(got, audio) || st.Latched.IsValid() || st.Foreign != 19 {
			t.Errorf("got %d bytes (want %d), stats %+v; want the allowed source only, 19 foreign", len(got), len(audio), st)
		}
	})
}
