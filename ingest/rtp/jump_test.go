package rtp

import (
	"context"
	"net"
	"testing"
	"time"

	pionrtp "github.com/pion/rtp"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// TestReceiverJumpsAreNotSilence: a stream whose every packet jumps its
// timestamp by max_gap (1-byte PCMU packets, each 16000 samples on) gets
// no more silence than the call's wall-clock time plus fillSlack: the
// jumps beyond are new timelines. Issue 43 finding 7: 4,420 such packets
// in 10 s were 82 minutes of audio.
func TestReceiverJumpsAreNotSilence(t *testing.T) {
	ports := testPorts(t)
	pair, err := ports.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	r, err := NewReceiver(ReceiverConfig{Codec: codec.PCMU}, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var s sink
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.Run(ctx, &s) }()
	conn, err := net.DialUDP("udp", nil, pair.RTP.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const packets = 500
	tick := time.NewTicker(2 * time.Millisecond)
	for i := range packets {
		<-tick.C
		p := pionrtp.Packet{Header: pionrtp.Header{Version: 2, SequenceNumber: uint16(i), Timestamp: uint32(i * 16000), SSRC: 7}, Payload: []byte{0x55}}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(b)
	}
	tick.Stop()
	cancel() // Run drains what is queued before it returns
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	got := len(s.bytes())
	most := int((wall+fillSlack).Seconds()*ClockRate) + packets
	st := r.Stats()[0]
	t.Logf("%d packets in %s: %d samples (%.1f s), %d unfilled; stats %+v", packets, wall.Round(time.Millisecond), got, float64(got)/ClockRate, st.Unfilled, st)
	if got > most {
		t.Errorf("%d samples (%.1f s) from %d one-byte packets in %s, want at most %d (wall-clock time plus %s)",
			got, float64(got)/ClockRate, packets, wall.Round(time.Millisecond), most, fillSlack)
	}
	if st.Packets < packets*9/10 || st.Unfilled == 0 {
		t.Errorf("%d of %d packets taken, %d samples unfilled", st.Packets, packets, st.Unfilled)
	}
}
