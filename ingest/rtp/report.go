package rtp

import (
	"time"

	"github.com/pion/rtcp"
)

// report sends an RTCP receiver report (RFC 3550 section 6.4.2) for each
// stream that has a source and a known RTCP address, and warns of loss and
// of timestamp jumps left unfilled since the last report.
func (r *Receiver) report(now time.Time) {
	for i, s := range r.streams {
		r.warnUnfilled(i, s)
		if s.recv == nil || s.RemoteRTCP == nil {
			continue
		}
		rr := rtcp.ReceiverReport{SSRC: r.ssrc + uint32(i), Reports: []rtcp.ReceptionReport{s.recv.block(now)}}
		b, err := rr.Marshal()
		if err == nil && s.srtp != nil {
			b, err = s.srtp.protectRTCP(b)
		}
		if err != nil {
			continue
		}
		conn := s.Pair.RTCP
		if s.Mux {
			conn = s.Pair.RTP
		}
		if _, err := conn.WriteToUDP(b, s.RemoteRTCP); err != nil {
			r.log.Debug("rtcp report not sent", "channel", i, "error", err)
		}
		js := s.jb.Stats()
		if lost := js.Lost - s.reported.Lost; lost > 0 && float64(lost) > 0.05*float64(js.Released-s.reported.Released+lost) {
			r.log.Warn("rtp loss over 5%", "channel", i, "lost", lost, "released", js.Released-s.reported.Released)
		}
		s.reported = js
	}
}

// warnUnfilled warns of the timestamp jumps of stream i left unfilled
// since the last warning (mixChan.fill), once per report at most.
func (r *Receiver) warnUnfilled(i int, s *streamState) {
	if s.mix != nil && s.mix.unfilled > s.unfilled {
		r.log.Warn("rtp timestamp jumps not filled", "channel", i, "samples", s.mix.unfilled-s.unfilled)
		s.unfilled = s.mix.unfilled
	}
}
