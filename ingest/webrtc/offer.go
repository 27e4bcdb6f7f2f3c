package webrtc

import (
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// doorCodecs are the codecs the WHIP door takes, in the order it names them.
var doorCodecs = []codec.Codec{codec.Opus, codec.PCMU, codec.PCMA}

// offerCodecs says which of the door's codecs an offer sends on some audio
// m-line.
type offerCodecs map[codec.Codec]bool

func (o offerCodecs) has(c codec.Codec) bool { return o[c] }

func (o offerCodecs) String() string {
	var s []string
	for _, c := range doorCodecs {
		if o[c] {
			s = append(s, c.String())
		}
	}
	if s == nil {
		return "none of opus, PCMU and PCMA"
	}
	return strings.Join(s, " and ")
}

// checkOffer parses an SDP offer (RFC 8866) and reports the door's codecs
// its sending audio m-lines carry, read through the codec table (static
// payload types 0 and 8, rtpmaps PCMU/8000, PCMA/8000, opus/48000/2). It
// wraps ErrBadOffer for an unparsable offer or one that sends no audio, and
// ErrNoCodec for audio in none of them.
func checkOffer(b []byte) (offerCodecs, error) {
	o := offerCodecs{}
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(b); err != nil {
		return o, badOffer("%v", err)
	}
	sessionDir := codec.Direction(sd.Attributes)
	audio := 0
	for _, m := range sd.MediaDescriptions {
		if m == nil || !strings.EqualFold(m.MediaName.Media, "audio") || m.MediaName.Port.Value == 0 {
			continue
		}
		dir := codec.Direction(m.Attributes)
		if dir == "" {
			dir = sessionDir
		}
		if dir == "recvonly" || dir == "inactive" {
			continue
		}
		audio++
		rtpmaps := map[int]string{}
		for _, a := range m.Attributes {
			if a.Key != "rtpmap" {
				continue
			}
			pt, enc, _ := strings.Cut(a.Value, " ")
			if n, err := strconv.Atoi(pt); err == nil && n >= 0 && n <= 127 {
				rtpmaps[n] = enc
			}
		}
		for _, f := range m.MediaName.Formats {
			n, err := strconv.Atoi(f)
			if err != nil || n < 0 || n > 127 {
				continue
			}
			enc, mapped := rtpmaps[n]
			if c := codec.Lookup(n, enc, mapped); c == codec.Opus || c.G711() {
				o[c] = true
			}
		}
	}
	if audio == 0 {
		return o, badOffer("no audio m-line that sends (WHIP offers send audio)")
	}
	if len(o) == 0 {
		return o, refuse(ErrNoCodec, "the offer's audio has none of opus, PCMU and PCMA")
	}
	return o, nil
}
