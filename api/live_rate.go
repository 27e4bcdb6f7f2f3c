package api

import "time"

// messageBucket is the WebSocket door's message-rate limit: a token bucket
// of rate frames a second holding up to burst, charged for each frame as
// it is read. Tokens accrue with time whether or not this connection is
// reading, so frames a client sent at its allowed rate but that queued up
// (in the network, or in the kernel while this connection was busy handing
// the previous frame to its session) find their tokens when they are read
// together, within the burst. The time last spent busy also lifts the cap
// by what would have refilled meanwhile (at most another burst), and
// tokens once accrued are never clipped, so a backlog built while the
// session held a frame drains without a cut. Tokens only ever come from
// elapsed time: over a connection a client sends at most burst + rate x
// elapsed frames.
type messageBucket struct {
	rate, burst float64
	tokens      float64   // available now
	credit      float64   // cap over burst: what refilled during the last busy spell
	last        time.Time // when tokens was computed
}

func newMessageBucket(perSecond int, now time.Time) *messageBucket {
	r := float64(perSecond)
	return &messageBucket{rate: r, burst: r, tokens: r, last: now}
}

// busy records d just spent away from the socket, handing a frame on.
func (b *messageBucket) busy(d time.Duration) {
	b.credit = min(b.burst, d.Seconds()*b.rate)
}

// take charges one frame read at now; false means the client is over its
// rate.
func (b *messageBucket) take(now time.Time) bool {
	b.tokens = max(b.tokens, min(b.burst+b.credit, b.tokens+now.Sub(b.last).Seconds()*b.rate))
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
