package sip

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/ingest/codec"
	"github.com/earshot-dev/earshot/ingest/rtp"
)

// maxStreams is how many audio streams one call may carry (SIPREC's
// caller and callee); further audio m= lines are declined with port 0.
const maxStreams = 2

// offer is what an SDP offer (RFC 3264 section 5) asks of the door.
type offer struct {
	media   []*sdp.MediaDescription // every m= line, answered in order
	streams []offerStream           // accepted audio lines: channel i
}

// offerStream is one accepted audio m= line.
type offerStream struct {
	index  int                   // m= line number
	pt     uint8                 // chosen payload type
	codec  codec.Codec           // its codec
	codecs map[uint8]codec.Codec // every offered type the call's session can take
	tePT   int                   // telephone-event type, -1 if none
	teFmtp string                // its fmtp, echoed
	rtp    netip.AddrPort        // where the peer sends from (c= and port)
	rtcp   netip.AddrPort        // where its RTCP goes (a=rtcp or port+1)
	mux    bool                  // a=rtcp-mux
	dir    string                // sendrecv, sendonly, recvonly, inactive
	label  string                // a=label (SIPREC stream label)
	protos []string              // RTP/AVP, RTP/AVPF, RTP/SAVP, RTP/SAVPF or UDP/TLS/RTP/SAVP(F)
	secure bool                  // RTP/SAVP, RTP/SAVPF or DTLS-SRTP: SRTP is required
	// dtls is a DTLS-SRTP line's setup (dtls.go), nil for others;
	// dtlsErr why a DTLS-SRTP line cannot be taken.
	dtls    *dtlsOffer
	dtlsErr error
	// crypto is the offer's first usable a=crypto (sdes.go), nil for plain
	// RTP; offersKeys says it had any, cryptoErrs why those before it (or
	// all) are not usable.
	crypto     *sdesCrypto
	offersKeys bool
	cryptoErrs []error
	order      []uint8 // offered types earshot takes, in offer order
}

// hold reports whether the peer will send no audio on this stream.
// events is the stream's telephone-event payload type as rtp.Stream.Events
// takes it: 0 when none (or not a dynamic RTP type).
func (s offerStream) events() uint8 {
	if s.tePT > 0 && s.tePT < 128 {
		return uint8(s.tePT)
	}
	return 0
}

func (s offerStream) hold() bool {
	return s.dir == "inactive" || s.dir == "recvonly" || !s.rtp.Addr().IsValid() || s.rtp.Addr().IsUnspecified()
}

// parseOffer reads an SDP offer. G.722 is chosen when every audio line
// that carries a codec earshot takes offers it (one session, one format),
// else the first G.711 law of each line. prefer, when set (a re-INVITE), is
// the call's codec: it is kept if offered, and only codecs Compatible with
// it are taken (a G.711 call may switch laws; a G.722 call stays G.722). It
// returns ErrBadOffer or ErrNoCodec.
func parseOffer(body []byte, prefer *codec.Codec) (*offer, error) {
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(body); err != nil {
		return nil, fmt.Errorf("%w: sdp: %v", ErrBadOffer, err)
	}
	if len(sd.MediaDescriptions) > 16 {
		return nil, fmt.Errorf("%w: %d m= lines", ErrBadOffer, len(sd.MediaDescriptions))
	}
	o := &offer{media: sd.MediaDescriptions}
	sessAddr := connAddr(sd.ConnectionInformation)
	sessDir := codec.Direction(sd.Attributes)
	var lines []offerStream
	wide := true // every line with a codec offers G.722
	for i, m := range sd.MediaDescriptions {
		if len(lines) == maxStreams || m.MediaName.Media != "audio" || m.MediaName.Port.Value == 0 {
			continue
		}
		secure := false
		proto := strings.Join(m.MediaName.Protos, "/")
		switch {
		case proto == "RTP/AVP", proto == "RTP/AVPF":
		case proto == "RTP/SAVP", proto == "RTP/SAVPF", dtlsProto(proto):
			secure = true
		default:
			continue
		}
		port := m.MediaName.Port.Value
		if port < 1 || port > 65535 {
			continue
		}
		s, ok := offeredCodecs(m)
		if !ok {
			continue
		}
		wide = wide && s.offers(codec.G722)
		s.index, s.protos, s.secure = i, m.MediaName.Protos, secure
		if dtlsProto(proto) {
			s.dtls, s.dtlsErr = offeredDTLS(&sd, m)
		} else {
			s.crypto, s.offersKeys, s.cryptoErrs = offeredCrypto(m)
		}
		addr := sessAddr
		if a := connAddr(m.ConnectionInformation); a.IsValid() {
			addr = a
		}
		s.rtp = netip.AddrPortFrom(addr, uint16(port))
		s.rtcp = netip.AddrPortFrom(addr, uint16(min(port+1, 65535)))
		if v, ok := m.Attribute("rtcp"); ok {
			s.rtcp = rtcpAttr(v, s.rtcp)
		}
		_, s.mux = m.Attribute("rtcp-mux")
		s.dir = codec.Direction(m.Attributes)
		if s.dir == "" {
			s.dir = sessDir
		}
		if s.dir == "" {
			s.dir = "sendrecv"
		}
		s.label, _ = m.Attribute("label")
		lines = append(lines, s)
	}
	family := codec.PCMU
	switch {
	case prefer != nil:
		family = *prefer
	case wide && len(lines) > 0:
		family = codec.G722
	}
	for _, s := range lines {
		if s.choose(family, prefer) {
			o.streams = append(o.streams, s)
		}
	}
	if len(o.streams) == 0 {
		return nil, ErrNoCodec
	}
	return o, nil
}

// offeredCodecs reads the payload types of an m= line the SIP door takes
// (G.711 and G.722, in offer order in s.order) and notes telephone-event.
// It reports whether any was offered.
func offeredCodecs(m *sdp.MediaDescription) (offerStream, bool) {
	s := offerStream{tePT: -1, codecs: map[uint8]codec.Codec{}}
	rtpmaps := map[int]string{}
	fmtps := map[int]string{}
	for _, a := range m.Attributes {
		pt, rest, ok := strings.Cut(a.Value, " ")
		n, err := strconv.Atoi(pt)
		if !ok || err != nil || n < 0 || n > 127 {
			continue
		}
		switch a.Key {
		case "rtpmap":
			rtpmaps[n] = strings.TrimSpace(rest)
		case "fmtp":
			fmtps[n] = strings.TrimSpace(rest)
		}
	}
	for _, f := range m.MediaName.Formats {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > 127 {
			continue
		}
		enc, mapped := rtpmaps[n]
		if mapped && strings.EqualFold(enc, "telephone-event/8000") {
			if s.tePT < 0 {
				s.tePT, s.teFmtp = n, fmtps[n]
			}
			continue
		}
		c := codec.Lookup(n, enc, mapped)
		// The SIP door takes G.711 and G.722; Opus is the WebRTC door's.
		if c == codec.None || c == codec.Opus {
			continue
		}
		if _, dup := s.codecs[uint8(n)]; !dup {
			s.codecs[uint8(n)] = c
			s.order = append(s.order, uint8(n))
		}
	}
	return s, len(s.codecs) > 0
}

// offers reports whether the line offers c.
func (s *offerStream) offers(c codec.Codec) bool {
	for _, d := range s.codecs {
		if d == c {
			return true
		}
	}
	return false
}

// choose keeps the offered types of the call's codec family (G722, or the
// G.711 laws) and picks one: prefer when offered, else the first in offer
// order. It reports whether the line offers the family at all.
func (s *offerStream) choose(family codec.Codec, prefer *codec.Codec) bool {
	kept := map[uint8]codec.Codec{}
	found := false
	for _, pt := range s.order {
		c := s.codecs[pt]
		if !family.Compatible(c) {
			continue
		}
		kept[pt] = c
		if !found || prefer != nil && c == *prefer && s.codec != *prefer {
			s.pt, s.codec, found = pt, c, true
		}
	}
	s.codecs = kept
	return found
}

func connAddr(c *sdp.ConnectionInformation) netip.Addr {
	if c == nil || c.Address == nil {
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(c.Address.Address)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// rtcpAttr reads a=rtcp:port [IN IP4 addr] (RFC 3605).
func rtcpAttr(v string, def netip.AddrPort) netip.AddrPort {
	f := strings.Fields(v)
	if len(f) == 0 {
		return def
	}
	port, err := strconv.Atoi(f[0])
	if err != nil || port < 1 || port > 65535 {
		return def
	}
	addr := def.Addr()
	if len(f) == 4 {
		if a, err := netip.ParseAddr(f[3]); err == nil {
			addr = a.Unmap()
		}
	}
	return netip.AddrPortFrom(addr, uint16(port))
}

// answer builds the SDP answer: every accepted stream on its port with the
// chosen codec (plus telephone-event when offered), receive-only or inactive;
// every other m= line declined with port 0 (RFC 3264 section 6). keys[k]
// is the door's SRTP key of stream k, answered in an a=crypto of the
// offer's tag; nil (or a short keys) answers it plain. A DTLS-SRTP stream
// is answered with dtlsID's fingerprint (dtls.go).
func (o *offer) answer(ip netip.Addr, ports []int, keys []*rtp.SRTPKey, dtlsID *dtlsIdentity, sessID, version uint64) ([]byte, error) {
	addrType := "IP4"
	if ip.Is6() && !ip.Is4In6() {
		addrType = "IP6"
	}
	conn := &sdp.ConnectionInformation{NetworkType: "IN", AddressType: addrType, Address: &sdp.Address{Address: ip.Unmap().String()}}
	sd := &sdp.SessionDescription{
		Origin: sdp.Origin{Username: "earshot", SessionID: sessID, SessionVersion: version,
			NetworkType: "IN", AddressType: addrType, UnicastAddress: ip.Unmap().String()},
		SessionName:           "earshot",
		ConnectionInformation: conn,
		TimeDescriptions:      []sdp.TimeDescription{{}},
	}
	k := 0
	for i, m := range o.media {
		if k < len(o.streams) && o.streams[k].index == i {
			s := o.streams[k]
			md := &sdp.MediaDescription{MediaName: sdp.MediaName{Media: "audio", Port: sdp.RangedPort{Value: ports[k]},
				Protos: s.protos, Formats: []string{strconv.Itoa(int(s.pt))}}}
			md.Attributes = append(md.Attributes, sdp.NewAttribute("rtpmap", fmt.Sprintf("%d %s", s.pt, s.codec.RTPMap())))
			if s.tePT >= 0 {
				md.MediaName.Formats = append(md.MediaName.Formats, strconv.Itoa(s.tePT))
				md.Attributes = append(md.Attributes, sdp.NewAttribute("rtpmap", fmt.Sprintf("%d telephone-event/8000", s.tePT)))
				if s.teFmtp != "" {
					md.Attributes = append(md.Attributes, sdp.NewAttribute("fmtp", fmt.Sprintf("%d %s", s.tePT, s.teFmtp)))
				}
			}
			md.Attributes = append(md.Attributes, sdp.NewAttribute("ptime", "20"))
			if s.mux {
				md.Attributes = append(md.Attributes, sdp.NewPropertyAttribute("rtcp-mux"))
			}
			if k < len(keys) && keys[k] != nil && s.crypto != nil {
				md.Attributes = append(md.Attributes, cryptoAttr(s.crypto, *keys[k]))
			}
			if s.dtls != nil && dtlsID != nil {
				md.Attributes = append(md.Attributes, s.dtls.answer(dtlsID.fingerprint)...)
			}
			if s.label != "" {
				md.Attributes = append(md.Attributes, sdp.NewAttribute("label", s.label))
			}
			dir := "recvonly"
			if s.hold() {
				dir = "inactive"
			}
			md.Attributes = append(md.Attributes, sdp.NewPropertyAttribute(dir))
			sd.MediaDescriptions = append(sd.MediaDescriptions, md)
			k++
			continue
		}
		formats := m.MediaName.Formats
		if len(formats) == 0 {
			formats = []string{"0"}
		}
		sd.MediaDescriptions = append(sd.MediaDescriptions, &sdp.MediaDescription{MediaName: sdp.MediaName{
			Media: m.MediaName.Media, Port: sdp.RangedPort{Value: 0}, Protos: m.MediaName.Protos, Formats: formats}})
	}
	return sd.Marshal()
}

// udpAddr converts for the rtp package.
func udpAddr(a netip.AddrPort) *net.UDPAddr {
	if !a.Addr().IsValid() || a.Addr().IsUnspecified() {
		return nil
	}
	return net.UDPAddrFromAddrPort(a)
}
