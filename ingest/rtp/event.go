package rtp

import (
	"encoding/binary"
	"time"

	"github.com/earshot-dev/earshot/ingest"
)

// RFC 4733 telephone-events. A key is sent as a run of packets of one
// RTP timestamp (the event's start), each carrying the duration so far,
// the last three with the end bit. EventDecoder turns such runs into one
// ingest.Key each: at the first end packet, or, when no end packet comes
// (lost), once the run has been quiet for eventQuiet or a packet of
// another timestamp starts a new event. Later packets of an ended run
// (the retransmitted end packets, or anything replayed with its
// timestamp) are dropped by timestamp.

// eventQuiet is how long a key without its end bit is waited for before
// it is taken as ended (senders repeat an event every 50 ms or so).
const eventQuiet = 500 * time.Millisecond

// endedKept is how many ended events' timestamps are remembered to drop
// their retransmissions.
const endedKept = 8

// EventDecoder decodes the RFC 4733 telephone-events of one RTP stream
// (one payload type) into keys. It is not safe for concurrent use: the
// stream's reader owns it.
type EventDecoder struct {
	rate   int // the event's RTP clock (telephone-event/8000: 8000)
	active bool
	ts     uint32 // the current event's timestamp
	digit  byte
	dur    uint16    // its longest duration seen, in clock ticks
	last   time.Time // its last packet
	ended  [endedKept]uint32
	nEnded int // ended events so far (ended holds the last endedKept)
	// Malformed counts packets too short to hold an event; Other those
	// of events that are not keys (codes 16 and up).
	Malformed, Other int
}

// NewEventDecoder returns a decoder for events of the RTP clock rate
// (the rtpmap's, e.g. 8000 or 48000); 0 takes 8000.
func NewEventDecoder(rate int) *EventDecoder {
	if rate <= 0 {
		rate = ClockRate
	}
	return &EventDecoder{rate: rate}
}

// Packet takes one telephone-event packet's timestamp and payload,
// arrived at now, and calls emit with each key it completes (at most two:
// a previous event left without its end, and this one).
func (d *EventDecoder) Packet(ts uint32, payload []byte, now time.Time, emit func(ingest.Key)) {
	if len(payload) < 4 {
		d.Malformed++
		return
	}
	code, end, dur := payload[0], payload[1]&0x80 != 0, binary.BigEndian.Uint16(payload[2:4])
	digit, ok := ingest.EventDigit(int(code))
	if !ok {
		d.Other++ // flash, fax and modem tones: no key
		return
	}
	if d.wasEnded(ts) {
		return // a retransmitted end, or a replay
	}
	if d.active && ts != d.ts {
		d.finish(emit) // overlapping: the new event ends the one before
	}
	if !d.active {
		d.active, d.ts, d.digit, d.dur = true, ts, digit, 0
	}
	// A packet of the same timestamp naming another event keeps the first
	// one's key (the sender's bug or a forgery): never two keys of one run.
	d.dur = max(d.dur, dur)
	d.last = now
	if end {
		d.finish(emit)
	}
}

// Tick ends the current event when it has been quiet for eventQuiet.
func (d *EventDecoder) Tick(now time.Time, emit func(ingest.Key)) {
	if d.active && now.Sub(d.last) >= eventQuiet {
		d.finish(emit)
	}
}

// Flush ends the current event (the call's end).
func (d *EventDecoder) Flush(emit func(ingest.Key)) {
	if d.active {
		d.finish(emit)
	}
}

func (d *EventDecoder) finish(emit func(ingest.Key)) {
	d.active = false
	d.ended[d.nEnded%endedKept] = d.ts
	d.nEnded++
	emit(ingest.Key{Digit: d.digit, Duration: float64(d.dur) / float64(d.rate), Source: ingest.KeyRFC4733})
}

func (d *EventDecoder) wasEnded(ts uint32) bool {
	for i := range min(d.nEnded, endedKept) {
		if d.ended[i] == ts {
			return true
		}
	}
	return false
}

// chunk is what a Receiver's writer goroutine takes: audio, or a key
// queued behind the audio that came before it.
type chunk struct {
	audio []byte
	lost  []byte // audio's loss marks (mixer.take), nil when none
	key   *ingest.Key
}

// queueKey hands a decoded key to the writer goroutine, behind the audio
// mixed so far (send flushes the mixer's whole frames first), unless the
// call's bound on keys refuses it: a flood is counted and logged once.
func (r *Receiver) queueKey(out chan<- chunk, m *mixer, send func(b, lost []byte), k ingest.Key) {
	if !r.keys.Admit(r.now, r.log) {
		return
	}
	send(m.take())
	select {
	case out <- chunk{key: &k}:
	default: // the session is maxQueued ticks behind: the key goes as the audio does
		r.keysLost.Add(1)
	}
}

// UpdateEvents applies a re-INVITE's telephone-event payload types, one a
// stream (0: none); Run takes them with the next Update's.
func (r *Receiver) UpdateEvents(events []uint8) {
	r.mu.Lock()
	r.events = events
	r.mu.Unlock()
	r.upd.Store(true)
}

// takeEvents applies UpdateEvents in Run's goroutine, r.mu held; a stream
// whose type changed keeps its decoder (an event in progress ends as ever).
func (r *Receiver) takeEvents() {
	for i, pt := range r.events {
		if i >= len(r.streams) {
			break
		}
		s := r.streams[i]
		s.Events = pt
		if pt != 0 && s.ev == nil {
			s.ev = NewEventDecoder(ClockRate)
		}
	}
	r.events = nil
}

// KeysDropped is the call's keys its bound refused (floods), and those
// lost because the session was maxQueued ticks behind. The bound may be
// shared with the door's other sources (ReceiverConfig.Keys): its count
// is theirs too.
func (r *Receiver) KeysDropped() int { return r.keys.Dropped() + int(r.keysLost.Load()) }

// KeysLost is the keys lost because the session was maxQueued ticks
// behind (the audio around them was lost too: StreamStats.Overflow).
func (r *Receiver) KeysLost() int { return int(r.keysLost.Load()) }
