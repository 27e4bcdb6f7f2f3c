package rtp

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	pionrtp "github.com/pion/rtp"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/codec"
)

// event is an RFC 4733 payload: event code, end bit, volume, duration.
func event(code byte, end bool, vol byte, dur uint16) []byte {
	b := []byte{code, vol & 0x3f, byte(dur >> 8), byte(dur)}
	if end {
		b[1] |= 0x80
	}
	return b
}

// keyed collects the keys a decoder emits.
type keyed []ingest.Key

func (k *keyed) emit(key ingest.Key) { *k = append(*k, key) }

func (k keyed) digits() string {
	b := make([]byte, len(k))
	for i, key := range k {
		b[i] = key.Digit
	}
	return string(b)
}

// TestEventDecoder: one key per event, however its packets come: updates,
// three end packets and their retransmission, an end lost (finished
// after eventQuiet, its late end dropped), overlapping events (a new
// timestamp finishes the one before), another event's code inside a run,
// codes that are no key and payloads too short.
func TestEventDecoder(t *testing.T) {
	d := NewEventDecoder(8000)
	var got keyed
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// '5' held 160 ms: updates every 50 ms, three ends, the ends again.
	for i, dur := range []uint16{400, 800, 1200} {
		d.Packet(1000, event(5, false, 10, dur), at(50*i), got.emit)
	}
	for range 2 {
		for i := range 3 {
			d.Packet(1000, event(5, true, 10, 1280), at(160+i*5), got.emit)
		}
	}
	if len(got) != 1 || got[0].Digit != '5' || got[0].Duration != 0.16 || got[0].Source != ingest.KeyRFC4733 {
		t.Fatalf("one held key: %+v", got)
	}
	// '#' whose end is lost: finished after eventQuiet, not before; its
	// end arriving late adds nothing.
	d.Packet(9000, event(11, false, 10, 400), at(1000), got.emit)
	d.Tick(at(1000).Add(eventQuiet-time.Millisecond), got.emit)
	if len(got) != 1 {
		t.Fatalf("finished before eventQuiet: %+v", got)
	}
	d.Tick(at(1000).Add(eventQuiet), got.emit)
	d.Packet(9000, event(11, true, 10, 800), at(1600), got.emit)
	// Overlapping: 'A' without end, then 'D' at a new timestamp.
	d.Packet(20000, event(12, false, 10, 160), at(2000), got.emit)
	d.Packet(20000, event(3, false, 10, 320), at(2020), got.emit) // another code in A's run: still A
	d.Packet(20480, event(15, true, 10, 480), at(2060), got.emit)
	// No keys: codes 16 (flash) and up, payloads shorter than an event.
	d.Packet(30000, event(16, true, 10, 160), at(3000), got.emit)
	d.Packet(30001, event(255, true, 10, 160), at(3000), got.emit)
	d.Packet(30002, []byte{1, 0x80, 0}, at(3000), got.emit)
	d.Packet(30003, nil, at(3000), got.emit)
	d.Flush(got.emit)
	if got.digits() != "5#AD" || got[1].Duration != 0.05 || got[2].Duration != 0.04 {
		t.Errorf("keys %q %+v, want 5#AD", got.digits(), got)
	}
	if d.Other != 2 || d.Malformed != 2 {
		t.Errorf("other %d, malformed %d; want 2 and 2", d.Other, d.Malformed)
	}
}

// keySink is a Writer that takes keys too, as a live session does.
type keySink struct {
	sink
	mu   sync.Mutex
	keys keyed
	got  chan struct{}
}

func (s *keySink) Key(_ context.Context, k ingest.Key) error {
	s.mu.Lock()
	s.keys = append(s.keys, k)
	s.mu.Unlock()
	s.got <- struct{}{}
	return nil
}

// TestReceiverEvents sends a call's RTP over UDP with telephone-events of
// its payload type (101), events of a type the SDP did not name (102),
// then, after a re-INVITE moved the events to 102, one of each, and a
// flood: the session gets one key per event of the call's type, in order
// and behind the audio before it, and the flood is cut to the call's
// bound.
func TestReceiverEvents(t *testing.T) {
	ports := testPorts(t)
	pair, err := ports.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Close()
	r, err := NewReceiver(ReceiverConfig{Codec: codec.PCMU}, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU}, Events: 101}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	s := &keySink{got: make(chan struct{}, 1000)}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, s) }()
	conn, err := net.DialUDP("udp", nil, pair.RTP.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	seq, ts := uint16(1), uint32(0)
	send := func(pt uint8, payload []byte, step uint32) {
		b, _ := (&pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: pt, SequenceNumber: seq, Timestamp: ts, SSRC: 7}, Payload: payload}).Marshal()
		conn.Write(b)
		seq++
		ts += step
	}
	audio := ramp(160)
	wait := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-s.got:
			case <-time.After(5 * time.Second):
				t.Fatalf("keys %q, waiting for %d more", s.keys.digits(), n)
			}
		}
	}
	for _, code := range []byte{4, 1, 10, 11} {
		send(0, audio, 160)
		evTS := ts
		// First an event of a payload type the call did not name (before
		// the key, so it is handled before the key is waited for).
		b, _ := (&pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: 102, SequenceNumber: seq, Timestamp: evTS + 1, SSRC: 7}, Payload: event(9, true, 10, 160)}).Marshal()
		conn.Write(b)
		seq++
		for i, end := range []bool{false, false, true, true, true} {
			b, _ := (&pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: 101, SequenceNumber: seq, Timestamp: evTS, SSRC: 7}, Payload: event(code, end, 10, uint16(160*(i+1)))}).Marshal()
			conn.Write(b)
			seq++
		}
		wait(1)
	}
	if s.keys.digits() != "41*#" {
		t.Fatalf("keys %q, want 41*#", s.keys.digits())
	}
	// A re-INVITE moves the events to payload type 102: 101 is no longer
	// one.
	r.UpdateEvents([]uint8{102})
	r.Update(nil, false)
	for _, pt := range []uint8{101, 102} {
		b, _ := (&pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: pt, SequenceNumber: seq, Timestamp: ts + uint32(pt), SSRC: 7}, Payload: event(pt-100, true, 10, 160)}).Marshal()
		conn.Write(b)
		seq++
	}
	wait(1)
	if s.keys.digits() != "41*#2" {
		t.Fatalf("keys %q after the re-INVITE, want 41*#2", s.keys.digits())
	}
	// A flood: 5000 one-packet events in about 50 ms.
	pace := time.NewTicker(time.Millisecond)
	defer pace.Stop()
	for i := range 5000 {
		b, _ := (&pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: 102, SequenceNumber: seq, Timestamp: ts + uint32(i)*10, SSRC: 7}, Payload: event(byte(i%16), true, 10, 80)}).Marshal()
		conn.Write(b)
		seq++
		if i%100 == 99 {
			<-pace.C // else the socket buffer, not the bound, drops most
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	n := len(s.keys) - 5 // the five keys before took as many of the bound
	s.mu.Unlock()
	if n > ingest.KeyBurst+ingest.KeyRate*2 || n < ingest.KeyBurst-5 || r.KeysDropped() < 1000 {
		t.Errorf("flood of 5000: %d keys passed, %d dropped (bound %d + %d a second)", n, r.KeysDropped(), ingest.KeyBurst, ingest.KeyRate)
	}
}
