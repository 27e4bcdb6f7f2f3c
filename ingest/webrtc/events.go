package webrtc

import (
	"context"
	"time"

	"github.com/pion/rtp"

	"github.com/earshot-dev/earshot/ingest"
	earshotrtp "github.com/earshot-dev/earshot/ingest/rtp"
)

// events decodes one track's telephone-events (RFC 4733) into keys of the
// peer's session: one decoder per negotiated payload type, owned by the
// track's reader. Without a packet to drive it, a key whose end packet
// was lost is finished at the first packet after eventQuiet.
type events struct {
	p    *peer
	decs map[uint8]*earshotrtp.EventDecoder
	emit func(ingest.Key)
}

func (p *peer) newEvents(types map[uint8]int) *events {
	e := &events{p: p, decs: map[uint8]*earshotrtp.EventDecoder{}}
	for pt, rate := range types {
		e.decs[pt] = earshotrtp.NewEventDecoder(rate)
	}
	e.emit = p.key
	return e
}

// packet reports whether pkt is a telephone-event, and decodes it.
func (e *events) packet(pkt *rtp.Packet) bool {
	d, ok := e.decs[pkt.PayloadType]
	if ok {
		d.Packet(pkt.Timestamp, pkt.Payload, time.Now(), e.emit)
	}
	return ok
}

// tick finishes the keys whose end did not come.
func (e *events) tick() {
	now := time.Now()
	for _, d := range e.decs {
		d.Tick(now, e.emit)
	}
}

// flush finishes every key (the track ended).
func (e *events) flush() {
	for _, d := range e.decs {
		d.Flush(e.emit)
	}
}

// key hands a key to the session under the peer's bound.
func (p *peer) key(k ingest.Key) {
	if p.keys.Admit(time.Now(), p.log) {
		ingest.SendKey(context.Background(), p.sess, k, p.log)
	}
}
