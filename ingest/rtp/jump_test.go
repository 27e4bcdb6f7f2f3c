package rtp

import (
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
	pair := listen(t, 1)[0]
	r, err := NewReceiver(ReceiverConfig{Codec: codec.PCMU}, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	g := start(t, r)
	conn := dial(t, pair)
	const packets = 500
	paced(2*time.Millisecond, packets, func(i int) {
		p := pionrtp.Packet{Header: pionrtp.Header{Version: 2, SequenceNumber: uint16(i), Timestamp: uint32(i * 16000), SSRC: 7}, Payload: []byte{0x55}}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(b)
	})
	g.hangUp() // Run drains what is queued before it returns
	wall := time.Since(began)
	got := len(g.s.bytes())
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
