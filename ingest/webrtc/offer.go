package webrtc

import (
	"fmt"
	"strings"

	"github.com/pion/sdp/v3"
)

// codec is one of the two G.711 laws the door negotiates.
type codec int

const (
	codecNone codec = iota
	codecPCMU       // G.711 µ-law, session encoding wav/ulaw, static payload type 0
	codecPCMA       // G.711 A-law, session encoding wav/alaw, static payload type 8
)

func (c codec) String() string {
	switch c {
	case codecPCMU:
		return "PCMU"
	case codecPCMA:
		return "PCMA"
	}
	return "none"
}

// silence is the law's encoding of a zero sample, written for RTP gaps.
func (c codec) silence() byte {
	if c == codecPCMA {
		return 0xD5
	}
	return 0xFF
}

// offerCodecs says which laws an offer sends on some audio m-line.
type offerCodecs struct {
	pcmu, pcma bool
}

func (o offerCodecs) has(c codec) bool {
	return c == codecPCMU && o.pcmu || c == codecPCMA && o.pcma
}

func (o offerCodecs) String() string {
	var s []string
	if o.pcmu {
		s = append(s, "PCMU")
	}
	if o.pcma {
		s = append(s, "PCMA")
	}
	if s == nil {
		return "neither PCMU nor PCMA"
	}
	return strings.Join(s, " and ")
}

// checkOffer parses an SDP offer (RFC 8866) and reports the G.711 laws its
// sending audio m-lines carry, by static payload type (RFC 3551 §6: 0 PCMU,
// 8 PCMA) or by an rtpmap naming PCMU/8000 or PCMA/8000. It wraps
// ErrBadOffer for an unparsable offer or one that sends no audio, and
// ErrNoG711 for audio without either law.
func checkOffer(b []byte) (offerCodecs, error) {
	var o offerCodecs
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(b); err != nil {
		return o, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	sessionDir := direction(sd.Attributes)
	audio := 0
	for _, m := range sd.MediaDescriptions {
		if m == nil || !strings.EqualFold(m.MediaName.Media, "audio") || m.MediaName.Port.Value == 0 {
			continue
		}
		dir := direction(m.Attributes)
		if dir == "" {
			dir = sessionDir
		}
		if dir == "recvonly" || dir == "inactive" {
			continue
		}
		audio++
		for _, f := range m.MediaName.Formats {
			switch f {
			case "0":
				o.pcmu = true
			case "8":
				o.pcma = true
			}
		}
		for _, a := range m.Attributes {
			if a.Key != "rtpmap" {
				continue
			}
			_, enc, _ := strings.Cut(a.Value, " ")
			name, rate, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(enc)), "/")
			if rate != "8000" && !strings.HasPrefix(rate, "8000/") {
				continue
			}
			switch name {
			case "PCMU":
				o.pcmu = true
			case "PCMA":
				o.pcma = true
			}
		}
	}
	if audio == 0 {
		return o, fmt.Errorf("%w: no audio m-line that sends (WHIP offers send audio)", ErrBadOffer)
	}
	if !o.pcmu && !o.pcma {
		return o, fmt.Errorf("%w: the offer's audio has neither PCMU nor PCMA; earshot takes only G.711 over WebRTC", ErrNoG711)
	}
	return o, nil
}

// direction is the direction attribute among attrs, "" when none.
func direction(attrs []sdp.Attribute) string {
	for _, a := range attrs {
		switch a.Key {
		case "sendrecv", "sendonly", "recvonly", "inactive":
			return a.Key
		}
	}
	return ""
}
