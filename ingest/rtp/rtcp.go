package rtp

import (
	"net"
	"time"

	"github.com/pion/rtcp"
)

// reception keeps the RFC 3550 section 6.4.1 / appendix A.3 and A.8
// statistics of one source for its receiver report block.
type reception struct {
	ssrc      uint32
	started   bool
	baseSeq   int64
	maxSeq    int64 // extended
	received  int64
	expPrior  int64
	recPrior  int64
	transit   int64
	jitter    float64 // in timestamp units
	lastSR    uint32  // middle 32 bits of the last SR's NTP time
	lastSRAt  time.Time
	clockRate int64
}

func newReception(ssrc uint32, clockRate int) *reception {
	return &reception{ssrc: ssrc, clockRate: int64(clockRate)}
}

// packet updates the counts for an RTP packet that arrived at now.
func (r *reception) packet(seq uint16, ts uint32, now time.Time) {
	if !r.started {
		r.started = true
		r.baseSeq = 1<<16 + int64(seq)
		r.maxSeq = r.baseSeq
		r.received = 1
		r.transit = now.UnixNano()*r.clockRate/1e9 - int64(ts)
		return
	}
	d := int64(int16(seq - uint16(r.maxSeq)))
	if d > 0 {
		r.maxSeq += d
	}
	r.received++
	arrival := now.UnixNano() * r.clockRate / 1e9
	transit := arrival - int64(ts)
	dt := transit - r.transit
	r.transit = transit
	if dt < 0 {
		dt = -dt
	}
	r.jitter += (float64(dt) - r.jitter) / 16
}

// senderReport records an SR for the LSR/DLSR fields.
func (r *reception) senderReport(ntp uint64, now time.Time) {
	r.lastSR = uint32(ntp >> 16)
	r.lastSRAt = now
}

// block builds the report block and starts a new interval.
func (r *reception) block(now time.Time) rtcp.ReceptionReport {
	expected := r.maxSeq - r.baseSeq + 1
	lost := expected - r.received
	expInt := expected - r.expPrior
	recInt := r.received - r.recPrior
	r.expPrior, r.recPrior = expected, r.received
	var fraction uint8
	if lostInt := expInt - recInt; expInt > 0 && lostInt > 0 {
		fraction = uint8(lostInt << 8 / expInt)
	}
	lost = min(max(lost, -1<<23), 1<<23-1)
	var dlsr uint32
	if !r.lastSRAt.IsZero() {
		dlsr = uint32(now.Sub(r.lastSRAt).Seconds() * 65536)
	}
	return rtcp.ReceptionReport{
		SSRC:               r.ssrc,
		FractionLost:       fraction,
		TotalLost:          uint32(lost) & 0xFFFFFF,
		LastSequenceNumber: uint32(r.maxSeq - 1<<16),
		Jitter:             uint32(r.jitter),
		LastSenderReport:   r.lastSR,
		Delay:              dlsr,
	}
}

// lossRatio is the cumulative fraction of expected packets not received.
func (r *reception) lossRatio() float64 {
	expected := r.maxSeq - r.baseSeq + 1
	if expected <= 0 {
		return 0
	}
	return float64(max(expected-r.received, 0)) / float64(expected)
}

// handleRTCP takes a stream's RTCP: its source becomes where reports go
// (symmetric RTCP), and a sender report of the stream's SSRC is noted.
func (r *Receiver) handleRTCP(s *streamState, in input) {
	pkts, err := rtcp.Unmarshal(in.buf)
	if err != nil {
		return // baresip's APP packets before ACK and other noise
	}
	s.RemoteRTCP = net.UDPAddrFromAddrPort(in.from)
	for _, p := range pkts {
		if sr, ok := p.(*rtcp.SenderReport); ok && s.recv != nil && sr.SSRC == s.ssrc {
			s.recv.senderReport(sr.NTPTime, in.at)
		}
	}
}
