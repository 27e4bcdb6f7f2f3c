package rtp

import (
	"net"
	"net/netip"
	"strings"
	"time"

	pionrtp "github.com/pion/rtp"
)

// maxLatchPayload is the largest payload a packet may carry to latch a
// stream: 120 ms of an 8000-tick codec at one byte a tick (G.711, G.722).
const maxLatchPayload = 960

// A stream takes media from the addresses of its Allow list (the SDP's c=
// and the signalling peer). A caller behind NAT, a proxy or a multi-homed
// host sends from somewhere else; with latching on (symmetric RTP, as
// rtpengine and Asterisk's comedia do), the first source to send valid RTP
// within LatchWindow of Run's start becomes the stream's only source:
//
//   - valid RTP: version 2, a payload type the call negotiated for audio,
//     a payload of 1 to maxLatchPayload bytes;
//   - a stream latches once and only while it has taken no RTP from an
//     allowed address: a stream that is flowing is never taken over, and
//     a latched one never re-latches (the caller's source does not move
//     mid-call; re-latching would let a spoofed source steal the call);
//   - after latching, RTP is taken only from the latched address and port,
//     RTCP only from its address; everything else is dropped and counted,
//     except valid RTP from an allowed address: the expected source always
//     wins, so a source that latched before the caller's first packet
//     (stray or spoofed) loses the stream as soon as the caller sends, and
//     the stream, now flowing, never latches again.
//
// The state is one address per stream, whatever the number of sources.

// admit reports whether a datagram's source may feed s, latching s when it
// may. rtcp says the datagram is RTCP.
func (r *Receiver) admit(s *streamState, in input, rtcp bool) bool {
	from := in.from
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	if s.latched.IsValid() {
		if from == s.latched || (rtcp && from.Addr() == s.latched.Addr()) {
			return true
		}
		if !rtcp && allowed(s.Allow, from.Addr()) && r.latchable(s, in.buf) {
			r.log.Warn("rtp latch undone: the expected source sent", "channel", s.ch, "latched", s.latched.String(), "actual", from.String())
			s.latched = netip.AddrPort{}
			s.RemoteRTCP = s.sdpRTCP
			return true
		}
		r.foreign(s, in, rtcp)
		return false
	}
	if len(s.Allow) == 0 || allowed(s.Allow, from.Addr()) {
		return true
	}
	if !rtcp && r.cfg.Latch && !s.flowing && in.at.Sub(r.start) <= r.cfg.LatchWindow && r.latchable(s, in.buf) {
		expected := s.expected()
		s.sdpRTCP = s.RemoteRTCP
		s.latched = from
		s.stats.Latched = from
		if s.Mux {
			s.RemoteRTCP = net.UDPAddrFromAddrPort(from)
		} else if from.Port() < 65535 {
			s.RemoteRTCP = net.UDPAddrFromAddrPort(netip.AddrPortFrom(from.Addr(), from.Port()+1))
		}
		r.log.Warn("rtp source latched", "channel", s.ch, "expected", expected, "actual", from.String())
		return true
	}
	r.foreign(s, in, rtcp)
	return false
}

// latchable says whether b is RTP that may latch s.
func (r *Receiver) latchable(s *streamState, b []byte) bool {
	var p pionrtp.Packet
	if err := p.Unmarshal(b); err != nil || p.Version != 2 {
		return false
	}
	c, ok := s.Codecs[p.PayloadType]
	return ok && r.cfg.Codec.Compatible(c) && len(p.Payload) > 0 && len(p.Payload) <= maxLatchPayload
}

// foreign counts a datagram from a source s does not take; the first RTP
// one of a stream is logged.
func (r *Receiver) foreign(s *streamState, in input, rtcp bool) {
	if rtcp {
		return
	}
	s.stats.Foreign++
	if !s.warned {
		s.warned = true
		r.log.Warn("rtp from unexpected source dropped", "channel", s.ch, "expected", s.expected(), "actual", in.from.String(),
			"latching", r.cfg.Latch, "since_start_ms", in.at.Sub(r.start).Milliseconds())
	}
}

// expected names the sources s takes: its latched source, else its SDP
// address and the others of Allow.
func (s *streamState) expected() string {
	if s.latched.IsValid() {
		return s.latched.String()
	}
	var parts []string
	if s.Remote.IsValid() {
		parts = append(parts, s.Remote.String())
	}
	for _, a := range s.Allow {
		if !s.Remote.IsValid() || a.Unmap() != s.Remote.Addr().Unmap() {
			parts = append(parts, a.Unmap().String())
		}
	}
	return strings.Join(parts, ",")
}

// defaultLatchWindow is how long after Run's start a stream may latch.
const defaultLatchWindow = 10 * time.Second

// allowed reports whether a is one of list (IPv4-mapped forms alike).
func allowed(list []netip.Addr, a netip.Addr) bool {
	a = a.Unmap()
	for _, b := range list {
		if b.Unmap() == a {
			return true
		}
	}
	return false
}
